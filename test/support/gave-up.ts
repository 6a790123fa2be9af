// A client that gives up: it sends a whole request, waits until the bytes are
// handed to the kernel (on loopback, in the server's socket buffer, even
// while the server is stopped), then closes its connection without reading a
// reply, as a client whose timeout ran out does.
import { connect } from 'node:net';

export async function sendAndGiveUp(url: string, method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<void> {
  const { hostname, port } = new URL(url);
  const body = options.body === undefined ? '' : JSON.stringify(options.body);
  const head = [
    `${method} ${path} HTTP/1.1`,
    `host: ${hostname}:${port}`,
    'content-type: application/json',
    `content-length: ${Buffer.byteLength(body)}`,
    ...(options.token ? [`authorization: Bearer ${options.token}`] : []),
  ];
  const socket = connect(Number(port), hostname);
  await new Promise<void>((done, fail) => {
    socket.once('error', fail);
    socket.once('connect', () => socket.write(`${head.join('\r\n')}\r\n\r\n${body}`, (error) => (error ? fail(error) : done())));
  });
  await new Promise<void>((done) => {
    socket.once('close', () => done());
    socket.destroy();
  });
}
