/** Reading one environment variable as a typed value; a bad value is a `SettingsError` naming it. */

/** A start-up configuration error; its message is the single line printed before exiting. */
export class SettingsError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid setting ${variable}: ${problem}`);
    this.name = 'SettingsError';
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

export function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

export function port(env: Env, name: string, fallback: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 0 || value > 65535) {
    throw new SettingsError(name, `must be an integer from 0 to 65535 (got "${raw}")`);
  }
  return value;
}

export function positiveInt(env: Env, name: string, fallback: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) {
    throw new SettingsError(name, `must be a positive integer (got "${raw}")`);
  }
  return Number(raw);
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new SettingsError(name, `must be true or false (got "${env[name]}")`);
}

export function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new SettingsError(name, 'must be a URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new SettingsError(name, `must use ${protocols.join(' or ')} (got "${parsed.protocol}")`);
  }
  return raw;
}
