// One keep-alive HTTP/1.1 connection over node:net, one request at a time:
// what a worker that holds one connection to its queue needs, as BullMQ's
// worker holds one ioredis socket. It writes each request as one string and
// reads each reply whole (status line, Content-Length, body); a reply it
// cannot read that way (chunked, no length) fails the request. node:http's
// client cost the pool process about 6 µs more per cycle (bench/README.md, issue 46).
import net from 'node:net';

export interface KeepAliveReply {
  readonly status: number;
  readonly body: string;
}

export interface KeepAlive {
  post(path: string, body: string, token?: string): Promise<KeepAliveReply>;
  close(): void;
}

const headerEnd = Buffer.from('\r\n\r\n');

/** `base` is the protocol root, e.g. http://127.0.0.1:8130/mp/v0. */
export function keepAlive(base: string): KeepAlive {
  const url = new URL(base);
  const prefix = url.pathname.replace(/\/$/, '');
  const socket = net.connect(Number(url.port || 80), url.hostname);
  socket.setNoDelay(true);
  let pending: { resolve: (r: KeepAliveReply) => void; reject: (e: Error) => void } | undefined;
  let buffered: Buffer = Buffer.alloc(0);
  let failure: Error | undefined;

  const fail = (error: Error) => {
    failure ??= error;
    const p = pending;
    pending = undefined;
    p?.reject(error);
  };
  socket.on('error', fail);
  socket.on('close', () => fail(new Error(`connection to ${url.host} closed`)));
  socket.on('data', (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    const end = buffered.indexOf(headerEnd);
    if (end < 0 || !pending) return;
    const head = buffered.toString('latin1', 0, end);
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!length || !Number.isInteger(status)) return fail(new Error(`cannot read this reply without a Content-Length: ${head.slice(0, 200)}`));
    const bodyEnd = end + 4 + Number(length[1]);
    if (buffered.length < bodyEnd) return;
    const body = buffered.toString('utf8', end + 4, bodyEnd);
    buffered = buffered.subarray(bodyEnd);
    const p = pending;
    pending = undefined;
    p.resolve({ status, body });
  });

  return {
    post(path, body, token) {
      if (failure) return Promise.reject(failure);
      if (pending) return Promise.reject(new Error('one request at a time on a connection'));
      const auth = token ? `Authorization: Bearer ${token}\r\n` : '';
      return new Promise((resolve, reject) => {
        pending = { resolve, reject };
        socket.write(`POST ${prefix}${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n${auth}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      });
    },
    close() {
      socket.removeAllListeners('close');
      socket.end();
    },
  };
}
