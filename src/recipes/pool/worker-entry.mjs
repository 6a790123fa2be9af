// Piscina worker entry. Worker threads do not inherit a loader registered
// through tsx's API (as bin/vigil.js does), so register it here before
// loading the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
const mod = await import('./step-worker.ts');
export default mod.default;
