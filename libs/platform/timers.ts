/** The longest delay `setTimeout` honours: beyond it Node fires after 1 ms (a TimeoutOverflowWarning). */
export const MAX_TIMER_MS = 2_147_483_647;

/** A wall-clock deadline armed with `endAt`; `cancel` stops it. */
export interface Deadline {
  cancel(): void;
}

/**
 * Runs `end` at `atMs` (wall clock), however far ahead: a deadline past `MAX_TIMER_MS` waits in steps
 * rather than firing at once. The timer never keeps the process alive.
 */
export function endAt(atMs: number, end: () => void): Deadline {
  let timer: NodeJS.Timeout | undefined;
  const wait = (): void => {
    const left = atMs - Date.now();
    if (left <= 0) {
      end();
      return;
    }
    timer = setTimeout(wait, Math.min(left, MAX_TIMER_MS)).unref();
  };
  wait();
  return { cancel: () => clearTimeout(timer) };
}
