// The server's doors without a socket, the way Hono's app.request() works: a
// request goes straight into the real HTTP handler (createHttpHandler with the
// JSON-RPC and SSE doors, browser rules included) over a real MonitorService
// on an in-memory store, and the reply comes back as status, headers and
// JSON. With a ManualClock, tests about rules and timers (mute, lease expiry,
// residency, heartbeats) move time instead of waiting for it. What needs the
// socket (framing, limits, disconnects, the two transports) keeps its own
// tests over real servers.
import { afterEach, beforeEach } from 'vitest';
import { Store, memoryPath } from '../../src/store/store.ts';
import { MonitorService } from '../../src/service/service.ts';
import type { ServiceOptions } from '../../src/service/service-options.ts';
import { serverDoors } from '../../src/transport/doors.ts';
import { createHttpHandler } from '../../src/transport/http-door.ts';
import type { HttpRequest, StreamChunk, StreamSink } from '../../src/transport/http-types.ts';
import { ManualClock, turns } from './manual-clock.ts';
import type { SseEvent } from './sse.ts';

export interface DoorReply<T = any> {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: T;
}

export interface RequestOptions {
  readonly body?: unknown;
  readonly token?: string;
  readonly headers?: Record<string, string>;
  /** Aborts the request, as a client that goes away. */
  readonly signal?: AbortSignal;
}

/** An event stream read in-process: the events so far, and whether the door ended it. */
export interface DoorStream {
  readonly status: number;
  readonly events: SseEvent[];
  /** The JSON error body of a refused stream. */
  readonly errorBody?: any;
  readonly ended: boolean;
  close(): void;
}

export interface Door {
  readonly service: MonitorService;
  readonly clock: ManualClock;
  /** One request; `path` is under /mp/v0 (e.g. "/monitors"). */
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<DoorReply<T>>;
  createMonitor(body?: Record<string, unknown>): Promise<{ id: string; ownerToken: string }>;
  subscribe(body: Record<string, unknown>, token?: string): Promise<{ id: string; token: string }>;
  publish(monitor: string, token: string, observation: Record<string, unknown>): Promise<DoorReply>;
  /** Every observation of the monitor from seq 1 (through a fresh owner subscription). */
  feed(monitor: string, ownerToken: string): Promise<any[]>;
  stream(path: string, token: string, headers?: Record<string, string>): Promise<DoorStream>;
  /** Lets the service finish what it started (store writes, actor steps). */
  settle(): Promise<void>;
  close(): void;
}

export function openDoor(options: Partial<ServiceOptions> & { allowOrigins?: string[]; allowHosts?: string[] } = {}): Door {
  const { allowOrigins = [], allowHosts = [], ...serviceOptions } = options;
  const clock = serviceOptions.clock instanceof ManualClock ? serviceOptions.clock : new ManualClock();
  const service = new MonitorService({ store: Store.open({ path: memoryPath }), log: () => {}, ...serviceOptions, clock });
  const settle = async () => {
    await service.settle();
    await turns();
  };
  clock.idle = settle;
  const handler = createHttpHandler(service, { allowOrigins, allowHosts, extensions: serverDoors(service) });
  let readers = 0;

  const send = async (method: string, path: string, options: RequestOptions = {}) => {
    const headers: Record<string, string> = { host: '127.0.0.1', ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body = Buffer.alloc(0);
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = Buffer.from(typeof options.body === 'string' ? options.body : JSON.stringify(options.body));
    }
    const [pathOnly, query = ''] = `/mp/v0${path}`.split('?');
    const request: HttpRequest = { method, path: pathOnly!, query, headers, remoteAddress: '127.0.0.1', body, signal: options.signal ?? new AbortController().signal };
    return handler(request);
  };

  const door: Door = {
    service,
    clock,
    async request(method, path, options) {
      const response = await send(method, path, options);
      if (response.kind !== 'full') throw new Error(`${method} ${path} answered with a stream; read it with door.stream()`);
      const text = response.body.toString();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        // Left as text for the test to judge.
      }
      return { status: response.status, headers: response.headers, body: body as never };
    },
    async createMonitor(body = {}) {
      const reply = await door.request('POST', '/monitors', { body });
      if (reply.status !== 201) throw new Error(`create failed: ${reply.status} ${JSON.stringify(reply.body)}`);
      return { id: reply.body.monitor.id, ownerToken: reply.body.owner_token };
    },
    async subscribe(body, token) {
      const reply = await door.request('POST', '/subscriptions', { body, token });
      if (reply.status !== 201 && reply.status !== 200) throw new Error(`subscribe failed: ${reply.status} ${JSON.stringify(reply.body)}`);
      return { id: reply.body.subscription.id, token: reply.body.token };
    },
    publish: (monitor, token, observation) => door.request('POST', `/monitors/${encodeURIComponent(monitor)}/observations`, { body: observation, token }),
    async feed(monitor, ownerToken) {
      const reader = await door.subscribe({ monitor, subscriber: `agent:door-reader-${++readers}` }, ownerToken);
      const out: any[] = [];
      for (let cursor = 1; ; ) {
        const page = await door.request('GET', `/subscriptions/${reader.id}/pull?limit=1000&cursor=${cursor}`, { token: reader.token });
        if (page.status !== 200) throw new Error(`pull failed: ${page.status} ${JSON.stringify(page.body)}`);
        out.push(...page.body.observations);
        if (page.body.observations.length === 0 || page.body.next > page.body.head) return out;
        cursor = page.body.next;
      }
    },
    async stream(path, token, headers = {}) {
      const response = await send('GET', path, { token, headers: { accept: 'text/event-stream', ...headers } });
      if (response.kind === 'full') {
        const errorBody = JSON.parse(response.body.toString());
        return { status: response.status, events: [], errorBody, ended: true, close: () => {} };
      }
      const sink = new MemorySink();
      response.start(sink);
      await settle();
      return {
        status: response.status,
        events: sink.events,
        get ended() {
          return sink.closed;
        },
        close: () => sink.end(),
      };
    },
    settle,
    close: () => service.close(),
  };
  return door;
}

/** A stream's sink in memory: what the door writes, parsed as an EventSource would. */
class MemorySink implements StreamSink {
  readonly events: SseEvent[] = [];
  closed = false;
  private buffer = '';
  private readonly closeListeners: (() => void)[] = [];
  private readonly decoder = new TextDecoder();

  write(chunk: StreamChunk): boolean {
    if (this.closed) return false;
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk);
    for (let end = this.buffer.indexOf('\n\n'); end !== -1; end = this.buffer.indexOf('\n\n')) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
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
      }
      if (data.length > 0) this.events.push({ ...(id === undefined ? {} : { id }), event, data: data.join('\n') });
    }
    return true;
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  /** A cut stream: in memory, closed like an ended one (what was written stays parsed). */
  abort(): void {
    this.end();
  }

  bufferedBytes(): number {
    return 0;
  }

  hasRoom(): boolean {
    return !this.closed;
  }

  whenRoom(_room: number, listener: () => void): void {
    if (!this.closed) queueMicrotask(() => !this.closed && listener());
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }
}

/** A fresh door (service, store and clock) for each test of the block; read `.base` inside tests. */
export function useDoor(options: Parameters<typeof openDoor>[0] = {}): { readonly base: Door } {
  let door: Door | undefined;
  beforeEach(() => {
    door = openDoor(options);
  });
  afterEach(() => door?.close());
  return {
    get base() {
      return door!;
    },
  };
}
