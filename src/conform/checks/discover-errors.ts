// §1 error shape and unknown routes, §2 discover, §13 body limit and origins.
import { request as httpRequest } from 'node:http';
import { check, CheckSkipped } from '../check.ts';
import { accepted, ensure, equal, excerpt, fail, hasKeys, refused } from '../expect.ts';
import { createMonitor } from '../fixtures.ts';
import type { Wire } from '../wire-client.ts';

export const discoverAndErrorChecks = [
  check('§2', 'MP-2-discover', 'discover answers without a token, in the §2 shape', async (ctx) => {
    const body = accepted(await ctx.http.get('/discover'), 200, 'GET /discover without a token');
    equal(body.protocol, 'monitor-protocol', 'protocol');
    ensure(Array.isArray(body.supportedVersions) && body.supportedVersions.includes('0.1'), `supportedVersions lacks "0.1": ${excerpt(body.supportedVersions)}`);
    hasKeys(body.serverInfo, ['name', 'version'], 'serverInfo');
    hasKeys(body.capabilities, ['monitors', 'feeds', 'leases', 'extensions'], 'capabilities');
    equal(body.capabilities.leases.delivery_count_limit, 5, 'capabilities.leases.delivery_count_limit');
    hasKeys(body.limits, ['max_limit', 'default_limit', 'max_wait_seconds', 'max_body_bytes', 'retire_after_mute_seconds_default'], 'limits');
    equal([body.limits.max_limit, body.limits.default_limit, body.limits.max_wait_seconds], [1000, 50, 50], 'limits max_limit, default_limit, max_wait_seconds');
    ensure(Number.isSafeInteger(body.ttlMs), `ttlMs is not an integer: ${excerpt(body.ttlMs)}`);
  }),

  check('§1', 'MP-1-error-shape', 'every error is {code, error} with the seed status', async (ctx) => {
    const missing = refused(await ctx.http.get(`/monitors/${ctx.unique('absent')}`), 404, 'NOT_FOUND', 'GET of a monitor that does not exist');
    ensure(typeof missing.code === 'string', 'code is not a string');
    const bad = refused(await ctx.http.post('/monitors', { visibility: 'sideways' }), 400, 'UNKNOWN_VOCABULARY', 'create with visibility "sideways"');
    ensure(Array.isArray(bad.invalid) && bad.known && typeof bad.known === 'object', `UNKNOWN_VOCABULARY lacks invalid/known: ${excerpt(bad)}`);
  }),

  check('§1', 'MP-1-unknown-route', 'an unknown route or method is 404 NOT_FOUND', async (ctx) => {
    refused(await ctx.http.get('/no-such-route'), 404, 'NOT_FOUND', 'GET /no-such-route');
    refused(await ctx.http.request('DELETE', '/monitors'), 404, 'NOT_FOUND', 'DELETE /monitors');
    accepted(await ctx.http.get('/monitors'), 200, 'GET /monitors (positive control)');
  }),

  check('§1', 'MP-1-malformed-json', 'a malformed JSON body is 400 INVALID, never 500', async (ctx) => {
    refused(await ctx.http.request('POST', '/monitors', { rawBody: '{"id": ' }), 400, 'INVALID', 'create with a truncated JSON body');
    refused(await ctx.http.request('POST', '/monitors', { rawBody: '[1,2]' }), 400, 'INVALID', 'create with a JSON array body');
    accepted(await ctx.http.request('POST', '/monitors', { rawBody: JSON.stringify({ id: ctx.unique('cf') }) }), 201, 'create with a well-formed body');
  }),

  check('§13', 'MP-13-body-limit', 'a body over max_body_bytes is 413 TOO_LARGE {limit_bytes}', async (ctx) => {
    const limit = (await ctx.http.get('/discover')).body?.limits?.max_body_bytes;
    ensure(Number.isSafeInteger(limit), `discover limits.max_body_bytes is not an integer: ${excerpt(limit)}`);
    if (limit > 16 * 1024 * 1024) throw new CheckSkipped(`max_body_bytes ${limit} is too large to test quickly`);
    const m = await createMonitor(ctx);
    const sized = (bytes: number) => {
      const shell = JSON.stringify({ type: 'conform.event', data: { pad: '' } });
      return JSON.stringify({ type: 'conform.event', data: { pad: 'x'.repeat(bytes - shell.length) } });
    };
    const over = refused(await ctx.http.request('POST', `/monitors/${m.id}/observations`, { rawBody: sized(limit + 1), token: m.token }), 413, 'TOO_LARGE', `a body of ${limit + 1} bytes`);
    equal(over.limit_bytes, limit, 'limit_bytes');
    accepted(await ctx.http.request('POST', `/monitors/${m.id}/observations`, { rawBody: sized(limit), token: m.token }), 201, `a body of exactly ${limit} bytes`);
  }),

  check('§13', 'MP-13-origin-refused', 'a browser Origin not allowed is 403 ORIGIN_REFUSED', async (ctx) => {
    refused(await ctx.http.get('/discover', { headers: { origin: 'https://attacker.example' } }), 403, 'ORIGIN_REFUSED', 'discover from Origin https://attacker.example');
    accepted(await ctx.http.get('/discover'), 200, 'discover without an Origin header');
  }),

  check('§13', 'MP-13-host-refused', 'on loopback a Host that does not name the machine is 403 ORIGIN_REFUSED', async (ctx) => {
    const url = new URL(ctx.base);
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) throw new CheckSkipped('the server is not on a loopback address');
    const get = (host: string) =>
      new Promise<{ status: number; body: Wire }>((done, reject) => {
        const req = httpRequest({ host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port, path: `${url.pathname}/discover`, headers: { host } }, (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => {
            let body: unknown = text;
            try {
              body = JSON.parse(text);
            } catch {}
            done({ status: res.statusCode ?? 0, body });
          });
        });
        req.on('error', reject);
        req.end();
      });
    const evil = await get('rebind.attacker.example');
    if (evil.status !== 403 || evil.body?.code !== 'ORIGIN_REFUSED') fail(`Host rebind.attacker.example should be 403 ORIGIN_REFUSED, got ${evil.status} ${excerpt(evil.body)}`);
    const good = await get(`localhost:${url.port}`);
    if (good.status !== 200) fail(`Host localhost:${url.port} should be accepted, got ${good.status} ${excerpt(good.body)}`);
  }),
];
