// A custom agent program (`providers.<name>.command`): run once per phase
// with the step's args (prompt-file arguments replaced by the rendered
// prompt's path) and the prompt on stdin, until it prints the completion
// keyword or max_phases is reached. Without a completion keyword one
// successful phase completes the step. The step's model, effort,
// permission_mode and completion keyword reach it as VIGIL_* variables.
import { StringDecoder } from 'node:string_decoder';
import { type AgentContext, type AgentResult, num, processFailure } from './agent-context.ts';
import { StreamLines } from './stream-lines.ts';

const USAGE_LINE = /^USAGE (\{.*\})\s*$/;

/**
 * A custom agent reports usage by printing lines `USAGE {"input_tokens":…,"output_tokens":…,"usd":…}`,
 * read as they come so that a budget stops it mid-phase. No such line is long: longer ones are not held.
 */
function usageReader(ctx: AgentContext, model: string | null): StreamLines {
  return new StreamLines((line) => reportUsageLine(ctx, line, model), { maxLineChars: 64 * 1024 });
}

/** Whether `keyword` has appeared in a stream, holding no more of it than the keyword's length. */
class KeywordWatch {
  private readonly decoder = new StringDecoder('utf8');
  private tail = '';
  seen = false;
  constructor(private readonly keyword: string) {}

  push(chunk: Buffer): void {
    if (this.seen) return;
    const text = this.tail + this.decoder.write(chunk);
    this.seen = text.includes(this.keyword);
    this.tail = text.slice(Math.max(0, text.length - (this.keyword.length - 1)));
  }
}

function reportUsageLine(ctx: AgentContext, line: string, model: string | null): void {
  const m = USAGE_LINE.exec(line);
  if (m) {
    try {
      const u = JSON.parse(m[1]!) as Record<string, unknown>;
      ctx.usage({ input_tokens: num(u.input_tokens), output_tokens: num(u.output_tokens), usd: typeof u.usd === 'number' ? num(u.usd) : null, model: typeof u.model === 'string' ? u.model : model });
    } catch {
      // not JSON after all: ordinary output
    }
  }
}

export async function runCustom(ctx: AgentContext): Promise<AgentResult> {
  const spec = ctx.task.backend;
  if (spec.kind !== 'custom') throw new Error('runCustom needs a custom backend');
  const keyword = ctx.task.completionKeyword;
  let last: number | null = null;
  for (let phase = 1; phase <= ctx.task.maxPhases; phase += 1) {
    ctx.phase(phase);
    const said = keyword ? new KeywordWatch(keyword) : null;
    const readUsage = usageReader(ctx, spec.model ?? null);
    const r = await ctx.spawn({
      command: spec.command,
      args: spec.args,
      stdin: ctx.task.prompt,
      env: {
        VIGIL_PHASE: String(phase),
        VIGIL_MAX_PHASES: String(ctx.task.maxPhases),
        ...(keyword ? { VIGIL_COMPLETION_KEYWORD: keyword } : {}),
        ...(spec.model ? { VIGIL_MODEL: spec.model } : {}),
        ...(spec.effort ? { VIGIL_EFFORT: spec.effort } : {}),
        ...(spec.permissionMode ? { VIGIL_PERMISSION_MODE: spec.permissionMode } : {}),
        ...(ctx.task.outputSchema ? { VIGIL_OUTPUT_SCHEMA: ctx.task.outputSchema.file } : {}),
      },
      onStdout: (chunk) => {
        said?.push(chunk);
        readUsage.push(chunk);
      },
    });
    readUsage.end();
    const failure = processFailure(r, `${spec.provider} (phase ${phase})`, phase);
    if (failure) return failure;
    last = r.exitCode;
    if (!said || said.seen) return { ok: true, phases: phase, exitCode: last };
    const stop = ctx.budgetStop();
    if (stop) return { ok: false, phases: phase, exitCode: last, reason: stop, killedBy: 'budget' };
  }
  return {
    ok: false,
    phases: ctx.task.maxPhases,
    exitCode: last,
    reason: `max_phases (${ctx.task.maxPhases}) reached without the completion keyword "${keyword}"`,
  };
}
