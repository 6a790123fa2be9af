// The managed edge's own door: a listener apart from the API and dashboard
// (vigil serve --edge-port) that answers only by Host, <name>.<edge domain>.
// A worker's code is anyone's with an API key: on the dashboard's origin its
// page could read what the dashboard keeps and register a service worker over
// /ui. Here each worker is an origin of its own, and nothing it answers may
// widen a service worker's scope.
import { jsonResponse } from '../../transport/http-door.ts';
import type { HttpHandler, HttpRequest, HttpResponse } from '../../transport/http-types.ts';
import type { ManagedEdge } from './managed-edge.ts';
import { isReservedEdgePath, WorkerLimitError } from './worker-runtimes.ts';

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
  try {
    const response = await edge.runtimes.fetch(name, request.path, request);
    if (!response) return jsonResponse(404, { code: 'NOT_FOUND', error: `No worker "${name}" is deployed on this edge.` });
    const headers = Object.fromEntries(Object.entries(response.headers).filter(([key]) => !refusedHeaders.has(key)));
    return { ...response, headers };
  } catch (error) {
    log?.(`edge worker ${name} failed: ${(error as Error).message}`);
    if (error instanceof WorkerLimitError) return jsonResponse(error.status, { code: 'UNAVAILABLE', error: error.message });
    return jsonResponse(502, { code: 'UNAVAILABLE', error: `Worker "${name}" could not answer: ${(error as Error).message}` });
  }
}
