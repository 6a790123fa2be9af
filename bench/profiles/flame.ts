// A V8 .cpuprofile → folded stacks → an SVG flame graph, and the CPU time per
// request by area. Written here rather than taken from npm: the maintained
// tools (0x, clinic flame) render HTML from their own traces, not a
// .cpuprofile to a static SVG a README can show.

export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }>;
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The profile with only the samples taken between `from` and `to` (µs, CLOCK_MONOTONIC). */
export function windowed(profile: CpuProfile, from: number, to: number): CpuProfile {
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  let t = profile.startTime;
  let last = from;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    if (t < from || t > to) continue;
    samples.push(profile.samples[i]!);
    timeDeltas.push(t - last);
    last = t;
  }
  return { ...profile, startTime: from, endTime: to, samples, timeDeltas };
}

function frameName(frame: CpuProfile['nodes'][number]['callFrame']): string {
  const name = frame.functionName || '(anonymous)';
  if (!frame.url) return name;
  const path = frame.url.replace(/^file:\/\//, '');
  const modules = path.lastIndexOf('/node_modules/');
  // The built server runs dist/, which mirrors src/: its frames are named by their source file.
  const ours = /\/(src|dist)\/(?!.*\/node_modules\/)/.exec(path);
  const short =
    modules >= 0
      ? path.slice(modules + 14)
      : ours
        ? `src/${path.slice(ours.index + ours[0].length)}`.replace(/\.js$/, '.ts')
        : path.replace(/^node:/, 'node:');
  return `${name} ${short}`.replaceAll(';', ',').replaceAll(' ', '\u00a0');
}

/** Folded stacks ("root;…;leaf" → µs), without idle time. */
export function folded(profile: CpuProfile): Map<string, number> {
  const parent = new Map<number, number>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackOf = new Map<number, string>();
  const stack = (id: number): string => {
    const known = stackOf.get(id);
    if (known !== undefined) return known;
    const frames: string[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at)!;
      if (node.callFrame.functionName !== '(root)') frames.push(frameName(node.callFrame));
    }
    const text = frames.reverse().join(';');
    stackOf.set(id, text);
    return text;
  };
  const out = new Map<string, number>();
  // A sample's time is the gap to the next sample (V8 charges each interval to the stack it sampled).
  for (let i = 0; i < profile.samples.length; i++) {
    const s = stack(profile.samples[i]!);
    if (s === '(idle)') continue;
    out.set(s, (out.get(s) ?? 0) + (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0));
  }
  return out;
}

