// `adversarial`: blue → red → judge rounds in one isolated copy (run.ts).
import type { RecipeTypeDef } from '../type-def.ts';
import { typeSchemaFile } from '../schema-path.ts';
import { runAdversarial } from './run.ts';

export const adversarialType: RecipeTypeDef = {
  type: 'adversarial',
  summary: 'blue builds, red attacks, a judge gives a verdict, round after round',
  schemaFile: typeSchemaFile('adversarial'),
  children: (r) => (r.type === 'adversarial' ? (['blue', 'red', 'judge'] as const).flatMap((side) => (r[side] ? [{ name: r[side].recipe, where: `${side}.recipe` }] : [])) : []),
  composite: runAdversarial,
  isolatesChildren: true,
};
