// The protocol's request schemas against the JSON Schema meta-schema, with the
// protocol's own keywords. A server no longer checks them when it builds its
// validators (src/protocol/validate.ts, protocolAjv), so a schema written wrong
// is caught here, before it ships.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { protocolAjv } from '../../src/protocol/validate.ts';

const dir = join(import.meta.dirname, '../../src/protocol/schemas');
const ids = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { $id: string }).$id);

it("every request schema is valid JSON Schema and compiles in strict mode with the protocol's keywords", () => {
  // Adding a schema that the meta-schema refuses throws, naming it.
  const ajv = protocolAjv({ validateSchemas: true });
  expect(ids.length).toBe(18);
  for (const id of ids) expect(ajv.getSchema(id), id).toBeTypeOf('function');
});
