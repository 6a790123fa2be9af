// The JSON-RPC 2.0 door (§14): POST /mp/v0/rpc, single calls and batches,
// onto the same operations as the HTTP routes. Params are the HTTP body plus
// the path parameters; the bearer is params.bearer or the Authorization header.
import { asProtocolError } from '../protocol/errors.ts';
import { stringifyReply } from '../protocol/raw-json.ts';
import { maxNesting, pathBeyondNesting } from '../protocol/wire-values.ts';
import type { Caller } from '../service/access.ts';
import { invoke, isOperation, type OperationName } from '../service/operations.ts';
import { defaults } from '../service/defaults.ts';
import type { MonitorService } from '../service/service.ts';
import type { FullResponse, HttpRequest } from './http-types.ts';
import { RequestCaller, RequestInvoke } from './request-caller.ts';

/** The seed's method table; admin operations are HTTP-only. */
export const rpcMethods: readonly OperationName[] = [
  'monitors/discover',
  'monitors/list',
  'monitors/get',
  'monitors/create',
  'monitors/update',
  'monitors/pause',
  'monitors/resume',
  'monitors/retire',
  'monitors/state',
  'monitors/publish',
  'feeds/subscribe',
  'feeds/pull',
  'feeds/ack',
  'feeds/seek',
  'feeds/renew',
  'feeds/retire',
  'leases/claim',
  'leases/renew',
  'leases/complete',
  'leases/release',
  'leases/reject',
];
const methodSet = new Set<string>(rpcMethods);

type Id = string | number | null;

interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

const envelope = (id: Id, body: { result: unknown } | { error: RpcError }) => ({ jsonrpc: '2.0', id, ...body });

const envelopeError = (id: Id, code: number, message: string) => envelope(id, { error: { code, message } });

function validId(id: unknown): id is Id {
  return id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

/** The id a reply to `call` carries: its own when it can be read, else null. */
function idOf(call: unknown): Id {
  if (typeof call !== 'object' || call === null || Array.isArray(call)) return null;
  const { id } = call as { id?: unknown };
  return validId(id) ? id : null;
}

/**
 * A call nested too deep to handle safely, answered with its own id; checked
 * before anything re-encodes it. The call (1) and params (1) sit above the
 * body's own levels.
 */
function nestingRefusal(call: unknown): object | undefined {
  const tooDeep = pathBeyondNesting(call, maxNesting + 2);
  if (!tooDeep) return undefined;
  const message = `Invalid request: "${tooDeep.slice(0, 4).join('.')}…" is nested more than ${maxNesting} levels deep (the limit is ${maxNesting} levels); flatten it.`;
  return envelope(idOf(call), { error: { code: -32600, message, data: { code: 'INVALID', error: message, limit: maxNesting } } });
}

/** What every call of one request shares: how to ask whether its client went, and the body as sent. */
interface Sent {
  readonly request: HttpRequest;
  /** The body parsed again, untouched by validation (which coerces values in place); made on the first refusal. */
  pristine?: unknown;
}

/** The params of call `index` (undefined: not a batch) as the client sent them, without `bearer`: what a refusal records. */
function sentParams(sent: Sent, index: number | undefined): unknown {
  sent.pristine ??= JSON.parse(sent.request.body.toString('utf8'));
  const call = index === undefined ? sent.pristine : (sent.pristine as unknown[])[index];
  const { bearer: _, ...input } = ((call as { params?: unknown }).params ?? {}) as Record<string, unknown>;
  return input;
}

/** Handles one call; its reply as JSON text, undefined for a notification. */
async function handleCall(
  service: MonitorService,
  call: unknown,
  caller: Caller,
  sent: Sent,
  index: number | undefined,
  maxPageBytes: number = defaults.maxPageBytes,
): Promise<string | undefined> {
  if (typeof call !== 'object' || call === null || Array.isArray(call)) {
    return stringifyReply(envelopeError(null, -32600, 'Invalid request: each call is a JSON object {jsonrpc: "2.0", method, params?, id?}.'));
  }
  const { jsonrpc, method, params, id } = call as Record<string, unknown>;
  const isNotification = !('id' in call);
  const replyId = idOf(call);
  if (jsonrpc !== '2.0' || typeof method !== 'string' || (!isNotification && !validId(id))) {
    return stringifyReply(envelopeError(replyId, -32600, 'Invalid request: "jsonrpc" must be "2.0", "method" a string and "id" a string, number or null.'));
  }
  if (!methodSet.has(method) || !isOperation(method)) {
    return isNotification ? undefined : stringifyReply(envelopeError(replyId, -32601, `Method not found: "${method}". Methods: ${rpcMethods.join(', ')}.`));
  }
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) {
    return isNotification ? undefined : stringifyReply(envelopeError(replyId, -32602, 'Invalid params: "params" must be an object (the HTTP body plus path parameters).'));
  }
  const { bearer, ...input } = (params ?? {}) as Record<string, unknown>;
  const request = sent.request;
  const as: Caller = typeof bearer === 'string' ? new RequestCaller(bearer, request) : caller;
  try {
    const reply = await invoke(service, method, input, new RequestInvoke(as, request, () => sentParams(sent, index), undefined, maxPageBytes));
    if (isNotification) return undefined;
    // The envelope around the result's text, as JSON.stringify of {jsonrpc, id, result} writes it.
    const result = stringifyReply(reply.body) as string | undefined;
    return result === undefined ? stringifyReply(envelope(replyId, { result: reply.body })) : `{"jsonrpc":"2.0","id":${JSON.stringify(replyId)},"result":${result}}`;
  } catch (thrown) {
    const error = asProtocolError(thrown, `rpc ${method}`);
    return isNotification
      ? undefined
      : stringifyReply(envelope(replyId, { error: { code: error.rpcCode, message: error.message, data: error.toBody() } }));
  }
}

