import { describe, expect, it } from 'vitest';
import { Listeners } from '../../src/events/listeners.ts';

interface DoorListener {
  opened: (id: string) => void;
  closed: (id: string, reason: Error) => void;
}

describe('typed listeners', () => {
  it('calls the listeners of one event with its arguments, in the order they came, until each is taken off', () => {
    const listeners = new Listeners<DoorListener>();
    const heard: string[] = [];
    const stopFirst = listeners.on('opened', (id) => void heard.push(`first ${id}`));
    const second = (id: string) => void heard.push(`second ${id}`);
    listeners.on('opened', second);
    listeners.on('closed', (id, reason) => void heard.push(`closed ${id}: ${reason.message}`));
    listeners.emit('opened', 'a');
    listeners.emit('closed', 'a', new Error('gone'));
    stopFirst();
    listeners.off('opened', second);
    listeners.emit('opened', 'b');
    expect(heard).toEqual(['first a', 'second a', 'closed a: gone']);
    expect(listeners.has('opened')).toBe(false);
    expect(listeners.has('closed')).toBe(true);
  });
});
