// Open event streams do not keep their subscription's actor in memory
// (thousands of streams would pin thousands of actors); each is told of every
// change to its subscription instead, and checks it again before delivering.

/** Told when its subscription may have changed (retired, re-keyed, reloaded). */
export interface SubscriptionWatcher {
  subscriptionChanged(): void;
}

export class SubscriptionWatchers {
  // Almost every subscription has one open stream: it is kept as itself, and a Set (about
  // 150 bytes more, per stream) is made only for a second.
  private readonly byId = new Map<string, SubscriptionWatcher | Set<SubscriptionWatcher>>();

  add(id: string, watcher: SubscriptionWatcher): void {
    const current = this.byId.get(id);
    if (current === undefined) this.byId.set(id, watcher);
    else if (current instanceof Set) current.add(watcher);
    else if (current !== watcher) this.byId.set(id, new Set([current, watcher]));
  }

  delete(id: string, watcher: SubscriptionWatcher): void {
    const current = this.byId.get(id);
    if (current === watcher) this.byId.delete(id);
    else if (current instanceof Set && current.delete(watcher) && current.size === 0) this.byId.delete(id);
  }

  changed(id: string): void {
    const current = this.byId.get(id);
    if (current instanceof Set) for (const watcher of current) watcher.subscriptionChanged();
    else current?.subscriptionChanged();
  }
}
