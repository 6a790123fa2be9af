// `vigil runs <id>`: a run and, for a composite run, its children and theirs,
// as an indented tree with status, times, usage and where the output is.
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { processAlive } from '../../file-lock/process-alive.ts';
import { loopLines, stepProgress } from '../loop/progress-text.ts';
import { type RunJson, readRunJson, runsDir, type StepRecord } from './run-record.ts';

function shown(run: RunJson): string {
  return run.status === 'running' && !processAlive(run.pid) ? 'interrupted' : run.status;
}

function took(started: string | null, ended: string | null): string {
  if (!started || !ended) return '';
  const s = (Date.parse(ended) - Date.parse(started)) / 1000;
  return s < 60 ? `${s.toFixed(1)}s` : `${Math.floor(s / 60)}m${Math.floor(s % 60)}s`;
}

function usage(run: RunJson): string {
  const u = run.usage;
  if (!u || (u.usd === 0 && u.input_tokens + u.output_tokens === 0)) return '';
  const carried = u.carried ? ` (${u.carried.input_tokens + u.carried.output_tokens} tokens, $${u.carried.usd} of them carried from run ${u.carried.run})` : '';
  return `  usage ${u.input_tokens + u.output_tokens} tokens, ${dollars(u)}${carried}`;
}

/** Dollars, or what is known of them when some usage had no price. */
function dollars(u: { usd: number; usd_unknown?: true }): string {
  return u.usd_unknown ? `${u.usd > 0 ? `$${u.usd} + ` : ''}usd unknown` : `$${u.usd}`;
}

/** A running step's phase so far (its `phases` is counted when it ends), else how many it ran. */
function phasesText(s: StepRecord): string {
  return s.status === 'running' ? `phase ${s.phase}` : `phases ${s.phases}`;
}

export function renderRunTree(projectRoot: string, runId: string, cwd: string): string {
  const lines: string[] = [];
  const visit = (id: string, depth: number, role: string | null): void => {
    const dir = join(runsDir(projectRoot), id);
    if (!existsSync(join(dir, 'run.json'))) {
      lines.push(`${'  '.repeat(depth)}${role ? `${role}: ` : ''}run ${id} (record missing)`);
      return;
    }
    const run = readRunJson(dir);
    const pad = '  '.repeat(depth);
    lines.push(
      `${pad}${role ? `${role}: ` : ''}run ${run.id}  ${run.type} "${run.recipe}"  ${shown(run)}  started ${run.started}${run.ended ? `  took ${took(run.started, run.ended)}` : ''}${usage(run)}${run.reason ? `  (${run.reason})` : ''}`,
    );
    if (run.results) lines.push(`${pad}  results: ${run.results}`);
    for (const s of run.steps) {
      const out = s.output_file ? `  output ${relative(cwd, join(dir, s.output_file))}` : '';
      const cost = s.usage && (s.usage.usd || s.usage.input_tokens) ? `  ${dollars(s.usage)}` : '';
      const time = s.started && s.ended ? `  took ${took(s.started, s.ended)}` : '';
      const progress = stepProgress(s, Date.now(), shown(run) === 'running');
      const slotWait = s.slot_wait && shown(run) === 'running' ? s.slot_wait : null;
      lines.push(
        `${pad}  ${s.label.padEnd(20)} ${(slotWait ? 'waiting' : s.status).padEnd(13)} ${phasesText(s)}${progress ? `  ${progress}` : ''}${time}${cost}${(slotWait ?? s.reason) ? `  ${slotWait ?? s.reason}` : ''}${out}`,
      );
      for (const l of loopLines(s)) lines.push(`${pad}    ${l}`);
    }
    for (const c of run.children ?? []) {
      if (c.run_id) visit(c.run_id, depth + 1, c.role);
      else lines.push(`${pad}  ${c.role}: ${c.name}  ${c.status}${c.reason ? `  (${c.reason})` : ''}`);
      if (c.result && Object.keys(c.result).length > 0) lines.push(`${pad}    ${Object.entries(c.result).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join('  ')}`);
    }
    if (depth === 0 && run.output_file && existsSync(join(dir, run.output_file))) lines.push(`output ${relative(cwd, join(dir, run.output_file))}`);
  };
  visit(runId, 0, null);
  return `${lines.join('\n')}\n`;
}
