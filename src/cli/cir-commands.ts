// `vigil cir capture|query|search|relate|patterns|contradictions|stats|ingest`:
// the CLI face of sdk.cir. Text by default, JSON with --json.
import type { CAC } from 'cac';
import type { CIRSignal } from '../cir/index.ts';
import { UsageError } from './options.ts';
import { defineCommand } from './command.ts';
import { printJson, readStdin, runSdkCommand, unknownAction } from './sdk-command.ts';
import { readBoundedText } from '../text/bounded-file.ts';

/** The most one ingest reads (all its signals are checked, then stored, at once). */
const maxIngestChars = 64 * 1024 * 1024;

const actions = ['capture', 'query', 'search', 'relate', 'patterns', 'contradictions', 'stats', 'ingest'];

type Flags = Record<string, unknown>;

const text = (v: unknown): string | undefined => (v === undefined ? undefined : String(Array.isArray(v) ? v.at(-1) : v));

function num(flag: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  const n = typeof v === 'number' ? v : Number(text(v));
  if (Number.isNaN(n)) throw new UsageError(`${flag} takes a number; got "${text(v)}"`);
  return n;
}

function showSignals(list: CIRSignal[]): void {
  if (list.length === 0) return void process.stdout.write('no signals\n');
  for (const s of list) {
    const body = s.body.replace(/\s+/g, ' ');
    const meta = [s.type, s.domain, s.confidence !== undefined ? `conf ${s.confidence}` : undefined, s.source].filter(Boolean).join(' · ');
    process.stdout.write(`${s.id}  ${s.created_at}  ${meta}\n    ${body.length > 200 ? `${body.slice(0, 197)}…` : body}\n`);
  }
}

export function registerCirCommands(cli: CAC): void {
  defineCommand(cli, 'cir <action> [...args]', `The CIR signal store (.vigil/cir.db): ${actions.join(', ')}`)
    .option('--global', 'Use ~/.vigil/cir.db instead of the project store')
    .option('--scope <scope>', 'Scope (default: $VIGIL_CIR_SCOPE, else "default")')
    .option('--type <type>', 'capture/query/search/patterns: signal type')
    .option('--domain <domain>', 'capture/query/search: domain')
    .option('--confidence <n>', 'capture: confidence from 0.0 to 1.0')
    .option('--source <source>', 'capture/query/ingest: where the signal came from')
    .option('--tag <tag>', 'capture: a tag (repeatable)')
    .option('--embed', 'capture/ingest: also store an embedding vector')
    .option('--since <when>', 'query: 30m, 24h, 7d, 2w or an ISO time')
    .option('--limit <n>', 'query/search: at most this many signals (default 20)')
    .option('--min-strength <n>', 'patterns: only patterns at least this strong (0..1)')
    .option('--json', 'Print the result as JSON')
    .example('vigil cir capture "tests pass on main" --type test.result --confidence 0.9')
    .example('vigil cir query --type test.result --since 24h --json')
    .example('vigil cir ingest signals.jsonl')
    .action((action: string, args: string[], flags: Flags) =>
      runSdkCommand(async () => {
        if (!actions.includes(action)) unknownAction('cir', action, actions);
        // Loaded when the command runs: the signal store is SQLite, FTS5 and embeddings.
        const [{ sdkContext }, { cirNamespace }, { MAX_BODY }] = await Promise.all([import('../workspace/context.ts'), import('../sdk/namespaces/cir.ts'), import('../cir/validate.ts')]);
        const cir = cirNamespace(sdkContext({ workspace: process.cwd() }), { global: flags.global === true });
        const scope = text(flags.scope);
        const common = { ...(scope !== undefined ? { scope } : {}) };
        const out = (value: unknown, human: () => void): void => (flags.json ? printJson(value) : human());
        const argText = args.map(String).join(' ');
        if (action === 'capture') {
          // No TEXT (cac drops a lone "-" before it reaches args): the signal is read from standard input.
          if (args.length === 0 && process.stdin.isTTY) process.stderr.write('signal text (end with Ctrl-D):\n');
          const body = args.length === 0 ? (await readStdin('body', MAX_BODY)).replace(/\n$/, '') : argText;
          const tags = flags.tag === undefined ? undefined : (Array.isArray(flags.tag) ? flags.tag : [flags.tag]).map(String);
          const r = await cir.capture(body, {
            ...common,
            type: text(flags.type),
            domain: text(flags.domain),
            confidence: num('--confidence', flags.confidence),
            source: text(flags.source),
            tags,
            embed: flags.embed === true ? true : undefined,
          });
          out(r, () => process.stdout.write(`${r.id}\n`));
        } else if (action === 'query') {
          const list = cir.query({ ...common, type: text(flags.type), domain: text(flags.domain), source: text(flags.source), since: text(flags.since), limit: num('--limit', flags.limit) });
          out(list, () => showSignals(list));
        } else if (action === 'search') {
          if (!argText) throw new UsageError('cir search: needs TEXT');
          const list = await cir.search(argText, { ...common, type: text(flags.type), domain: text(flags.domain), limit: num('--limit', flags.limit) });
          out(list, () => showSignals(list));
        } else if (action === 'relate') {
          if (args.length !== 3) throw new UsageError('cir relate: takes FROM_ID TO_ID KIND (supports, contradicts, derives, duplicates)');
          const r = cir.relate(String(args[0]), String(args[1]), String(args[2]));
          out(r, () => process.stdout.write(`${r.from} ${r.kind} ${r.to}\n`));
        } else if (action === 'patterns') {
          const list = cir.patterns({ ...common, type: text(flags.type), min_strength: num('--min-strength', flags.minStrength) });
          out(list, () => {
            if (list.length === 0) process.stdout.write('no patterns\n');
            for (const p of list) process.stdout.write(`${p.id}  strength ${p.strength}  ×${p.recurrence_count}  ${p.type}: ${p.body}\n`);
          });
        } else if (action === 'contradictions') {
          const list = cir.contradictions(common);
          out(list, () => {
            if (list.length === 0) process.stdout.write('no contradictions\n');
            for (const s of list) process.stdout.write(`${s.id}  ${s.type}: ${s.body}\n    contradicts ${s.contradicts.join(', ')}\n`);
          });
        } else if (action === 'stats') {
          const s = cir.stats(common);
          out(s, () => {
            for (const [k, v] of Object.entries(s)) process.stdout.write(`${k.padEnd(20)} ${v}\n`);
          });
        } else {
          const file = args[0] === undefined ? undefined : String(args[0]);
          let input: string;
          if (file === undefined) input = await readStdin('jsonl', maxIngestChars);
          else {
            try {
              input = readBoundedText(file, maxIngestChars * 4, `one ingest reads at most ${(maxIngestChars * 4) / 1024 / 1024} MB: split it`);
            } catch (error) {
              throw new UsageError(`cir ingest: cannot read ${file}: ${(error as Error).message}`);
            }
          }
          const r = await cir.ingest(input, { ...common, source: text(flags.source), embed: flags.embed === true ? true : undefined, ...(file ? { file } : {}) });
          out(r, () => process.stdout.write(`ingested ${r.ingested} signals\n`));
        }
      }),
    );
}
