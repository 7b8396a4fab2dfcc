import fc from 'fast-check';

/** The seed of a property run: `FC_SEED` replays a failure; otherwise a fresh one, printed when it fails. */
export function propertySeed(): number {
  const given = process.env.FC_SEED;
  return given !== undefined && given !== '' ? Number(given) : Math.floor(Math.random() * 2 ** 31);
}

/** Runs `fc.assert` and, on failure, puts the replay command in front of fast-check's report. */
export async function assertProperty<T>(name: string, property: fc.IRawProperty<T>, numRuns: number): Promise<void> {
  const seed = propertySeed();
  try {
    await fc.assert(property, { seed, numRuns, endOnFailure: false });
  } catch (error) {
    const message = `${name} failed; replay with FC_SEED=${seed}\n${(error as Error).message}`;
    console.error(message);
    throw new Error(message, { cause: error });
  }
}
