// The tool surface of the `ai.vigil/monitors` extension (seed "Tool
// extension"): each tool names the operation it runs and publishes a plain
// JSON Schema for its input. The schemas are derived from the request schemas
// the service validates with, so a field is described in one place only.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OperationName } from '../service/operations.ts';
import { type VocabularyName, vocabularies } from '../protocol/vocabulary.ts';

type Json = Record<string, unknown>;

export const configureActions = ['update', 'pause', 'resume', 'retire'] as const;
export type ConfigureAction = (typeof configureActions)[number];

export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Json & { type: 'object' };
  /** The operation a call runs; monitor_configure picks it from its `action`. */
  readonly operation: OperationName | ((input: Json) => OperationName | undefined);
}

const schemaDir = join(dirname(fileURLToPath(import.meta.url)), '../protocol/schemas');

function loadSchemas(): Map<string, Json> {
  const schemas = new Map<string, Json>();
  for (const file of readdirSync(schemaDir).filter((f) => f.endsWith('.json'))) {
    const schema = JSON.parse(readFileSync(join(schemaDir, file), 'utf8')) as Json;
    schemas.set(String(schema.$id), schema);
  }
  return schemas;
}

const digits = '^[0-9]{1,15}$';

/**
 * Rewrites one schema node into plain JSON Schema: `$ref`s are inlined, and
 * the validator's own keywords become what any client understands —
 * `vocabulary` an enum, `wholeNumber` an integer or a digit string,
 * `timestamp` a date-time string.
 */
function plain(node: unknown, base: Json, schemas: Map<string, Json>): unknown {
  if (Array.isArray(node)) return node.map((item) => plain(item, base, schemas));
  if (node === null || typeof node !== 'object') return node;
  const source = node as Json;
  if (typeof source.$ref === 'string') return plain(resolveRef(source.$ref, base, schemas), refBase(source.$ref, base, schemas), schemas);
  const out: Json = {};
  for (const [key, value] of Object.entries(source)) {
    switch (key) {
      case '$id':
      case '$defs':
        break;
      case 'vocabulary':
        out.type = 'string';
        out.enum = [...vocabularies[value as VocabularyName]];
        break;
      case 'wholeNumber': {
        const range = value as { min?: number; max?: number };
        out.type = ['integer', 'string'];
        out.minimum = range.min ?? 0;
        if (range.max !== undefined) out.maximum = range.max;
        out.pattern = digits;
        break;
      }
      case 'timestamp':
        out.type = 'string';
        out.format = 'date-time';
        break;
      case 'properties':
        out.properties = Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, plain(v, base, schemas)]));
        break;
      default:
        out[key] = plain(value, base, schemas);
    }
  }
  return out;
}

function refBase(ref: string, base: Json, schemas: Map<string, Json>): Json {
  const [file] = ref.split('#');
  return file ? schemas.get(file)! : base;
}

function resolveRef(ref: string, base: Json, schemas: Map<string, Json>): unknown {
  const [file, pointer = ''] = ref.split('#');
  let node: unknown = file ? schemas.get(file) : base;
  if (node === undefined) throw new Error(`schema reference ${ref} names no schema in ${schemaDir}`);
  for (const part of pointer.split('/').filter((p) => p.length > 0)) node = (node as Json)[part];
  if (node === undefined) throw new Error(`schema reference ${ref} points nowhere`);
  return node;
}

const bearer = {
  type: 'string',
  description:
    'The token for this call (owner, subscription, subscribe or registration token), as the HTTP binding takes it in "Authorization: Bearer".',
};

interface Shape {
  readonly schema: string;
  /** Fields added before the schema's own (path parameters that travel apart over HTTP). */
  readonly extra?: Json;
  readonly required?: readonly string[];
}

function inputSchema(schemas: Map<string, Json>, shape: Shape): ToolSpec['inputSchema'] {
  const derived = plain(schemas.get(shape.schema), schemas.get(shape.schema)!, schemas) as Json;
  const required = [...(shape.required ?? []), ...((derived.required as string[] | undefined) ?? [])];
  const schema: Json = {
    type: 'object',
    properties: { ...shape.extra, ...(derived.properties as Json | undefined), bearer },
  };
  if (required.length > 0) schema.required = [...new Set(required)];
  if (derived.additionalProperties === false) schema.additionalProperties = false;
  return schema as ToolSpec['inputSchema'];
}

