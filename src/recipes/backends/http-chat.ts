// Model providers reached over HTTP: OpenAI-compatible chat completions
// (`openai`, `ollama`) and the Anthropic messages API. One phase is one model
// call; the loop ends at the completion keyword or max_phases. Without a
// completion keyword one reply completes the step. The watchdog applies:
// the call is aborted at the deadline, after the inactivity limit, or on
// cancellation.
import { type AgentContext, type AgentResult, keywordHint, num } from './agent-context.ts';

interface Message {
  role: 'user' | 'assistant';
  content: string;
}

async function callModel(ctx: AgentContext, messages: Message[]): Promise<string> {
  const spec = ctx.task.backend;
  if (spec.kind !== 'http') throw new Error('http backend expected');
  const controller = new AbortController();
  const { watchdog } = ctx;
  let why = '';
  const timer = setInterval(() => {
    const now = Date.now();
    if (now >= watchdog.deadline) why = 'timeout';
    else if (now - watchdog.lastOutput() >= watchdog.inactivityMs) why = 'inactivity';
    else if (watchdog.signal.aborted) why = 'cancel';
    if (why) controller.abort();
  }, 100);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const schema = ctx.task.outputSchema ? (JSON.parse(ctx.task.outputSchema.text) as object) : null;
  let body: unknown;
  if (spec.api === 'anthropic') {
    if (spec.apiKey) headers['x-api-key'] = spec.apiKey;
    headers['anthropic-version'] = '2023-06-01';
    body = { model: spec.model, max_tokens: spec.maxTokens, messages, ...(schema ? { output_config: { format: { type: 'json_schema', schema } } } : {}) };
  } else {
    if (spec.apiKey) headers.authorization = `Bearer ${spec.apiKey}`;
    body = {
      model: spec.model,
      max_tokens: spec.maxTokens,
      messages,
      ...(schema ? { response_format: { type: 'json_schema', json_schema: { name: 'output', schema } } } : {}),
    };
  }
  try {
    const res = await fetch(spec.url, { method: 'POST', headers, body: JSON.stringify(body), signal: controller.signal });
    const text = await res.text();
    if (!res.ok) throw new Error(`${spec.provider}: ${spec.url} answered ${res.status}: ${text.slice(0, 300)}`);
    const json = JSON.parse(text) as {
      choices?: Array<{ message?: { content?: string } }>;
      content?: Array<{ type?: string; text?: string }>;
      usage?: { prompt_tokens?: number; completion_tokens?: number; input_tokens?: number; output_tokens?: number };
    };
    if (json.usage)
      ctx.usage({
        input_tokens: num(json.usage.prompt_tokens) + num(json.usage.input_tokens),
        output_tokens: num(json.usage.completion_tokens) + num(json.usage.output_tokens),
        usd: null,
        model: spec.model,
      });
    const reply =
      spec.api === 'anthropic'
        ? (json.content ?? []).filter((c) => c.type === 'text').map((c) => c.text ?? '').join('')
        : (json.choices?.[0]?.message?.content ?? null);
    if (reply === null) throw new Error(`${spec.provider}: the reply from ${spec.url} has no message content`);
    watchdog.touch();
    return reply;
  } catch (error) {
    if (why) throw Object.assign(new Error(`model call aborted (${why})`), { killedBy: why });
    throw error;
  } finally {
    clearInterval(timer);
  }
}

export async function runHttpChat(ctx: AgentContext): Promise<AgentResult> {
  const keyword = ctx.task.completionKeyword;
  const messages: Message[] = [{ role: 'user', content: ctx.task.prompt + keywordHint(keyword) }];
  for (let phase = 1; phase <= ctx.task.maxPhases; phase += 1) {
    ctx.phase(phase);
    let reply: string;
    try {
      reply = await callModel(ctx, messages);
    } catch (error) {
      const killedBy = (error as { killedBy?: 'timeout' | 'inactivity' | 'cancel' }).killedBy;
      return { ok: false, phases: phase, exitCode: null, reason: (error as Error).message, ...(killedBy ? { killedBy } : {}) };
    }
    ctx.write(`${reply}\n`);
    if (!keyword || reply.includes(keyword)) return { ok: true, phases: phase, exitCode: null };
    // A reply is the grain of usage here: the one that crossed a budget is the last.
    const stop = ctx.budgetStop();
    if (stop) return { ok: false, phases: phase, exitCode: null, reason: stop, killedBy: 'budget' };
    messages.push({ role: 'assistant', content: reply }, { role: 'user', content: `Continue.${keywordHint(keyword)}` });
  }
  return {
    ok: false,
    phases: ctx.task.maxPhases,
    exitCode: null,
    reason: `max_phases (${ctx.task.maxPhases}) reached without the completion keyword "${keyword}"`,
  };
}
