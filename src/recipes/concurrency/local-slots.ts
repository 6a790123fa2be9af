// The slots of a cap on one machine, without a server: a file per held slot
// (`<Vigil home>/concurrency/<pool>/slot-<k>.json`, naming the runner's pid)
// and a ticket per waiter (`wait-<time>-<pid>-<n>.json`), read and changed
// under one lock file per pool. A slot or ticket whose pid no longer runs (a
// runner killed with -9) is removed by the next one who looks, so its slot is
// free again at once. Waiters take free slots in the order of their tickets:
// arrival order across the runners of the machine.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withFileLock } from '../../file-lock/file-lock.ts';
import { processAlive } from '../../file-lock/process-alive.ts';
import { ensureVigilHome } from '../../home/home.ts';
import { sleep } from '../../timing/sleep.ts';
import { holderText, type SlotHolder, type SlotStore, type SlotWaiter, type TakeResult } from './slot-store.ts';

interface SlotFile extends SlotHolder {
  pid: number;
  token: string;
  since: string;
}

const POLL_MS = 100;
let tickets = 0;

function readSlotFile(path: string): SlotFile | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as SlotFile;
  } catch {
    return null; // removed meanwhile, or never whole (its writer died): treated as gone
  }
}

/** Written whole or not at all (a reader must never see a ticket half written and take it for a dead one). */
function writeTicket(dir: string, ticket: string, mine: SlotFile): void {
  const tmp = join(dir, `.${ticket}.tmp`);
  writeFileSync(tmp, JSON.stringify(mine), { mode: 0o600 });
  renameSync(tmp, join(dir, ticket));
}

export class LocalSlots implements SlotStore {
  readonly where: string;
  private readonly root: string;

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.root = join(ensureVigilHome(env), 'concurrency');
    this.where = `lock files in ${this.root}`;
  }

  async enter(pool: string, cap: number, who: SlotHolder): Promise<SlotWaiter> {
    const dir = join(this.root, pool);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    tickets += 1;
    const ticket = `wait-${String(Date.now()).padStart(15, '0')}-${String(process.pid).padStart(8, '0')}-${String(tickets).padStart(6, '0')}.json`;
    const mine: SlotFile = { ...who, pid: process.pid, token: randomBytes(8).toString('hex'), since: new Date().toISOString() };
    writeTicket(dir, ticket, mine);
    const lock = join(dir, '.lock');
    return {
      tryTake: async (): Promise<TakeResult> => withFileLock(lock, 'TIMEOUT', () => this.takeLocked(dir, cap, ticket, mine)),
      changed: async (signal) => {
        await sleep(POLL_MS, signal);
      },
      leave: async () => rmSync(join(dir, ticket), { force: true }),
    };
  }

  private takeLocked(dir: string, cap: number, ticket: string, mine: SlotFile): TakeResult {
    const held = new Map<number, SlotFile>();
    const waiting: string[] = [];
    for (const name of readdirSync(dir).sort()) {
      const slot = /^slot-(\d+)\.json$/.exec(name);
      if (!slot && !name.startsWith('wait-')) continue;
      const file = readSlotFile(join(dir, name));
      if (!file || !processAlive(file.pid)) {
        rmSync(join(dir, name), { force: true });
        continue;
      }
      if (slot) held.set(Number(slot[1]), file);
      else waiting.push(name);
    }
    // A ticket someone removed (it could not be read): this waiter is still here, so it goes back in line.
    if (!waiting.includes(ticket)) {
      writeTicket(dir, ticket, mine);
      waiting.push(ticket);
      waiting.sort();
    }
    const ahead = waiting.indexOf(ticket);
    const free = cap - held.size;
    const slot = Array.from({ length: cap }, (_, i) => i + 1).find((k) => !held.has(k));
    if (slot === undefined || ahead >= free) return { holders: [...held.values()].map(holderText), ahead };
    const path = join(dir, `slot-${slot}.json`);
    writeFileSync(path, JSON.stringify({ ...mine, since: new Date().toISOString() }), { mode: 0o600 });
    rmSync(join(dir, ticket), { force: true });
    return {
      grant: {
        slot,
        release: async () =>
          withFileLock(join(dir, '.lock'), 'TIMEOUT', () => {
            if (readSlotFile(path)?.token === mine.token) rmSync(path, { force: true });
          }),
      },
    };
  }

  async close(): Promise<void> {}
}
