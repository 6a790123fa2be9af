// The Statecharts tab's style. The current state is told by a thick outline
// and the text "◀ now", the edge taken last by a thick dashed line: never by
// colour alone.
export const chartStyle = `
.toolbar { display: flex; gap: 6px; flex-wrap: wrap; margin-bottom: 8px; }
.toolbar button, button.link { border: 1px solid var(--line); background: var(--bg); color: var(--fg); padding: 3px 10px; border-radius: 6px; cursor: pointer; font: inherit; }
.toolbar button[aria-pressed="true"] { background: var(--accent); color: #fff; border-color: var(--accent); }
button:focus-visible, nav button:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.muted { color: var(--muted); }
#chart-picture { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; background: var(--panel); padding: 8px; }
svg.chart { width: 100%; height: auto; display: block; margin: 0 auto; font-family: system-ui, sans-serif; }
svg.chart .state rect { fill: var(--bg); stroke: var(--muted); stroke-width: 1.5; }
svg.chart .state.compound > rect { fill: none; stroke-dasharray: 2 0; }
svg.chart .state.any rect { stroke-dasharray: 4 3; }
svg.chart .state .inner { fill: none; }
svg.chart .state.current > rect:first-child { stroke: var(--accent); stroke-width: 4; }
svg.chart .state.current .name { font-weight: 700; }
svg.chart text { fill: var(--fg); }
svg.chart .name { font-size: 14px; }
svg.chart .note { font-size: 10px; fill: var(--muted); }
svg.chart .now-mark { font-size: 12px; font-weight: 700; fill: var(--accent); }
svg.chart .initial { fill: var(--fg); }
svg.chart .edge { fill: none; stroke: var(--muted); stroke-width: 1.3; }
svg.chart .edge.fired { stroke: var(--accent); stroke-width: 3.5; stroke-dasharray: 7 4; }
svg.chart .arrowhead { fill: var(--muted); }
svg.chart .label { font-size: 11px; }
svg.chart .label-bg { fill: var(--panel); opacity: .92; }
svg.chart .label.delayed { font-style: italic; }
svg.chart .label.fired { font-weight: 700; text-decoration: underline; }
#chart-transitions { padding-left: 20px; }
`;
