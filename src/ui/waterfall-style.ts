// The style of the run waterfalls. A status is a word and a symbol on the
// bar; running bars are striped and failed ones hatched, so the status reads
// without telling red from green.
export const waterfallStyle = `
.wf-monitor { font-size: 14px; margin: 8px 0; }
.waterfall { border: 1px solid var(--line); border-radius: 8px; padding: 6px 10px 10px; margin-bottom: 10px; background: var(--panel); }
.waterfall h3 { margin: 2px 0; font-size: 14px; display: flex; gap: 6px; align-items: baseline; flex-wrap: wrap; }
.wf-meta { margin: 0 0 6px; font-size: 12px; }
.wave-label { font-size: 11px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; margin-top: 4px; border-top: 1px dashed var(--line); }
.wf-row { display: grid; grid-template-columns: 140px 1fr 150px; gap: 8px; align-items: center; min-height: 24px; }
.step-name { text-align: left; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; padding: 1px 6px; }
.wf-track { position: relative; height: 20px; background: var(--bg); border: 1px solid var(--line); border-radius: 4px; }
.wf-bar { position: absolute; top: 1px; bottom: 1px; min-width: 3px; border-radius: 3px; font-size: 11px; line-height: 16px; padding: 0 4px; white-space: nowrap; overflow: hidden; color: #fff; text-shadow: 0 0 2px #000, 0 0 2px #000; }
.wf-bar.succeeded { background: #0072B2; }
.wf-bar.running { background: repeating-linear-gradient(135deg, #E69F00 0 8px, #c98a00 8px 16px); }
.wf-bar.failed, .wf-bar.over_budget, .wf-bar.timed_out { background: repeating-linear-gradient(45deg, #D55E00 0 4px, #8f3f00 4px 8px); }
.wf-bar.cancelled, .wf-bar.skipped, .wf-bar.pending { background: var(--muted); }
.wf-usage { font-size: 12px; color: var(--muted); font-variant-numeric: tabular-nums; }
.step-details { margin: 2px 0 6px 148px; padding: 6px 8px; background: var(--bg); border: 1px solid var(--line); border-radius: 4px; font-size: 12px; white-space: pre-wrap; }
@media (max-width: 600px) { .wf-row { grid-template-columns: 1fr; gap: 2px; } .step-details { margin-left: 0; } }
`;
