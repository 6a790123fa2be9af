// Module hooks for check-layers.mjs: dependency-cruiser's import of "typescript" gets the shim.
const shim = new URL("./typescript-shim.mjs", import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if (specifier === "typescript" && context.parentURL?.includes("/dependency-cruiser/")) {
    return { url: shim, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
