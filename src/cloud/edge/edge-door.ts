// The managed edge's own door: a listener apart from the API and dashboard
// (vigil serve --edge-port) that answers only by Host, <name>.<edge domain>.
// A worker's code is anyone's with an API key: on the dashboard's origin its
// page could read what the dashboard keeps and register a service worker over
// /ui. Here each worker is an origin of its own, and nothing it answers may
// widen a service worker's scope. Answers are relayed as they come, under
// back-pressure and a size limit (worker-answer.ts), and requests in progress
// are capped per worker and per client (edge-admission.ts).
import { jsonResponse } from '../../transport/http-door.ts';
import type { HttpHandler, HttpRequest, HttpResponse } from '../../transport/http-types.ts';
import type { ManagedEdge } from './managed-edge.ts';
import { isReservedEdgePath, type WorkerAnswer, WorkerLimitError } from './worker-runtimes.ts';

/** Headers a worker may not send: they would reach past its own origin. */
const refusedHeaders = new Set(['service-worker-allowed']);

export function createEdgeHandler(edge: ManagedEdge, log?: (line: string) => void): HttpHandler {
  return async (request) => {
    const name = edge.workerOfHost(request.headers.host);
    if (name === undefined) {
      return jsonResponse(404, {
        code: 'NOT_FOUND',
        error: `This is the managed edge: each worker answers at its own host name, ${edge.urlOf('<name>')} (Host "${(request.headers.host ?? '').slice(0, 100)}" names none).`,
      });
    }
    return serveWorker(edge, name, request, log);
  };
}

async function serveWorker(edge: ManagedEdge, name: string, request: HttpRequest, log?: (line: string) => void): Promise<HttpResponse> {
  if (isReservedEdgePath(request.path)) {
    return jsonResponse(404, { code: 'NOT_FOUND', error: `Paths under /cdn-cgi/ belong to the edge itself; worker "${name}" cannot be reached there.` });
  }
  const admitted = edge.admission.admit(name, request.remoteAddress);
  if ('refused' in admitted) return jsonResponse(429, { code: 'OVER_BUDGET', error: admitted.refused });
  let answer: WorkerAnswer | undefined;
  try {
    answer = await edge.runtimes.fetch(name, request.path, request);
  } catch (error) {
    admitted.release();
    log?.(`edge worker ${name} failed: ${(error as Error).message}`);
    if (error instanceof WorkerLimitError) return jsonResponse(error.status, { code: 'UNAVAILABLE', error: error.message });
    return jsonResponse(502, { code: 'UNAVAILABLE', error: `Worker "${name}" could not answer: ${(error as Error).message}` });
  }
  if (!answer) {
    admitted.release();
    return jsonResponse(404, { code: 'NOT_FOUND', error: `No worker "${name}" is deployed on this edge.` });
  }
  const headers = Object.fromEntries(Object.entries(answer.headers).filter(([key]) => !refusedHeaders.has(key)));
  const relayed = answer;
  if (relayed.empty || request.signal.aborted) {
    relayed.discard();
    admitted.release();
    return { kind: 'full', status: relayed.status, headers, body: '' };
  }
  // The body goes out as it comes; a client gone before the relay starts lets it go unread.
  let started = false;
  request.signal.addEventListener(
    'abort',
    () => {
      if (started) return;
      relayed.discard();
      admitted.release();
    },
    { once: true },
  );
  return {
    kind: 'stream',
    status: relayed.status,
    headers,
    start(sink) {
      started = true;
      void relayed.relay(sink).then((end) => {
        admitted.release();
        if (end.kind === 'too-large') log?.(`edge worker ${name}: its answer passed ${edge.limits.maxResponseBytes} bytes; the connection was cut there`);
        else if (end.kind === 'worker-late') log?.(`edge worker ${name}: its answer did not finish within ${edge.limits.timeoutMs / 1000} s; the connection was cut and the worker stopped`);
        else if (end.kind === 'client-late') log?.(`edge worker ${name}: a client did not take its answer within ${edge.limits.timeoutMs / 1000} s; its connection was cut`);
        else if (end.kind === 'failed') log?.(`edge worker ${name}: its answer failed after ${end.bytes} bytes: ${end.error.message}`);
      });
    },
  };
}
