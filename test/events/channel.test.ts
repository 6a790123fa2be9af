import { describe, expect, it } from 'vitest';
import { emitEvent, onEvent, settleEvents, takeListenerFailures } from '../../src/events/channel.ts';

describe('event channel', () => {
  it('delivers to type listeners and wildcard listeners, and stops after unsubscribe', () => {
    const seen: string[] = [];
    const offType = onEvent('cir.capture', (e) => void seen.push(`type:${e.data.id}`));
    const offAll = onEvent('*', (e) => void seen.push(`all:${e.type}`));
    emitEvent('cir.capture', { id: 's1' });
    emitEvent('usage.limit_reached', { run: 'r1' });
    offType();
    offAll();
    emitEvent('cir.capture', { id: 's2' });
    expect(seen).toEqual(['type:s1', 'all:cir.capture', 'all:usage.limit_reached']);
  });

  it('keeps the producer safe from throwing listeners and waits for async ones', async () => {
    let finished = false;
    const offThrow = onEvent('training.ingested', () => {
      throw new Error('listener broke');
    });
    const offAsync = onEvent('training.ingested', async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      finished = true;
    });
    expect(() => emitEvent('training.ingested', { count: 3 })).not.toThrow();
    await settleEvents();
    expect(finished).toBe(true);
    expect(takeListenerFailures().map((f) => (f.error as Error).message)).toEqual(['listener broke']);
    offThrow();
    offAsync();
  });
});
