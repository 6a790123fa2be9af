// What dependency-cruiser needs of the "typescript" package to read .ts files (transpileModule),
// done by esbuild: the installed TypeScript 7 has no JavaScript API. Type-only imports are made
// value imports first so that a layer crossed only by a type still counts as crossed.
import { transformSync } from "esbuild";

export const version = "5.9.0-esbuild-shim";
// Read when dependency-cruiser loads; its TypeScript-AST reader stays off (tsPreCompilationDeps: false).
export const SyntaxKind = {};
export const ScriptTarget = {};

const TYPE_ONLY_IMPORT = /\b(import|export)\s+type\s+(?=[{*])/g;
const TYPE_ONLY_DEFAULT_IMPORT = /\bimport\s+type\s+(?=[A-Za-z_$][\w$]*\s+from\b)/g;

export function transpileModule(source, options = {}) {
  const code = source.replace(TYPE_ONLY_IMPORT, "$1 ").replace(TYPE_ONLY_DEFAULT_IMPORT, "import ");
  const loader = String(options.fileName ?? "").endsWith(".tsx") ? "tsx" : "ts";
  const result = transformSync(code, {
    loader,
    format: "esm",
    target: "es2022",
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
  });
  return { outputText: result.code };
}

export default { version, SyntaxKind, ScriptTarget, transpileModule };
