import { startServer } from '../src/server.ts';
import { execSync } from 'node:child_process';
const server = await startServer({ port: 0, cloud: false });
console.log(execSync(`curl -s -o /dev/null -w '%{http_code}' -H 'Origin: http://evil.test' ${server.url}/ui/events --max-time 2 || true`).toString());
console.log(execSync(`curl -s -o /dev/null -w '%{http_code}' -H 'Host: evil.test' ${server.url}/ui --max-time 2 || true`).toString());
const r = await fetch(`${server.url}/ui`, { headers: { origin: 'http://evil.test' } }); console.log('fetch', r.status);
await server.close();
