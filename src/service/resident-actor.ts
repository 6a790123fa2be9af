// The resident actor a queued write reads its row from. A write queued for a
// lease or subscription that a batch refused since made finds none: the
// monitor's reload took it away (a lost race), and the write fails saying so.

export function residentActor<T>(actors: { get(key: string): T | undefined }, kind: 'lease' | 'subscription', key: string): T {
  const actor = actors.get(key);
  if (!actor) throw new Error(`${kind} ${key} is neither in memory nor stored: its monitor was reloaded after this write was queued`);
  return actor;
}
