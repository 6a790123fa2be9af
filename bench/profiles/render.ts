// `npx tsx bench/profiles/render.ts <dir>...`: redraws each <scenario>.folded in
// the directories as its SVG and recomputes the areas in its JSON (after a
// change to the renderer or to the area rules in flame.ts).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { breakdown, flameSvg } from './flame.ts';

for (const dir of process.argv.slice(2)) {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.folded'))) {
    const name = file.slice(0, -'.folded'.length);
    const stacks = new Map<string, number>();
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const space = line.lastIndexOf(' ');
      if (space > 0) stacks.set(line.slice(0, space), Number(line.slice(space + 1)));
    }
    const summary = JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8'));
    const areas = breakdown(stacks, summary.requests);
    writeFileSync(join(dir, `${name}.json`), `${JSON.stringify({ ...summary, areas }, null, 2)}\n`);
    const title = `${name} (${summary.label}): ${summary.requests} ${summary.unit}s, server CPU ${summary.cpuUsPerUnit} µs per ${summary.unit} (utime+stime), profiled main thread ${areas.totalUs} µs`;
    writeFileSync(join(dir, `${name}.svg`), flameSvg(stacks, title));
    console.log(`${dir}/${name}: ${areas.rows.map((r) => `${r.area} ${r.share}%`).join(', ')}`);
  }
}
