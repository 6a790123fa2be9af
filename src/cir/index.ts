// The CIR module's public face, for the CLI, the SDK, recipe types
// (substrate, compound) and live sources:
//   const cir = openCir(projectRoot);            // .vigil/cir.db (or { global: true })
//   cir.capture({ body, type, source, scope })   // → { id }, emits cir.capture
//   cir.query({ type, since: '24h', limit })     // newest first
//   cir.search('text', { limit })                // bm25 (+ cosine)
//   cir.relate(a, b, 'contradicts'); cir.patterns({ minStrength }); cir.contradictions(); cir.stats()
export { cirPath, closeAllCir, openCir } from './open.ts';
export { CirStore } from './store.ts';
export { hashedEmbedder, projectEmbedder } from './embed.ts';
export { parseSince } from './validate.ts';
export type * from './types.ts';
