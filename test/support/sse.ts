// A small server-sent events reader over node:http, as a browser's EventSource would parse the stream.
import http from 'node:http';
import { scaled } from './time-scale.ts';

export interface SseEvent {
  readonly id?: string;
  readonly event: string;
  readonly data: string;
}

export interface SseConnection {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly events: SseEvent[];
  readonly retry: number | undefined;
  /** Resolves when at least `count` events (of `type`, default observation) have arrived. */
  waitFor(count: number, type?: string, timeoutMs?: number): Promise<SseEvent[]>;
  readonly closed: Promise<void>;
  close(): void;
  /** The raw response, e.g. to pause reading. */
  readonly response: http.IncomingMessage;
  /** For a refused stream: the JSON error body. */
  readonly errorBody?: any;
}

/** `localAddress` connects from another address (127.0.1.1 is another client to per-client limits). */
export function openSse(url: string, headers: Record<string, string> = {}, localAddress?: string): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { accept: 'text/event-stream', ...headers }, localAddress }, (response) => {
      const events: SseEvent[] = [];
      let retry: number | undefined;
      let buffer = '';
      const listeners = new Set<() => void>();
      let errorText = '';
      const closed = new Promise<void>((done) => {
        response.once('close', () => done());
        response.once('end', () => done());
      });
      const isStream = String(response.headers['content-type'] ?? '').startsWith('text/event-stream');
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        if (!isStream) {
          errorText += chunk;
          return;
        }
        buffer += chunk;
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id: string | undefined;
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            const colon = line.indexOf(':');
            const field = colon === -1 ? line : line.slice(0, colon);
            const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id') id = value;
            else if (field === 'event') event = value;
            else if (field === 'data') data.push(value);
            else if (field === 'retry') retry = Number(value);
          }
          if (data.length > 0) events.push({ id, event, data: data.join('\n') });
          for (const l of listeners) l();
          end = buffer.indexOf('\n\n');
        }
      });
      const connection: SseConnection = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        events,
        get retry() {
          return retry;
        },
        waitFor(count, type = 'observation', timeoutMs = 10_000) {
          return new Promise((done, fail) => {
            const matching = () => events.filter((e) => e.event === type);
            const check = () => {
              if (matching().length >= count) {
                clearTimeout(timer);
                listeners.delete(check);
                done(matching());
              }
            };
            const timer = setTimeout(() => {
              listeners.delete(check);
              fail(new Error(`only ${matching().length} of ${count} ${type} events arrived`));
            }, scaled(timeoutMs));
            listeners.add(check);
            check();
          });
        },
        closed,
        close: () => {
          request.destroy();
          response.destroy();
        },
        response,
        get errorBody() {
          try {
            return errorText ? JSON.parse(errorText) : undefined;
          } catch {
            return errorText;
          }
        },
      };
      if (!isStream) response.once('end', () => resolve(connection));
      else resolve(connection);
    });
    request.once('error', reject);
  });
}
