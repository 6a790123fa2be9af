// What a transport answers when a handler or a stream fails unexpectedly:
// a logged 500 (or a final `event: error` frame) carrying a request id, never
// a silent close.
import { asProtocolError } from '../protocol/errors.ts';
import type { FullResponse, StreamSink } from './http-types.ts';

export function internalErrorResponse(error: unknown, where: string): FullResponse {
  const refusal = asProtocolError(error, where);
  return {
    kind: 'full',
    status: refusal.status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify(refusal.toBody()),
  };
}

export function failStream(sink: StreamSink, error: unknown, where: string): void {
  sink.write(`event: error\ndata: ${JSON.stringify(asProtocolError(error, where).toBody())}\n\n`);
  sink.end();
}