const isLeaseCall = (call: unknown) =>
  typeof call === 'object' && call !== null && typeof (call as { method?: unknown }).method === 'string' && (call as { method: string }).method.startsWith('leases/');

/**
 * Runs a batch's calls one after another while their replies stay within the
 * batch's byte budget; the calls left when it is spent are not run, and each
 * says so (the client sends them again). Consecutive lease calls start
 * together, in order, in one turn: their writes go to the store in one commit,
 * and each is answered after it (protocol.md §21, `leases.batch`). Each call
 * still succeeds or fails on its own. The replies come back as JSON text,
 * each serialised once: measured against the budget and joined as they are.
 */
async function runBatch(service: MonitorService, calls: unknown[], caller: Caller, sent: Sent): Promise<string[] | undefined> {
  const budget = defaults.maxBatchReplyBytes;
  const replies: string[] = [];
  let bytes = 0;
  const refusedOrRun = (call: unknown, index: number, pageBytes: number) => {
    const tooDeep = nestingRefusal(call);
    return tooDeep ? stringifyReply(tooDeep) : handleCall(service, call, caller, sent, index, pageBytes);
  };
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i];
    if (isLeaseCall(call) && budget - bytes > 0) {
      let end = i + 1;
      while (end < calls.length && isLeaseCall(calls[end])) end++;
      const pageBytes = Math.min(defaults.maxPageBytes, budget - bytes);
      const started: Array<string | Promise<string | undefined>> = [];
      for (let j = i; j < end; j++) started.push(refusedOrRun(calls[j], j, pageBytes));
      for (const reply of await Promise.all(started)) {
        if (reply === undefined) continue;
        replies.push(reply);
        bytes += reply.length;
      }
      i = end - 1;
      continue;
    }
    const remaining = budget - bytes;
    if (remaining <= 0) {
      const id = (call as { id?: unknown } | null)?.id;
      if (typeof call === 'object' && call !== null && 'id' in call) replies.push(stringifyReply(spentBudget(validId(id) ? id : null, budget)));
      continue;
    }
    const reply = await refusedOrRun(call, i, Math.min(defaults.maxPageBytes, remaining));
    if (reply === undefined) continue;
    replies.push(reply);
    bytes += reply.length;
  }
  return replies.length === 0 ? undefined : replies;
}

function spentBudget(id: Id, budget: number): object {
  const message = `Not run: this batch's replies reached ${budget} bytes, the most one batch may answer; send this call again.`;
  return envelope(id, { error: { code: -32016, message, data: { code: 'TOO_LARGE', error: message, limit_bytes: budget } } });
}

const jsonHeaders: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'application/json; charset=utf-8' });

const json = (status: number, body: unknown): FullResponse => ({
  kind: 'full',
  status,
  headers: jsonHeaders,
  body: body === undefined ? '' : stringifyReply(body),
});

const jsonText = (status: number, body: string): FullResponse => ({ kind: 'full', status, headers: jsonHeaders, body });

export function createRpcDoor(service: MonitorService) {
  return async (request: HttpRequest, caller: Caller): Promise<FullResponse> => {
    let payload: unknown;
    try {
      payload = JSON.parse(request.body.toString('utf8'));
    } catch (error) {
      return json(200, envelopeError(null, -32700, `Parse error: ${(error as Error).message}.`));
    }
    if (Array.isArray(payload)) {
      if (payload.length === 0) return json(200, envelopeError(null, -32600, 'Invalid request: an empty batch.'));
      if (payload.length > defaults.maxBatchCalls) {
        const message = `Invalid request: a batch holds at most ${defaults.maxBatchCalls} calls; this one holds ${payload.length}. Split it.`;
        return json(400, envelope(null, { error: { code: -32600, message, data: { code: 'TOO_LARGE', error: message, limit: defaults.maxBatchCalls } } }));
      }
      const replies = await runBatch(service, payload, caller, { request });
      return replies === undefined ? json(204, undefined) : jsonText(200, `[${replies.join(',')}]`);
    }
    const tooDeep = nestingRefusal(payload);
    if (tooDeep) return json(400, tooDeep);
    const reply = await handleCall(service, payload, caller, { request }, undefined);
    return reply === undefined ? json(204, undefined) : jsonText(200, reply);
  };
}
