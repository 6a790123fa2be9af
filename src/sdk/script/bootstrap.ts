// Code that runs inside the isolate before the script: it builds the `sdk`,
// `servers`, `sleep` and `console` globals over three host references, and
// makes `process`, `require`, `fetch` and friends throw a clear
// SANDBOX_VIOLATION instead of a bare ReferenceError. Every SDK method is a
// synchronous call into the host (Reference.applySyncPromise): the host runs
// the same function the CLI command runs and answers with JSON.

export const BOOTSTRAP = `
'use strict';
(() => {
  const g = globalThis;
  const host = g.__vigil_host, hostAsync = g.__vigil_host_async, out = g.__vigil_log;
  const manifest = JSON.parse(g.__vigil_manifest);
  const values = JSON.parse(g.__vigil_values);
  for (const k of ['__vigil_host', '__vigil_host_async', '__vigil_log', '__vigil_manifest', '__vigil_values']) delete g[k];

  class VigilError extends Error {
    constructor(code, message, details) {
      super(message);
      this.name = 'VigilError';
      this.code = code;
      this.details = details || {};
    }
  }
  const decode = (text) => {
    const r = JSON.parse(text);
    if (r.error) throw new VigilError(r.error.code, r.error.message, r.error.details);
    return r.ok;
  };
  const encode = (args) => JSON.stringify(args, (k, v) => (v === undefined ? null : v));

  const sdk = {};
  for (const [ns, methods] of Object.entries(manifest)) {
    const target = {};
    for (const path of methods) {
      const parts = path.split('.');
      let node = target;
      for (const p of parts.slice(0, -1)) node = node[p] || (node[p] = {});
      const name = parts[parts.length - 1];
      node[name] = { [name]: (...args) => decode(host.applySyncPromise(undefined, [ns, path, encode(args)])) }[name];
    }
    const freeze = (o) => { for (const v of Object.values(o)) if (typeof v === 'object') freeze(v); return Object.freeze(o); };
    sdk[ns] = freeze(target);
  }
  sdk.vars = Object.freeze(values.vars);
  sdk.workspace = Object.freeze({ path: values.workspace });
  sdk.VigilError = VigilError;
  Object.freeze(sdk);

  const servers = new Proxy({}, {
    get(_t, id) {
      if (typeof id !== 'string') return undefined;
      return Object.freeze({
        call: (tool, args) =>
          hostAsync.apply(undefined, [id, String(tool), encode(args === undefined ? {} : args)], { result: { promise: true } }).then(decode),
      });
    },
  });
  const sleep = (ms) => hostAsync.apply(undefined, ['__sleep', '', encode(Number(ms))], { result: { promise: true } }).then(() => undefined);

  const show = (v) => {
    if (typeof v === 'string') return v;
    if (v instanceof Error) return (v.code ? v.code + ': ' : '') + (v.stack || v.message);
    try { const s = JSON.stringify(v); return s === undefined ? String(v) : s; } catch { return String(v); }
  };
  const logger = (level) => (...args) => out.applySync(undefined, [level, args.map(show).join(' ')]);
  const console = Object.freeze({ log: logger('log'), info: logger('log'), debug: logger('log'), warn: logger('warn'), error: logger('error') });

  const forbid = (name, hint) => {
    Object.defineProperty(g, name, {
      configurable: false,
      get() {
        throw new VigilError('SANDBOX_VIOLATION', name + ' is not available in a Vigil script: ' + hint);
      },
    });
  };
  const hint = 'scripts run in a sandbox without process, modules, files or network; use sdk.*, servers.<id>.call and sleep';
  for (const name of ['process', 'require', 'module', 'exports', 'fetch', 'XMLHttpRequest', 'WebSocket', 'Buffer', 'setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask', 'Deno', 'Bun', 'global']) forbid(name, hint);
  g.__vigil_globals = { sdk, servers, sleep, console };
})();
`;
