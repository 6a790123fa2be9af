// Open event streams do not keep their subscription's actor in memory
// (thousands of streams would pin thousands of actors); each is told of every
// change to its subscription instead, and checks it again before delivering.

/** Told when its subscription may have changed (retired, re-keyed, reloaded). */
export interface SubscriptionWatcher {
  subscriptionChanged(): void;
}

export class SubscriptionWatchers {
  private readonly byId = new Map<string, Set<SubscriptionWatcher>>();

  add(id: string, watcher: SubscriptionWatcher): void {
    const watchers = this.byId.get(id);
    if (watchers) watchers.add(watcher);
    else this.byId.set(id, new Set([watcher]));
  }

  delete(id: string, watcher: SubscriptionWatcher): void {
    const watchers = this.byId.get(id);
    if (watchers?.delete(watcher) && watchers.size === 0) this.byId.delete(id);
  }

  changed(id: string): void {
    const watchers = this.byId.get(id);
    if (watchers) for (const watcher of watchers) watcher.subscriptionChanged();
  }
}
