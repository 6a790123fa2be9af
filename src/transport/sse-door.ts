// The server-sent events door (§11): frames a FeedStream for the wire.
// `retry` once, then `id`/`event: observation`/`data` per observation, a
// heartbeat when idle, and `event: error` before the stream ends on an error.
import { asProtocolError, type ProtocolError } from '../protocol/errors.ts';
import type { Caller } from '../service/access.ts';
import { type FeedStream, openFeedStream, type StreamListener } from '../service/feed-stream.ts';
import type { MonitorService } from '../service/service.ts';
import type { HttpRequest, HttpResponse, StreamSink } from './http-types.ts';

const frame = (event: string, data: string, id?: number) =>
  `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${data}\n\n`;

export function createSseDoor(service: MonitorService) {
  // Caught-up streams of a monitor receive the same batch array (SharedTail): frame and encode it once.
  const framed = new WeakMap<object, Buffer>();
  return async (request: HttpRequest, subscription: string, caller: Caller, query: Record<string, unknown>): Promise<HttpResponse> => {
    const lastEventId = request.headers['last-event-id'];
    const open = () => openStream(service, subscription, query, caller, lastEventId);
    // A cluster node catches up on the subscription's monitor first, and opens again after a lost race.
    const stream = service.cluster ? await service.cluster.run('feeds/stream', { subscription }, open) : await open();
    return streamResponse(stream, framed);
  };
}

/** Refusals happen before the stream starts, as ordinary JSON errors. */
async function openStream(
  service: MonitorService,
  subscription: string,
  query: Record<string, unknown>,
  caller: Caller,
  lastEventId: string | undefined,
): Promise<FeedStream> {
  const opened = openFeedStream(service, subscription, query, caller, lastEventId);
  try {
    await service.settle();
  } catch (error) {
    opened.close();
    throw error;
  }
  return opened;
}

// Built apart from the handler: the closures an open stream keeps (start, its onClose
// listener) would otherwise hold the handler's scope, and with it the request, for hours.
function streamResponse(stream: FeedStream, framed: WeakMap<object, Buffer>): HttpResponse {
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
      stream.start(new SseFrames(sink, framed));
    },
  };
}

/**
 * Frames a stream's events for its sink. A class rather than an object of arrow
 * functions: with thousands of open streams, per-stream closures are a good
 * part of each stream's memory.
 */
class SseFrames implements StreamListener {
  constructor(
    private readonly sink: StreamSink,
    private readonly framed: WeakMap<object, Buffer>,
  ) {}

  observations(batch: ReadonlyArray<{ seq: number; body: string }>): boolean {
    let bytes = this.framed.get(batch);
    if (bytes === undefined) {
      let text = '';
      for (const { seq, body } of batch) text += frame('observation', body, seq);
      // Bytes, not text: written to thousands of sockets, it is encoded once here instead of once per socket.
      bytes = Buffer.from(text);
      this.framed.set(batch, bytes);
    }
    return this.sink.write(bytes);
  }

  hasRoom(bytes: number): boolean {
    return this.sink.hasRoom(bytes);
  }

  whenRoom(bytes: number, resume: () => void): void {
    this.sink.whenRoom(bytes, resume);
  }

  heartbeat(head: number, next: number): void {
    this.sink.write(frame('heartbeat', JSON.stringify({ head, next })));
  }

  failed(error: ProtocolError): void {
    this.sink.write(frame('error', JSON.stringify(asProtocolError(error).toBody())));
    this.sink.end();
  }
}
