// The server-sent events door (§11): frames a FeedStream for the wire.
// `retry` once, then `id`/`event: observation`/`data` per observation, a
// heartbeat when idle, and `event: error` before the stream ends on an error.
import { asProtocolError } from '../protocol/errors.ts';
import type { Caller } from '../service/access.ts';
import { openFeedStream } from '../service/feed-stream.ts';
import type { MonitorService } from '../service/service.ts';
import type { HttpRequest, HttpResponse } from './http-types.ts';

const frame = (event: string, data: string, id?: number) =>
  `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${data}\n\n`;

export function createSseDoor(service: MonitorService) {
  return async (request: HttpRequest, subscription: string, caller: Caller, query: Record<string, unknown>): Promise<HttpResponse> => {
    // Refusals happen before the stream starts, as ordinary JSON errors.
    const stream = openFeedStream(service, subscription, query, caller, request.headers['last-event-id']);
    await service.settle();
    return {
      kind: 'stream',
      status: 200,
      headers: {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        'x-accel-buffering': 'no',
      },
      start(sink) {
        sink.onClose(() => stream.close());
        if (!sink.write('retry: 3000\n\n')) return;
        stream.start({
          observations: (batch) => {
            let text = '';
            for (const { seq, body } of batch) text += frame('observation', body, seq);
            return sink.write(text);
          },
          heartbeat: (head, next) => {
            sink.write(frame('heartbeat', JSON.stringify({ head, next })));
          },
          failed: (error) => {
            sink.write(frame('error', JSON.stringify(asProtocolError(error).toBody())));
            sink.end();
          },
        });
      },
    };
  };
}
