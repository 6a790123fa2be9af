// The fan-out yardstick: a minimal SSE server on the same uWebSockets.js
// build as Vigil, with no protocol at all. Every GET opens an event stream;
// every POST /publish is written, as one `data:` frame, to every open stream
// (corked, one write each) and answered 201. GET /memory answers the process's
// RSS after a full collection. It prints "listening <port>" once it listens.
import uws from 'uWebSockets.js';

const gc = (globalThis as { gc?: () => void }).gc;
const streams = new Set<uws.HttpResponse>();
const app = uws.App();

app.get('/memory', (res) => {
  gc?.();
  res.end(JSON.stringify({ rss: process.memoryUsage().rss, streams: streams.size }));
});

app.post('/publish', (res) => {
  let body = Buffer.alloc(0);
  res.onAborted(() => {});
  res.onData((chunk, last) => {
    body = Buffer.concat([body, Buffer.from(chunk)]);
    if (!last) return;
    const frame = Buffer.concat([Buffer.from('event: observation\ndata: '), body, Buffer.from('\n\n')]);
    for (const stream of streams) stream.cork(() => stream.write(frame));
    res.cork(() => res.writeStatus('201 Created').end('{}'));
  });
});

app.get('/*', (res) => {
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
