// A fake model server on 127.0.0.1 (port 0) speaking the OpenAI chat
// completions API (POST /v1/chat/completions) and the Anthropic messages
// API (POST /v1/messages). Replies follow directives in the first user
// message: SAY=<word> is said from call DONE_AT=<n> on (default 1),
// SLEEP_MS delays each reply, HANG never replies, USAGE=<input>,<output> reports that usage with each reply.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: { model?: string; messages?: Array<{ role: string; content: string }>; max_tokens?: number; response_format?: unknown; output_config?: unknown };
}

export interface FakeModelServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

function directive(text: string, name: string): string | undefined {
  return new RegExp(`\\b${name}=(\\S+)`).exec(text)?.[1];
}

export async function startFakeModelServer(): Promise<FakeModelServer> {
  const requests: RecordedRequest[] = [];
  const hanging = new Set<import('node:http').ServerResponse>();
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', async () => {
      const body = JSON.parse(raw || '{}') as RecordedRequest['body'];
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      const messages = body.messages ?? [];
      const first = messages.find((m) => m.role === 'user')?.content ?? '';
      const call = messages.filter((m) => m.role === 'assistant').length + 1;
      if (/\bHANG\b/.test(first)) {
        hanging.add(res);
        return;
      }
      await new Promise((r) => setTimeout(r, Number(directive(first, 'SLEEP_MS') ?? '0')));
      const say = directive(first, 'SAY');
      // In JSON mode (response_format, output_config) the reply is the JSON=<object> directive.
      const json = body.response_format || body.output_config ? directive(first, 'JSON') : undefined;
      const text = json ? json : say && call >= Number(directive(first, 'DONE_AT') ?? '1') ? `call ${call}: finished. ${say}` : `call ${call}: still working`;
      res.setHeader('content-type', 'application/json');
      const [input, output] = (directive(first, 'USAGE') ?? '').split(',').map(Number);
      const reported = input !== undefined && output !== undefined && !Number.isNaN(input) && !Number.isNaN(output);
      if (req.url === '/v1/messages') {
        res.end(JSON.stringify({ id: `msg_${call}`, type: 'message', role: 'assistant', content: [{ type: 'text', text }], ...(reported ? { usage: { input_tokens: input, output_tokens: output } } : {}) }));
      } else if (req.url === '/v1/chat/completions') {
        res.end(
          JSON.stringify({
            id: `cmpl_${call}`,
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: text } }],
            ...(reported ? { usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output } } : {}),
          }),
        );
      } else {
        res.statusCode = 404;
        res.end(JSON.stringify({ error: 'not found' }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
