// The fan-out yardstick: a minimal SSE server on the same uWebSockets.js
// build as Vigil, with no protocol state at all, answering just what
// `vigil bench fanout` asks (src/bench) so that the same engine measures it
// and Vigil: discover, a monitor and subscriptions that are only names, the
// head, and publishes. Every GET …/stream opens an event stream; every
// publish is written, as one frame with the next id, to every open stream
// (corked, one write each) and answered 201 {seq}. GET /memory answers the
// process's RSS after a full collection. It prints "listening <port>".
import uws from 'uWebSockets.js';

const gc = (globalThis as { gc?: () => void }).gc;
const streams = new Set<uws.HttpResponse>();
const app = uws.App();
let seq = 0;
let subscriptions = 0;

const json = (res: uws.HttpResponse, status: string, body: unknown): void => {
  res.cork(() => {
    res.writeStatus(status).writeHeader('content-type', 'application/json').end(JSON.stringify(body));
  });
};

/** Reads the whole body, then answers. */
const post = (pattern: string, answer: (res: uws.HttpResponse, body: Buffer) => void) =>
  app.post(pattern, (res) => {
    let body = Buffer.alloc(0);
    res.onAborted(() => {});
    res.onData((chunk, last) => {
      body = Buffer.concat([body, Buffer.from(chunk)]);
      if (last) answer(res, body);
    });
  });

app.get('/memory', (res) => {
  gc?.();
  res.end(JSON.stringify({ rss: process.memoryUsage().rss, streams: streams.size }));
});
app.get('/mp/v0/discover', (res) => json(res, '200 OK', { protocol: 'monitor-protocol', serverInfo: { name: 'bare-broadcaster', version: '0' } }));
app.get('/mp/v0/monitors/:id', (res) => json(res, '200 OK', { monitor: { id: 'bare', head: seq } }));
post('/mp/v0/monitors', (res) => json(res, '201 Created', { monitor: { id: 'bare', capabilities: ['observe'] }, owner_token: 'bare' }));
post('/mp/v0/monitors/:id/retire', (res) => json(res, '200 OK', { monitor: { id: 'bare' } }));
post('/mp/v0/subscriptions', (res) => json(res, '201 Created', { subscription: { id: `bare-${subscriptions++}` }, token: 'bare' }));
post('/mp/v0/monitors/:id/observations', (res, body) => {
  seq++;
  const frame = Buffer.concat([Buffer.from(`id: ${seq}\nevent: observation\ndata: `), body, Buffer.from('\n\n')]);
  for (const stream of streams) stream.cork(() => stream.write(frame));
  json(res, '201 Created', { seq });
});
app.get('/mp/v0/subscriptions/:id/stream', (res) => {
  res.onAborted(() => streams.delete(res));
  res.cork(() => {
    res.writeStatus('200 OK').writeHeader('content-type', 'text/event-stream').writeHeader('cache-control', 'no-store');
    res.write('retry: 1000\n\n');
  });
  streams.add(res);
});

app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) {
    process.stderr.write('bare broadcaster: cannot listen\n');
    process.exit(1);
  }
  process.stdout.write(`listening ${uws.us_socket_local_port(socket)}\n`);
});
