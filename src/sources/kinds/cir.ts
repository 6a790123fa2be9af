// `cir`: writes each new signal of a CIR store (src/cir) that matches the
// query {type?, domain?, text?, scope?}. The store is the project's
// .vigil/cir.db under the source root, or `db` (also under the root). New
// signals are found by polling from the newest one written (captures from
// other processes raise no event here), and at once on an in-process
// `cir.capture` event. The position (time and the ids written at that time)
// is stored, so a restart writes each signal once.
import { join } from 'node:path';
import { CirStore } from '../../cir/store.ts';
import type { CIRSignal } from '../../cir/types.ts';
import { onEvent } from '../../events/channel.ts';
import { confinedPath } from '../config.ts';
import type { SourceRun } from '../run.ts';

interface CirCursor {
  since: string;
  ids: string[];
}

const pollMs = 2000;
const batch = 500;

export function runCir(run: SourceRun): void {
  const { query, db } = run.settings<{ query: { type?: string; domain?: string; text?: string; scope?: string }; db?: string }>();
  const path = db === undefined ? join(run.root, '.vigil', 'cir.db') : confinedPath(run.root, db, 'source.db');
  const store = new CirStore(path, {});
  const text = query.text?.toLowerCase();
  if (run.cursor<CirCursor>() === undefined) run.setCursor({ since: new Date().toISOString(), ids: [] } satisfies CirCursor);

  const poll = () => {
    const cursor = run.cursor<CirCursor>() ?? { since: new Date(0).toISOString(), ids: [] };
    const found = store.query({ type: query.type, domain: query.domain, scope: query.scope, since: cursor.since, limit: batch }).reverse();
    const written = new Set(cursor.ids);
    const fresh = found.filter((s: CIRSignal) => !(s.created_at === cursor.since && written.has(s.id)));
    let next = cursor;
    for (const signal of fresh) {
      const at = signal.created_at ?? cursor.since;
      next = at === next.since ? { since: at, ids: [...next.ids, signal.id] } : { since: at, ids: [signal.id] };
      if (text !== undefined && !signal.body.toLowerCase().includes(text)) {
        run.setCursor(next);
        continue;
      }
      run.emit({ subject: signal.id, data: { ...signal }, cursor: next });
    }
    run.contact();
  };
  const stopListening = onEvent('cir.capture', () => {
    try {
      poll();
    } catch (error) {
      run.fail(error);
    }
  });
  run.signal.addEventListener(
    'abort',
    () => {
      stopListening();
      store.close();
    },
    { once: true },
  );
  run.every(pollMs, poll);
}