// Where a sample's time goes: the innermost frame that matches a rule names its area.
const areas: Array<[string, RegExp]> = [
  ['GC', /^\(garbage collector\)/],
  // uWS sends inside cork(): a reply's or a stream flush's system call shows as these frames' own time.
  ['socket send (uWS cork/end/write)', /^(sendFull|flush|\(anonymous\))\u00a0src\/transport\/uws(-transport|\/exchange)/],
  ['ajv validation', /^validate\d*\u00a0|ajv\/|^validate\d+$/],
  ['token hash (SHA-256)', /hashToken|tokenMatches|node:internal\/crypto/],
  ['JSON.parse / body decode', /parseJsonBody|^parse\u00a0|JSON\.parse/],
  ['reply stringify (stringifyReply)', /stringifyReply|jsonResponse/],
  ['SQLite statements (better-sqlite3)', /better-sqlite3\/|sql-driver\.ts/],
  ['kysely (query building, driver)', /kysely\//],
  ['group commit (store, batching)', /src\/store\//],
  ['XState (actor transitions)', /xstate\//],
  ['protocol rules (src/protocol)', /src\/protocol\//],
  ['service operations (src/service, src/actors, src/machines)', /src\/(service|actors|machines)\//],
  ['HTTP door (route, query, errors)', /src\/transport\/(http-door|http-routes|browser-guard|sse-door|internal-error)/],
  ['uWS adapter (read headers, body, write)', /src\/transport\/(uws-transport|uws\/|flush-scheduler)/],
  ['Node internals (timers, promises, streams)', /node:/],
  ['native: uWS socket I/O, V8 runtime ((program))', /^\(program\)/],
];

export interface Breakdown {
  totalUs: number;
  rows: Array<{ area: string; us: number; share: number }>;
}

/** µs of main-thread CPU per unit of work by area, from folded stacks. */
export function breakdown(stacks: Map<string, number>, units: number): Breakdown {
  const sums = new Map<string, number>();
  let total = 0;
  for (const [stack, us] of stacks) {
    const frames = stack.split(';');
    let area = 'other JavaScript';
    for (let i = frames.length - 1; i >= 0; i--) {
      const hit = areas.find(([, re]) => re.test(frames[i]!));
      if (hit) {
        area = hit[0];
        break;
      }
    }
    sums.set(area, (sums.get(area) ?? 0) + us);
    total += us;
  }
  const per = (us: number) => Math.round((us / Math.max(1, units)) * 100) / 100;
  const rows = [...sums].sort((a, b) => b[1] - a[1]).map(([area, us]) => ({ area, us: per(us), share: Math.round((us / total) * 1000) / 10 }));
  return { totalUs: per(total), rows };
}

interface Tree {
  name: string;
  value: number;
  children: Map<string, Tree>;
}

const xmlEscape = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

function colour(name: string): string {
  if (/src\//.test(name)) return 'rgb(240,140,50)';
  if (/^\(/.test(name)) return 'rgb(200,200,200)';
  if (/node:/.test(name)) return 'rgb(120,170,230)';
  let h = 0;
  for (const c of name) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return `rgb(${225 + (h % 30)},${190 + (h % 50)},${40 + (h % 60)})`;
}

/** A static flame graph: frames narrower than half a pixel are left out, names are cut to fit. */
export function flameSvg(stacks: Map<string, number>, title: string, width = 1200): string {
  const root: Tree = { name: 'all', value: 0, children: new Map() };
  let depth = 0;
  for (const [stack, us] of stacks) {
    let node = root;
    node.value += us;
    const frames = stack.split(';');
    depth = Math.max(depth, frames.length);
    for (const f of frames) {
      let child = node.children.get(f);
      if (!child) {
        child = { name: f, value: 0, children: new Map() };
        node.children.set(f, child);
      }
      child.value += us;
      node = child;
    }
  }
  const row = 16;
  const top = 40;
  const scale = (width - 20) / Math.max(1, root.value);
  const rects: string[] = [];
  let maxLevel = 0;
  const draw = (node: Tree, x: number, level: number) => {
    const w = node.value * scale;
    if (w < 0.5) return;
    maxLevel = Math.max(maxLevel, level);
    const share = ((node.value / root.value) * 100).toFixed(1);
    const label = node.name.replaceAll('\u00a0', ' ');
    const fits = Math.floor((w - 4) / 6.4);
    const text = fits >= 3 ? (label.length <= fits ? label : `${label.slice(0, fits - 2)}..`) : '';
    rects.push(
      `<g><title>${xmlEscape(label)} (${share}%)</title><rect x="${(10 + x).toFixed(1)}" y="@${level}" width="${w.toFixed(1)}" height="${row - 1}" fill="${colour(node.name)}"/>` +
        (text ? `<text x="${(12 + x).toFixed(1)}" y="@${level}t">${xmlEscape(text)}</text>` : '') +
        '</g>',
    );
    let cx = x;
    for (const child of [...node.children.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      draw(child, cx, level + 1);
      cx += child.value * scale;
    }
  };
  draw(root, 0, 0);
  const height = top + (maxLevel + 1) * row + 10;
  const y = (level: number) => height - 10 - (level + 1) * row;
  const body = rects
    .join('\n')
    .replace(/y="@(\d+)t"/g, (_m, l: string) => `y="${y(Number(l)) + 11}"`)
    .replace(/y="@(\d+)"/g, (_m, l: string) => `y="${y(Number(l))}"`);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="monospace" font-size="11">
<title>${xmlEscape(title)}</title>
<rect width="100%" height="100%" fill="#fff"/>
<text x="10" y="20" font-size="13">${xmlEscape(title)}</text>
<text x="10" y="34" fill="#666">orange: src/ (Vigil), yellow: dependencies, blue: Node internals, grey: V8/native. Hover a frame for its name and share.</text>
${body}
</svg>
`;
}
