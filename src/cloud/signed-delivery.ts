// One signed POST to a webhook receiver, the Standard Webhooks way: headers
// webhook-id, webhook-timestamp and webhook-signature ("v1,<base64 HMAC-SHA256
// of id.timestamp.body>" keyed with the UTF-8 bytes of the secret), signed by
// the standardwebhooks library. Each attempt is signed afresh, so a retry an
// hour later still carries a current timestamp.
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Webhook } from 'standardwebhooks';
import { guardedLookup } from '../net/inward-addresses.ts';

export interface DeliveryOutcome {
  delivered: boolean;
  response_code?: number;
  error?: string;
}

export function signingKey(secret: string): Webhook {
  return new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
}

export function signedHeaders(secret: string, id: string, body: string, now = new Date()): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signingKey(secret).sign(id, new Date(timestamp * 1000), body),
  };
}

export class DeliverySender {
  private readonly agents = {
    http: new HttpAgent({ keepAlive: true, maxSockets: 64 }),
    https: new HttpsAgent({ keepAlive: true, maxSockets: 64 }),
  };
  private readonly lookup;

  constructor(allowInsecure: boolean, private readonly timeoutMs = 10_000) {
    this.lookup = guardedLookup(allowInsecure);
  }

  send(url: string, secret: string, id: string, body: string): Promise<DeliveryOutcome> {
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    const headers = {
      ...signedHeaders(secret, id, body),
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': 'vigil-webhooks',
    };
    return new Promise((resolve) => {
      let settled = false;
      const finish = (outcome: DeliveryOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const request = (secure ? httpsRequest : httpRequest)(
        target,
        { method: 'POST', headers, agent: secure ? this.agents.https : this.agents.http, lookup: this.lookup as never },
        (response) => {
          const code = response.statusCode ?? 0;
          // The receiver's answer is not needed; reading it frees the socket for reuse.
          response.resume();
          response.on('end', () => finish(code >= 200 && code < 300 ? { delivered: true, response_code: code } : { delivered: false, response_code: code, error: `the receiver answered ${code}` }));
          response.on('error', (error) => finish({ delivered: false, response_code: code, error: error.message }));
        },
      );
      const timer = setTimeout(() => {
        finish({ delivered: false, error: `no answer within ${this.timeoutMs / 1000} s` });
        request.destroy();
      }, this.timeoutMs);
      request.on('error', (error) => finish({ delivered: false, error: error.message }));
      request.end(body);
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
