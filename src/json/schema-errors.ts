// Turns ajv errors into sentences that name the field and what is allowed.
import type { ErrorObject } from 'ajv';

/** `/steps/2/timeout` in `doc` → `steps[2] ("build").timeout`. */
export function fieldPath(instancePath: string, doc: unknown): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let out = '';
  let node: unknown = doc;
  for (const part of parts) {
    if (Array.isArray(node)) {
      const item: unknown = node[Number(part)];
      const label =
        item && typeof item === 'object' && typeof (item as { label?: unknown }).label === 'string'
          ? ` ("${(item as { label: string }).label}")`
          : '';
      out += `[${part}]${label}`;
      node = item;
    } else {
      out += out === '' ? part : `.${part}`;
      node = node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
    }
  }
  return out === '' ? '(top level)' : out;
}

interface NamesSchema {
  pattern?: string;
  maxLength?: number;
}

/** The patterns property names are held to, said in words. */
const namePatterns: Record<string, string> = {
  '^[A-Za-z_][A-Za-z0-9_]*$': 'names are letters, digits and _, not starting with a digit',
  '^[A-Za-z0-9][A-Za-z0-9_.-]*$': 'names are letters, digits, _, . and -, starting with a letter or digit',
};

function namesRule(names: NamesSchema): string {
  const rules = [];
  if (names.pattern) rules.push(namePatterns[names.pattern] ?? `names must match ${names.pattern}`);
  if (names.maxLength !== undefined) rules.push(`at most ${names.maxLength} characters`);
  return rules.join(', ');
}

function describe(error: ErrorObject, doc: unknown): string {
  const where = fieldPath(error.instancePath, doc);
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${where === '(top level)' ? '' : `${where}: `}missing required field "${String(p.missingProperty)}"`;
    case 'additionalProperties': {
      const allowed = Object.keys(((error.parentSchema as { properties?: object })?.properties ?? {}) as object);
      return `${where}: unknown field "${String(p.additionalProperty)}"; allowed: ${allowed.join(', ')}`;
    }
    case 'enum':
      return `${where}: ${JSON.stringify(error.data)} is not allowed; allowed: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'type':
      return `${where}: must be ${String(p.type).replace(',', ' or ')}, got ${JSON.stringify(error.data)}`;
    case 'pattern':
      return `${where}: ${JSON.stringify(error.data)} must match ${String(p.pattern)}`;
    case 'propertyNames':
      return `${where}: property name ${JSON.stringify(p.propertyName)} is not allowed (${namesRule((error.parentSchema as { propertyNames?: NamesSchema } | undefined)?.propertyNames ?? {})})`;
    case 'minimum':
    case 'exclusiveMinimum':
    case 'maximum':
    case 'minItems':
    case 'minLength':
      return `${where}: ${error.message ?? 'is out of range'}, got ${JSON.stringify(error.data)}`;
    default:
      return `${where}: ${error.message ?? error.keyword}`;
  }
}

/** One line per problem; ajv's structural `if` noise is dropped. */
export function describeSchemaErrors(errors: ErrorObject[] | null | undefined, doc: unknown): string[] {
  // A property name's own errors (ajv sets propertyName on them) are said by its propertyNames error, naming it.
  const lines = (errors ?? []).filter((e) => e.keyword !== 'if' && e.propertyName === undefined).map((e) => describe(e, doc));
  return [...new Set(lines)];
}
