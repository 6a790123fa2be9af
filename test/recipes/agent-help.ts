// Reads the option list of a recorded `--help` text (commander for claude,
// clap for codex): each flag spelling and whether it takes a value
// (`<value>`), maybe takes one (`[value]`), or none.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './helpers.ts';

export type HelpArity = 'value' | 'optional' | 'none';

export function helpText(file: string): string {
  return readFileSync(join(repoRoot, 'test', 'fixtures', 'agent-help', file), 'utf8');
}

export function parseHelpFlags(text: string): Map<string, HelpArity> {
  const flags = new Map<string, HelpArity>();
  for (const line of text.split('\n')) {
    // An option line starts (after indentation) with a flag; descriptions never do.
    const m = /^\s{1,8}(-[A-Za-z0-9](?:,\s*--[\w-]+)*|--[\w-]+(?:,\s*--[\w-]+)*)(?:\s+([<[][^>\]]*[>\]](?:\.\.\.)?))?/.exec(line);
    if (!m) continue;
    const arity: HelpArity = m[2] === undefined ? 'none' : m[2].startsWith('<') ? 'value' : 'optional';
    for (const name of m[1]!.split(',').map((s) => s.trim())) flags.set(name, arity);
  }
  return flags;
}
