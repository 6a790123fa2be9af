// The prompt of a step bound for the local agent (local-agent.mjs runs each
// `run:` line of its prompt with /bin/sh), rendered line by line from the
// recipe's own text so that only the `run:` lines written in the recipe are
// run lines. In them, variables from outside and earlier steps' outputs are
// placed as data (shell-data.ts), never as code; a line that a variable or a
// step's output turns into a `run:` line is marked `(data) run: …`, which the
// agent prints and never runs. The commands are handed to the agent too
// (VIGIL_RUN_LINES: it runs no other line) and read by the guard when the
// step starts (step-start.ts).
import { closeSync, openSync, readSync } from 'node:fs';
import { fillStepRefs } from '../executor/step-refs.ts';
import type { StepView } from '../executor/step-outputs.ts';
import { placeInShell } from '../shell-data.ts';
import { substitute, substituteWith } from '../variables.ts';

/** The environment variable that lists, as JSON, the commands the local agent may run. */
export const RUN_LINES_ENV = 'VIGIL_RUN_LINES';
/** Text every local agent Vigil wrote carries in its header (older copies included). */
const LOCAL_AGENT_MARK = 'A local agent for trying Vigil';
// As the agent reads a line: trimmed, then this.
const RUN = /^run:\s*(.+)$/;
const RUN_START = /^(\s*)(run:)/;

export interface AgentPrompt {
  text: string;
  /** The commands of the recipe's own `run:` lines, as the agent will read them. */
  commands: string[];
  /** Values that could not be placed as data; the step must not start. */
  problems: string[];
}

/**
 * Renders the prompt template (the recipe's text, variables not yet substituted). `view` given: the step is
 * starting and `${steps.…}` references are filled in; without it they are left as they are (the preflight).
 */
export function renderAgentPrompt(
  template: string,
  vars: Record<string, string>,
  isData: (name: string) => boolean,
  view?: (label: string) => StepView | undefined,
): AgentPrompt {
  const lines: string[] = [];
  const commands: string[] = [];
  const problems: string[] = [];
  for (const line of template.split('\n')) {
    const run = RUN.exec(line.trim());
    if (!run) {
      const text = substitute(line, vars).text;
      lines.push(...(view ? fillStepRefs(text, view) : text).split('\n').map(markData));
      continue;
    }
    const kept: string[] = [];
    const placed = placeInShell(
      (hole) => {
        const text = substituteWith(run[1]!, vars, (name, value) => (isData(name) ? hole(value, `variable ${name} (from outside)`) : value)).text;
        // Before the step starts, a reference stays as written (a plain word while the values are placed).
        return view
          ? fillStepRefs(text, view, (value, ref) => hole(value, ref))
          : fillStepRefs(text, () => undefined, (_v, ref) => `__vigil_ref_${kept.push(ref) - 1}__`);
      },
      { singleLine: true },
    );
    if ('error' in placed) {
      problems.push(`run: line "${line.trim()}": ${placed.error}`);
      lines.push(markData(line));
      continue;
    }
    const command = placed.text.replace(/__vigil_ref_(\d+)__/g, (_m, i: string) => kept[Number(i)]!);
    // A line break from any variable would make a second line the recipe did not write.
    if (/[\n\r]/.test(command)) {
      problems.push(`run: line "${line.trim()}": a variable in it holds a line break, and a run: line is one line`);
      lines.push(markData(line));
      continue;
    }
    lines.push(`${line.slice(0, line.indexOf('run:'))}run: ${command}`);
    commands.push(RUN.exec(`run: ${command}`.trim())?.[1] ?? command);
  }
  return { text: lines.join('\n'), commands, problems };
}

/** A `run:` line that did not come from the recipe: the agent reads it as a note. */
function markData(line: string): string {
  return RUN.test(line.trim()) ? line.replace(RUN_START, '$1(data) $2') : line;
}

const known = new Map<string, boolean>();

/** Whether a custom backend's program is Vigil's local agent (the starter's, wherever it was copied). */
export function isLocalAgentProgram(path: string): boolean {
  const cached = known.get(path);
  if (cached !== undefined) return cached;
  let head = '';
  try {
    const fd = openSync(path, 'r');
    try {
      const buffer = Buffer.alloc(4096);
      head = buffer.toString('utf8', 0, readSync(fd, buffer, 0, buffer.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    // not readable: not the local agent as far as we can tell
  }
  const is = head.includes(LOCAL_AGENT_MARK);
  known.set(path, is);
  return is;
}
