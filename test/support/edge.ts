// Calls a managed-edge worker at its URL (http://<name>.<edge domain>:<port>/…)
// the way a browser on this machine would: connected to loopback, the worker
// named by the Host header (Node's resolver does not know <name>.localhost).
import { request as httpRequest } from 'node:http';

export interface EdgeAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): any;
}

export function edgeFetch(url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<EdgeAnswer> {
  const target = new URL(url);
  return new Promise((done, fail) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: target.port || 80, path: `${target.pathname}${target.search}`, method: init.method ?? 'GET', headers: { ...init.headers, host: target.host } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) }));
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    req.end(init.body);
  });
}
