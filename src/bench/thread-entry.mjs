// Entry of every worker thread of `vigil bench`: runs the thread module its
// workerData names. In a build (dist/) the compiled module sits next to this
// file; from sources, a worker thread does not inherit the tsx loader that
// bin/vigil.js registered, so it registers it first.
import { existsSync } from 'node:fs';
import { workerData } from 'node:worker_threads';

const modules = { leases: 'lease-thread', streams: 'stream-thread', publish: 'publish-thread' };
const name = modules[workerData.kind];
if (!name) throw new Error(`vigil bench: no thread module for "${workerData.kind}"`);
const compiled = new URL(`./${name}.js`, import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL(`./${name}.ts`, import.meta.url).href);
}
