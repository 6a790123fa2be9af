// When a lease run ends early because its servers went silent (silence-watch.ts), on a clock of the test's own.
import { expect, it } from 'vitest';
import { SilenceWatch, silentForMs } from '../../src/bench/silence-watch.ts';

it('is silent once requests fail without an answer for the whole window, counted from the last answer', () => {
  const watch = new SilenceWatch(0);
  expect(watch.silentSince(10, 0, 1000)).toBeUndefined();
  expect(watch.silentSince(10, 5, 2000)).toBeUndefined();
  expect(watch.silentSince(10, 40, 1000 + silentForMs - 1)).toBeUndefined();
  expect(watch.silentSince(10, 90, 1000 + silentForMs)).toBe(1000);
});

it('is not silent while answers come, however many requests fail beside them (a node of several killed)', () => {
  const watch = new SilenceWatch(0);
  for (let turn = 1; turn <= 80; turn++) expect(watch.silentSince(turn * 3, turn * 50, turn * 250)).toBeUndefined();
});

it('is not silent when nothing fails: clients holding long leases send nothing for a while', () => {
  const watch = new SilenceWatch(0);
  expect(watch.silentSince(10, 0, 500)).toBeUndefined();
  expect(watch.silentSince(10, 0, 60_000)).toBeUndefined();
});

it('an answer after failures starts the window again', () => {
  const watch = new SilenceWatch(0);
  watch.silentSince(10, 0, 1000);
  watch.silentSince(10, 20, 2500);
  watch.silentSince(11, 20, 3500);
  expect(watch.silentSince(11, 30, 3500 + silentForMs - 1)).toBeUndefined();
  expect(watch.silentSince(11, 31, 3500 + silentForMs)).toBe(3500);
});
