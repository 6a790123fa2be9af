// The layering of src/, checked by `npm run lint` (scripts/layers/check-layers.mjs runs
// dependency-cruiser with this file). docs/architecture.md draws the same picture.
//
// Each layer may import itself and the layers below it, never one above it. The rooms of one
// layer may import each other (triggers use recipes), as long as no import circle forms.
// A new room must be added to one layer here, or it belongs to none and lint names it.

/** Top to bottom. */
const layers = [
  { name: 'cli', rooms: ['cli'], says: 'the commands: one file per command group' },
  { name: 'sdk', rooms: ['sdk'], says: 'the script sandbox and thin namespace adapters over the rooms below' },
  { name: 'server', files: ['server.ts'], says: 'vigil serve put together: doors, service, cluster, sources, cloud, ui' },
  {
    name: 'features',
    rooms: ['recipes', 'triggers', 'cloud', 'sources', 'ui', 'cir', 'conform', 'ratchet', 'notify', 'health', 'workers', 'bench', 'dispatch'],
    says: 'what Vigil does beyond the monitor service',
  },
  { name: 'doors', rooms: ['transport', 'cluster'], says: 'HTTP, SSE, RPC and MCP doors; a node of a cluster' },
  { name: 'service', rooms: ['service'], says: 'monitors, subscriptions, leases and observations' },
  { name: 'actors', rooms: ['actors'], says: 'the one XState root system' },
  { name: 'machines', rooms: ['machines'], says: 'pure state machines, one per file' },
  { name: 'store', rooms: ['store'], says: 'SQLite and PostgreSQL behind one contract' },
  { name: 'protocol', rooms: ['protocol'], says: 'the wire: schemas, vocabulary, errors' },
  {
    name: 'shared',
    rooms: [
      'errors',
      'home',
      'file-lock',
      'vault',
      'ledger',
      'plugins',
      'run-events',
      'mcp-servers',
      'server-client',
      'workspace',
      'events',
      'net',
      'paths',
      'json',
      'timing',
      'text',
    ],
    files: ['version.ts'],
    says: 'small shared rooms every layer may use',
  },
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const pathsOf = (layer) => [
  ...(layer.rooms ?? []).map((room) => `^src/${escape(room)}/`),
  ...(layer.files ?? []).map((file) => `^src/${escape(file)}$`),
];

const layerRules = layers.slice(1).map((layer, i) => {
  const above = layers.slice(0, i + 1);
  return {
    name: `${layer.name}-imports-only-below`,
    severity: 'error',
    comment: `${layer.name} (${layer.says}) may not import ${above.map((l) => l.name).join(', ')}: they are above it`,
    from: { path: pathsOf(layer) },
    to: { path: above.flatMap(pathsOf) },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'in-a-layer',
      severity: 'error',
      comment: 'every file of src/ belongs to a layer of .dependency-cruiser.cjs: add a new room to one',
      from: { path: '^src/', pathNot: layers.flatMap(pathsOf) },
      to: {},
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'no import circles: pass a narrow interface or a table in instead of importing back',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'a module nothing imports and that imports nothing is dead or forgotten',
      from: { orphan: true, pathNot: ['\\.d\\.ts$', '^src/ui/static/'] },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    moduleSystems: ['es6', 'cjs'],
  },
};
