// Variable resolution and substitution. Priority, lowest to highest: the
// recipe `env` block, process environment variables not starting with
// VIGIL_, then `--var NAME=value` and `--data-var NAME=value` (variables
// from outside: outside-vars.ts). Text substitutes $NAME and ${NAME};
// `$$` is a literal dollar sign. In text a shell runs, a variable from
// outside is placed as data (shell-data.ts), never as code.
import { RecipeInputError } from './errors.ts';
import { placeInShell } from './shell-data.ts';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const REFERENCE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

export function parseVarFlags(flags: string[], option = '--var'): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const flag of flags) {
    const eq = flag.indexOf('=');
    const name = eq > 0 ? flag.slice(0, eq) : '';
    if (!NAME.test(name)) {
      throw new RecipeInputError(
        `${option} ${JSON.stringify(flag)}: expected NAME=value, where NAME is letters, digits and _ not starting with a digit`,
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
  return substituteWith(text, vars, (_name, value) => value);
}

/** Substitutes variables, each value as `place` writes it; names that are set nowhere are returned in `missing`. */
export function substituteWith(text: string, vars: Record<string, string>, place: (name: string, value: string) => string): { text: string; missing: string[] } {
  const missing = new Set<string>();
  const out = text.replace(REFERENCE, (match, braced: string | undefined, bare: string | undefined) => {
    if (match === '$$') return '$';
    const name = (braced ?? bare)!;
    const value = vars[name];
    if (value === undefined) {
      missing.add(name);
      return match;
    }
    return place(name, value);
  });
  return { text: out, missing: [...missing] };
}

/**
 * Substitutes variables into text a shell runs: a variable for which `isData` holds (one from outside) is
 * placed quoted for where it stands, the others as in `substitute`. `error`: a value that could not be placed.
 */
export function substituteShell(
  text: string,
  vars: Record<string, string>,
  isData: (name: string) => boolean,
  options: { singleLine?: boolean } = {},
): { text: string; missing: string[]; error?: string } {
  let missing: string[] = [];
  const placed = placeInShell((hole) => {
    const r = substituteWith(text, vars, (name, value) => (isData(name) ? hole(value, `variable ${name} (from outside)`) : value));
    missing = r.missing;
    return r.text;
  }, options);
  if ('error' in placed) return { text, missing, error: placed.error };
  return { text: placed.text, missing };
}
