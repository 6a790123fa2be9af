// Ratchets (sdk.ratchet, `vigil ratchet check|baseline`): counted metrics that may
// only go down. Config `.vigil/ratchet.json` {rules: [{name, pattern (regex
// counted in files) | glob (files counted), include?: [globs]}]}; baseline
// `.vigil/ratchet-baseline.json` {name: count}. A rule without a baseline
// is reported by `check` but never fails it. Paths stay inside the
// workspace (or the project, for the defaults): see workspace/confine.ts.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { SdkContext } from '../workspace/context.ts';
import { invalid, VigilError } from '../errors/vigil-error.ts';
import { globToRegExp } from '../paths/glob.ts';
import { parseJson } from '../json/parse-json.ts';
import { confined, parseFailure } from '../workspace/confine.ts';

export interface RatchetRule {
  name: string;
  pattern?: string;
  glob?: string;
  include?: string[];
}
export interface RatchetViolation {
  name: string;
  pattern: string;
  count: number;
  limit: number;
}
export interface RatchetResult {
  passed: boolean;
  violations: RatchetViolation[];
  counts: Record<string, number>;
}
export interface RatchetOptions {
  config?: string;
  source?: string;
}

const SKIP = new Set(['.git', 'node_modules', '.vigil']);
const MAX_FILE = 2 * 1024 * 1024;

function files(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (SKIP.has(e.name)) continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(relative(root, p));
    }
  };
  walk(root);
  return out;
}

function loadRules(file: string): RatchetRule[] {
  if (!existsSync(file)) throw new VigilError('RATCHET_CONFIG', `no ratchet config at ${file} ({"rules": [{"name", "pattern" | "glob", "include"?}]})`, { file });
  let doc: { rules?: unknown };
  try {
    doc = parseJson(readFileSync(file, 'utf8')) as typeof doc;
  } catch (error) {
    throw new VigilError('RATCHET_CONFIG', `${file}: ${parseFailure(error)}`, { file });
  }
  if (typeof doc !== 'object' || doc === null || !Array.isArray(doc.rules)) throw new VigilError('RATCHET_CONFIG', `${file}: "rules" must be a list`, { file });
  return doc.rules.map((r: RatchetRule, i: number) => {
    const where = `${file}: rules[${i}]`;
    if (!r || typeof r.name !== 'string' || !r.name) throw new VigilError('RATCHET_CONFIG', `${where}.name: required`, { file });
    if ((r.pattern === undefined) === (r.glob === undefined)) throw new VigilError('RATCHET_CONFIG', `${where}: needs exactly one of "pattern" or "glob"`, { file });
    if (r.pattern !== undefined) {
      try {
        new RegExp(r.pattern, 'g');
      } catch (error) {
        throw new VigilError('RATCHET_CONFIG', `${where}.pattern: ${(error as Error).message}`, { file });
      }
    }
    return r;
  });
}

function count(rule: RatchetRule, root: string, all: string[]): number {
  const include = (rule.include ?? []).map(globToRegExp);
  const inScope = include.length ? all.filter((f) => include.some((g) => g.test(f))) : all;
  if (rule.glob !== undefined) {
    const g = globToRegExp(rule.glob);
    return inScope.filter((f) => g.test(f)).length;
  }
  const re = new RegExp(rule.pattern!, 'g');
  let n = 0;
  for (const f of inScope) {
    const p = join(root, f);
    if (statSync(p).size > MAX_FILE) continue;
    n += readFileSync(p, 'utf8').match(re)?.length ?? 0;
  }
  return n;
}

function paths(ctx: SdkContext, o: RatchetOptions | null | undefined) {
  if (o !== undefined && o !== null && typeof o !== 'object') throw invalid('options', 'must be an object');
  // Paths a caller names stay in the workspace; the defaults are the project's own files.
  const config =
    o?.config === undefined ? confined(ctx.projectRoot, join('.vigil', 'ratchet.json'), 'config', 'the project') : confined(ctx.workspace, o.config, 'config');
  const source = o?.source === undefined ? confined(ctx.workspace, '.', 'source') : confined(ctx.workspace, o.source, 'source');
  if (!existsSync(source) || !statSync(source).isDirectory()) throw invalid('source', `${source} is not a directory`);
  return { config, source, baseline: confined(ctx.projectRoot, join('.vigil', 'ratchet-baseline.json'), 'baseline', 'the project') };
}

function measure(ctx: SdkContext, o?: RatchetOptions) {
  const p = paths(ctx, o);
  const rules = loadRules(p.config);
  const all = files(p.source);
  return { p, rules, counts: Object.fromEntries(rules.map((r) => [r.name, count(r, p.source, all)])) as Record<string, number> };
}

function readBaseline(file: string): Record<string, number> {
  if (!existsSync(file)) return {};
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return typeof doc === 'object' && doc !== null ? (doc as Record<string, number>) : {};
  } catch (error) {
    throw new VigilError('RATCHET_CONFIG', `${file}: ${parseFailure(error)}; record it again with "vigil ratchet baseline"`, { file });
  }
}

export function ratchetCheck(ctx: SdkContext, options?: RatchetOptions): RatchetResult {
  const { p, rules, counts } = measure(ctx, options);
  const baseline = readBaseline(p.baseline);
  const violations = rules
    .filter((r) => typeof baseline[r.name] === 'number' && counts[r.name]! > baseline[r.name]!)
    .map((r) => ({ name: r.name, pattern: r.pattern ?? r.glob!, count: counts[r.name]!, limit: baseline[r.name]! }));
  return { passed: violations.length === 0, violations, counts };
}

export function ratchetBaseline(ctx: SdkContext, options?: RatchetOptions): void {
  const { p, counts } = measure(ctx, options);
  writeFileSync(p.baseline, `${JSON.stringify(counts, null, 2)}\n`);
}
