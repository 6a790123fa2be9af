// Variable resolution and substitution. Priority, lowest to highest: the
// recipe `env` block, process environment variables not starting with
// VIGIL_, then `--var NAME=value`. Text substitutes $NAME and ${NAME};
// `$$` is a literal dollar sign.
import { RecipeInputError } from './errors.ts';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const REFERENCE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

export function parseVarFlags(flags: string[]): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const flag of flags) {
    const eq = flag.indexOf('=');
    const name = eq > 0 ? flag.slice(0, eq) : '';
    if (!NAME.test(name)) {
      throw new RecipeInputError(
        `--var ${JSON.stringify(flag)}: expected NAME=value, where NAME is letters, digits and _ not starting with a digit`,
      );
    }
    vars[name] = flag.slice(eq + 1);
  }
  return vars;
}

export function resolveVariables(
  recipeEnv: Record<string, string> | undefined,
  processEnv: NodeJS.ProcessEnv,
  cliVars: Record<string, string>,
): Record<string, string> {
  const vars: Record<string, string> = { ...(recipeEnv ?? {}) };
  for (const [k, v] of Object.entries(processEnv)) if (v !== undefined && !k.startsWith('VIGIL_')) vars[k] = v;
  return Object.assign(vars, cliVars);
}

/** Substitutes variables; names that are set nowhere are returned in `missing`. */
export function substitute(text: string, vars: Record<string, string>): { text: string; missing: string[] } {
  const missing = new Set<string>();
  const out = text.replace(REFERENCE, (match, braced: string | undefined, bare: string | undefined) => {
    if (match === '$$') return '$';
    const name = (braced ?? bare)!;
    const value = vars[name];
    if (value === undefined) {
      missing.add(name);
      return match;
    }
    return value;
  });
  return { text: out, missing: [...missing] };
}
