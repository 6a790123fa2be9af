// Open contradictions (§9): a `contradiction` observation opens one; a
// `contradiction.resolved` closes the one it names, and every earlier one on
// its subject. Memory and the store change together.
import type { ObservationDraft } from '../protocol/observation.ts';
import { observationTypes } from '../protocol/vocabulary.ts';
import type { Store } from '../store/store.ts';
import type { Feed } from './feed.ts';

export function trackContradictions(store: Store, feed: Feed, seq: number, draft: ObservationDraft): void {
  if (draft.type === observationTypes.contradiction) {
    feed.openContradictions.set(seq, draft.subject);
    store.addContradiction(feed.key, seq, draft.subject);
    return;
  }
  if (draft.type !== observationTypes.contradictionResolved) return;
  const resolves = draft.data.resolves;
  if (typeof resolves === 'number' && feed.openContradictions.has(resolves)) {
    feed.openContradictions.delete(resolves);
    store.resolveContradiction(feed.key, resolves);
  }
  if (draft.subject === null) return;
  let closed = 0;
  for (const [openSeq, subject] of feed.openContradictions) {
    if (subject === draft.subject && openSeq < seq) {
      feed.openContradictions.delete(openSeq);
      closed++;
    }
  }
  if (closed > 0) store.resolveContradictionsOf(feed.key, draft.subject, seq);
}
