// The dashboard's HTML and style. Everything it needs is served by this
// server (no CDN): it works offline and under a strict content policy. The
// script is a classic one: a module script is fetched with an Origin header,
// which the browser rules of the API would refuse.
import { chartStyle } from './chart-style.ts';
import { glanceStyle } from './glance-style.ts';
import { timelineStyle } from './timeline-style.ts';
import { waterfallStyle } from './waterfall-style.ts';

const style = `
:root { color-scheme: light dark; --fg: #1c1f24; --muted: #5d6673; --line: #d9dde3; --bg: #fff; --panel: #f5f7fa; --ok: #1d7a3e; --warn: #a15c00; --bad: #b3261e; --accent: #2458d6; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e9ee; --muted: #9aa4b2; --line: #343a44; --bg: #14171c; --panel: #1c2027; --ok: #4cc17a; --warn: #e3a33b; --bad: #f2675e; --accent: #7aa2ff; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 12px; align-items: center; padding: 10px 16px; border-bottom: 1px solid var(--line); background: var(--panel); flex-wrap: wrap; }
header h1 { font-size: 16px; margin: 0 12px 0 0; }
nav { display: flex; gap: 4px; flex-wrap: wrap; }
nav button { border: 1px solid var(--line); background: var(--bg); color: var(--fg); padding: 4px 10px; border-radius: 6px; cursor: pointer; }
nav button[aria-selected="true"] { background: var(--accent); color: #fff; border-color: var(--accent); }
#live { margin-left: auto; font-size: 12px; color: var(--muted); }
#live.on::before { content: "●"; color: var(--ok); margin-right: 4px; }
#live.off::before { content: "●"; color: var(--bad); margin-right: 4px; }
form { display: flex; gap: 6px; }
#token-form input { width: 260px; padding: 3px 6px; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); }
#obs-filter label { display: inline-flex; align-items: center; gap: 4px; }
main { padding: 12px 16px; }
section[hidden] { display: none; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
.pill { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 12px; border: 1px solid var(--line); }
.pill.active, .pill.watching, .pill.live, .pill.held, .pill.running { color: var(--ok); border-color: var(--ok); }
.pill.paused, .pill.backing_off, .pill.starting, .pill.free { color: var(--warn); border-color: var(--warn); }
.pill.retired, .pill.stopped, .pill.dead_lettered, .pill.error { color: var(--bad); border-color: var(--bad); }
.label { font-size: 12px; color: var(--muted); }
.gap { display: inline-block; color: var(--warn); font-size: 12px; margin-right: 6px; }
.gap.advice { color: var(--muted); }
.empty { color: var(--muted); padding: 16px 0; }
.data { max-width: 340px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.data.open { max-width: 560px; white-space: normal; }
.data pre { margin: 2px 0 0; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 320px; overflow: auto; }
.data-toggle { padding: 0 5px; margin-right: 4px; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); cursor: pointer; font-size: 11px; }
.actors-note { font-size: 12px; margin: 0 0 6px; }
${chartStyle}${glanceStyle}${timelineStyle}${waterfallStyle}
#obs-filter { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 0 0 8px; }
#obs-filter[hidden] { display: none; }
#obs-filter input:not([type]) { width: 200px; padding: 3px 6px; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); }
`;

export function dashboardPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Vigil dashboard</title><link rel="icon" href="data:,"><style>${style}</style></head>
<body>
<header>
  <h1>Vigil</h1>
  <nav role="tablist">
    <button data-view="monitors" aria-selected="true">Monitors</button>
    <button data-view="subscriptions">Subscriptions</button>
    <button data-view="leases">Leases</button>
    <button data-view="observations">Observations</button>
    <button data-view="runs">Recipe runs</button>
    <button data-view="actors">Actors</button>
    <button data-view="charts">Statecharts</button>
  </nav>
  <form id="token-form"><input id="token" type="password" placeholder="bearer token (owner or admin)" autocomplete="off"><button>Use</button></form>
  <span id="live" class="off">connecting</span>
</header>
<main>
  <section id="monitors"></section>
  <section id="subscriptions" hidden></section>
  <section id="leases" hidden></section>
  <section id="observations" hidden></section>
  <section id="runs" hidden></section>
  <section id="actors" hidden></section>
  <section id="charts" hidden></section>
</main>
<script src="/ui/elk.js" defer></script>
<script src="/ui/chart.js" defer></script>
<script src="/ui/glance.js" defer></script>
<script src="/ui/timeline.js" defer></script>
<script src="/ui/waterfall.js" defer></script>
<script src="/ui/filter.js" defer></script>
<script src="/ui/app.js" defer></script>
</body></html>`;
}
