// The worker templates of `worker.create`: fetch (default), scheduled and
// webhook. Each is a module worker in src/index.ts plus a wrangler.toml, so
// the same folder deploys to the managed edge and to the user's own account.
// The sources use only web APIs (no packages), so they bundle as they are.

export const templateNames = ['fetch', 'scheduled', 'webhook'] as const;
export type TemplateName = (typeof templateNames)[number];

export const compatibilityDate = '2024-09-23';

const fetchWorker = (name: string) => `// Worker "${name}": answers HTTP requests. Secrets set with
// \`vigil worker secret set ${name} KEY\` arrive as fields of \`env\`.
export default {
  async fetch(request: Request, env: Record<string, string>): Promise<Response> {
    const url = new URL(request.url);
    return Response.json({ worker: '${name}', path: url.pathname, method: request.method, secrets: Object.keys(env).length });
  },
};
`;

const scheduledWorker = (name: string) => `// Worker "${name}": runs on the cron triggers of wrangler.toml ([triggers] crons)
// and answers HTTP requests with its last run.
let lastRun: string | null = null;

export default {
  async scheduled(controller: { cron: string; scheduledTime: number }): Promise<void> {
    lastRun = new Date(controller.scheduledTime).toISOString();
    console.log(\`${name}: cron \${controller.cron} at \${lastRun}\`);
  },
  async fetch(): Promise<Response> {
    return Response.json({ worker: '${name}', last_run: lastRun });
  },
};
`;

const webhookWorker = (name: string) => `// Worker "${name}": receives Standard Webhooks deliveries (for example Vigil's
// cir.capture) and checks their signature with the secret WEBHOOK_SECRET:
//   vigil worker secret set ${name} WEBHOOK_SECRET
// A delivery is handled once: its webhook-id is remembered for as long as its
// timestamp is accepted, and a replay (or a retry whose first answer was lost)
// is answered 200 { duplicate: true } without handling it again; later, the
// timestamp check refuses it. The memory is this isolate's: bind a KV
// namespace or a Durable Object where several isolates must agree.
const toleranceSeconds = 300;
const maxRemembered = 100_000;
/** webhook-id -> when it may be forgotten (ms). Insertion order is expiry order, near enough. */
const seen = new Map<string, number>();

function firstDelivery(id: string): boolean {
  const now = Date.now();
  for (const [old, until] of seen) {
    if (until > now && seen.size < maxRemembered) break;
    seen.delete(old);
  }
  if (seen.has(id)) return false;
  seen.set(id, now + 2 * toleranceSeconds * 1000);
  return true;
}

async function signatureOf(secret: string, id: string, timestamp: string, body: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(\`\${id}.\${timestamp}.\${body}\`)));
  return btoa(String.fromCharCode(...mac));
}

function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export default {
  async fetch(request: Request, env: Record<string, string>): Promise<Response> {
    if (request.method !== 'POST') return new Response('POST a signed webhook delivery here\\n', { status: 405 });
    const id = request.headers.get('webhook-id');
    const timestamp = request.headers.get('webhook-timestamp');
    const signatures = request.headers.get('webhook-signature');
    const body = await request.text();
    if (!env.WEBHOOK_SECRET) return new Response('WEBHOOK_SECRET is not set\\n', { status: 500 });
    if (!id || !timestamp || !signatures) return new Response('missing webhook headers\\n', { status: 400 });
    if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return new Response('stale timestamp\\n', { status: 400 });
    const expected = await signatureOf(env.WEBHOOK_SECRET, id, timestamp, body);
    const valid = signatures.split(' ').some((s) => s.startsWith('v1,') && sameText(s.slice(3), expected));
    if (!valid) return new Response('bad signature\\n', { status: 401 });
    const event = JSON.parse(body) as { type: string; data: unknown };
    if (!firstDelivery(id)) return Response.json({ received: event.type, duplicate: true });
    console.log(\`${name}: \${event.type}\`);
    return Response.json({ received: event.type });
  },
};
`;

const wranglerToml = (name: string, template: TemplateName) =>
  [
    `name = "${name}"`,
    'main = "src/index.ts"',
    `compatibility_date = "${compatibilityDate}"`,
    ...(template === 'scheduled' ? ['', '[triggers]', 'crons = ["*/15 * * * *"]'] : []),
    '',
  ].join('\n');

export function templateFiles(name: string, template: TemplateName): Record<string, string> {
  const source = template === 'scheduled' ? scheduledWorker(name) : template === 'webhook' ? webhookWorker(name) : fetchWorker(name);
  return { 'src/index.ts': source, 'wrangler.toml': wranglerToml(name, template) };
}