function buildTools(): readonly ToolSpec[] {
  const schemas = loadSchemas();
  const monitorId = plain({ $ref: 'common#/$defs/monitorId' }, {}, schemas) as Json;
  const tool = (name: string, description: string, operation: ToolSpec['operation'], shape: Shape): ToolSpec => ({
    name,
    description,
    operation,
    inputSchema: inputSchema(schemas, shape),
  });
  return [
    tool('monitor_discover', 'Protocol version, capabilities, limits and server identity (no token needed).', 'monitors/discover', {
      schema: 'empty',
    }),
    tool('monitor_list', 'The monitors visible to the caller: public ones, and those the bearer owns or holds the subscribe token of.', 'monitors/list', {
      schema: 'empty',
    }),
    tool('monitor_get', 'One monitor definition, with its head and status.', 'monitors/get', { schema: 'monitor-ref' }),
    tool(
      'monitor_create',
      'Create a monitor. The reply holds owner_token (and subscribe_token when asked for): they are shown this once.',
      'monitors/create',
      { schema: 'monitor-create' },
    ),
    tool(
      'monitor_configure',
      'Update (with a patch), pause, resume or retire a monitor; needs its owner token and a reason. Retirement is final.',
      (input) => (configureActions.includes(input.action as ConfigureAction) ? `monitors/${input.action as ConfigureAction}` : undefined),
      {
        schema: 'monitor-configure',
        extra: { action: { type: 'string', enum: [...configureActions], description: 'What to do with the monitor.' } },
        required: ['action'],
      },
    ),
    tool(
      'monitor_publish',
      'Publish one observation to a monitor (owner token). Provenance (tier, origin, verification) defaults from the actor and is capped by the owner.',
      'monitors/publish',
      { schema: 'observation', extra: { id: { ...monitorId, description: 'The monitor to publish to.' } }, required: ['id'] },
    ),
    tool('monitor_state', 'The computed state document of a monitor: counters, ages, open contradictions, confidence gaps.', 'monitors/state', {
      schema: 'monitor-ref',
    }),
    tool(
      'monitor_subscribe',
      'Subscribe to a monitor; the reply holds the subscription token (shown once). Subscribing again with the same subscriber re-keys it and keeps the cursor.',
      'feeds/subscribe',
      { schema: 'subscribe' },
    ),
    tool(
      'monitor_pull',
      'Read observations from the cursor (subscription token). Never moves the cursor: acknowledge `next` with monitor_ack after handling the page. Other filter keys (types, subjects, ...) may narrow the stored filter.',
      'feeds/pull',
      { schema: 'pull' },
    ),
    tool('monitor_ack', 'Commit the cursor of a subscription (usually the `next` of the last pull).', 'feeds/ack', { schema: 'ack' }),
    tool(
      'lease_claim',
      'Claim a subject for exclusive work under a time-limited lease (subscription with the act capability).',
      'leases/claim',
      { schema: 'lease-claim' },
    ),
    tool('lease_complete', 'Finish the work on a claimed subject, with an outcome and evidence.', 'leases/complete', {
      schema: 'lease-complete',
    }),
    tool('lease_release', 'Give a claimed subject back so that another subscription may claim it.', 'leases/release', {
      schema: 'lease-release',
    }),
  ];
}

let built: readonly ToolSpec[] | undefined;
/** The tools, built from the protocol's schemas on first use: not at every start of the CLI, whose other commands never need them. */
export function allTools(): readonly ToolSpec[] {
  built ??= buildTools();
  return built;
}

export function toolNamed(name: string): ToolSpec | undefined {
  return allTools().find((t) => t.name === name);
}

/** The operation a call of `tool` with `input` runs; undefined when the input cannot say (a bad `action`). */
export function operationOf(tool: ToolSpec, input: Json): OperationName | undefined {
  return typeof tool.operation === 'function' ? tool.operation(input) : tool.operation;
}

/** The tool list as `tools/list` answers it. */
export function listedTools(): { name: string; description: string; inputSchema: ToolSpec['inputSchema'] }[] {
  return allTools().map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
}
