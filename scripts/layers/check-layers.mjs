// `npm run lint` checks the layering with dependency-cruiser (rules in .dependency-cruiser.cjs).
// It is held at 17.x, the last line that supports Node 20 (18.x, with commander 15 and watskeburt 6,
// asks for Node 22 and npm prints EBADENGINE on install). It reads TypeScript only through
// TypeScript < 7's JavaScript API (TypeScript 7 has none), so this runs its API in-process with a
// small esbuild-backed stand-in for that API. With a TypeScript that has the API,
// `depcruise src --config` does the same.
import Module, { register } from "node:module";
import { fileURLToPath } from "node:url";

register("./resolve-hooks.mjs", import.meta.url);

const shimManifest = fileURLToPath(new URL("./typescript-shim.json", import.meta.url));
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (request === "typescript/package.json" && parent?.filename?.includes("/dependency-cruiser/")) {
    return shimManifest;
  }
  return resolveFilename.call(this, request, parent, ...rest);
};

const { cruise } = await import("dependency-cruiser");
const { createRequire } = await import("node:module");
const require = createRequire(import.meta.url);
const config = require(`${process.cwd()}/.dependency-cruiser.cjs`);
const { options = {}, ...ruleSet } = config;

const targets = process.argv.slice(2).filter((arg) => !arg.startsWith("-"));
const outputType = process.argv.find((arg) => arg.startsWith("--output-type="))?.split("=")[1] ?? "err-long";
const result = await cruise(targets.length > 0 ? targets : ["src"], {
  ...options,
  tsPreCompilationDeps: false,
  validate: true,
  ruleSet,
  outputType,
});
process.stdout.write(typeof result.output === "string" ? result.output : JSON.stringify(result.output));
process.exitCode = result.exitCode > 0 ? 1 : 0;
