// The style of the run waterfalls. A status is a word and a symbol on the
// bar; running bars are striped, failed ones hatched and killed ones
// cross-hatched, so the status reads without telling red from green. A bar's
// text has its own contrast: white on the dark fills, black on the light
// ones, and the page's own colour when it stands beside a narrow bar.
export const waterfallStyle = `
.wf-monitor { font-size: 14px; margin: 8px 0; }
.waterfall { border: 1px solid var(--line); border-radius: 8px; padding: 6px 10px 10px; margin-bottom: 10px; background: var(--panel); }
.waterfall h3 { margin: 2px 0; font-size: 14px; display: flex; gap: 6px; align-items: baseline; flex-wrap: wrap; }
.wf-type { font-size: 11px; font-weight: 400; color: var(--muted); border: 1px solid var(--line); border-radius: 4px; padding: 0 4px; }
.wf-meta { margin: 0 0 6px; font-size: 12px; }
.wave-label { font-size: 11px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; margin-top: 4px; border-top: 1px dashed var(--line); padding-left: calc(var(--depth, 0) * 16px); }
.wf-row { display: grid; grid-template-columns: 230px 1fr 150px; gap: 8px; align-items: center; min-height: 24px; }
.wf-name { display: flex; align-items: center; gap: 2px; min-width: 0; padding-left: calc(var(--depth, 0) * 16px); }
.wf-label { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-size: 13px; }
.wf-run > .wf-name .wf-label { font-weight: 600; }
.wf-unrun > .wf-name .wf-label { font-weight: 400; color: var(--muted); padding-left: 22px; }
.wf-toggle { width: 20px; height: 20px; padding: 0; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); cursor: pointer; line-height: 1; flex: none; }
.wf-toggle-space { width: 20px; flex: none; }
.step-name { text-align: left; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; padding: 1px 6px; max-width: 100%; }
.wf-track { position: relative; height: 20px; background: var(--bg); border: 1px solid var(--line); border-radius: 4px; }
.wf-axis { min-height: 16px; }
.wf-scale { position: relative; height: 16px; border-bottom: 1px solid var(--line); }
.wf-tick { position: absolute; bottom: 0; font-size: 10px; color: var(--muted); padding-left: 2px; border-left: 1px solid var(--line); line-height: 14px; white-space: nowrap; font-variant-numeric: tabular-nums; }
.wf-tick.end { transform: translateX(-100%); border-left: none; border-right: 1px solid var(--line); padding: 0 2px 0 0; }
.wf-bar { position: absolute; top: 1px; bottom: 1px; min-width: 3px; border-radius: 3px; font-size: 11px; line-height: 16px; white-space: nowrap; color: #fff; }
.wf-text { position: absolute; top: 0; padding: 0 4px; }
.wf-bar.text-inside { overflow: hidden; }
.wf-bar.text-inside .wf-text { left: 0; right: 0; overflow: hidden; text-overflow: ellipsis; }
.wf-bar.text-after .wf-text { left: 100%; color: var(--fg); }
.wf-bar.text-before .wf-text { right: 100%; color: var(--fg); }
.wf-note { position: absolute; left: 4px; top: 0; font-size: 11px; line-height: 18px; color: var(--muted); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: calc(100% - 8px); }
.wf-bar.succeeded, .wf-bar.reused { background: #0072B2; }
.wf-bar.running, .wf-bar.awaiting_gate { background: repeating-linear-gradient(135deg, #E69F00 0 8px, #f5c04a 8px 16px); color: #000; }
.wf-bar.failed, .wf-bar.over_budget, .wf-bar.timed_out, .wf-bar.conflict, .wf-bar.interrupted { background: repeating-linear-gradient(45deg, #D55E00 0 4px, #8f3f00 4px 8px); }
.wf-bar.killed, .wf-bar.fenced { background: repeating-linear-gradient(45deg, #7d2f6b 0 3px, #4a1a3f 3px 6px), #4a1a3f; }
.wf-bar.cancelled, .wf-bar.skipped, .wf-bar.pending { background: #4b5563; }
.wf-bar.text-inside.failed .wf-text, .wf-bar.text-inside.killed .wf-text, .wf-bar.text-inside.fenced .wf-text, .wf-bar.text-inside.over_budget .wf-text, .wf-bar.text-inside.timed_out .wf-text, .wf-bar.text-inside.conflict .wf-text, .wf-bar.text-inside.interrupted .wf-text { text-shadow: 0 0 2px #000, 0 0 2px #000; }
.wf-usage { font-size: 12px; color: var(--muted); font-variant-numeric: tabular-nums; }
.step-details { margin: 2px 0 6px 238px; padding: 6px 8px; background: var(--bg); border: 1px solid var(--line); border-radius: 4px; font-size: 12px; white-space: pre-wrap; }
@media (max-width: 600px) {
  .wf-row { grid-template-columns: 1fr; gap: 2px; margin-bottom: 4px; }
  .wf-axis > .wf-name, .wf-axis > span:last-child { display: none; }
  .wf-usage:empty { display: none; }
  .step-details { margin-left: 0; }
}
`;
