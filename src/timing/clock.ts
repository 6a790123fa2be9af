// What reads the time and arms timers: an option wherever time matters, so
// that tests drive it (actors/clock.ts has the system's; triggers/clock.ts a
// fake one that moves only when told).
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}
