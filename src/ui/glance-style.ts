// The style of the monitors' cards. Each judgement carries a word and a
// symbol (● fresh, ◐ aging, ✕ stale, ⚠, △) besides its colour, and the stale
// badge is also filled, so it reads without telling red from green. Advice
// (ℹ) is muted and dotted: it is no alarm.
export const glanceStyle = `
.glance-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(280px, 1fr)); gap: 10px; margin-bottom: 14px; }
.glance { border: 1px solid var(--line); border-radius: 8px; padding: 8px 10px; background: var(--panel); }
.glance:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.glance h3 { font-size: 14px; margin: 0 0 6px; display: flex; gap: 6px; align-items: baseline; flex-wrap: wrap; }
.spark-wrap { display: flex; align-items: flex-end; gap: 8px; }
svg.spark { width: 180px; height: 36px; flex: none; }
svg.spark rect { fill: var(--accent); }
svg.spark .base { stroke: var(--line); }
.spark-caption { font-size: 12px; color: var(--muted); }
.badges { display: flex; flex-wrap: wrap; gap: 4px; margin-top: 6px; }
.badge { display: inline-block; font-size: 12px; padding: 0 7px; border-radius: 10px; border: 1px solid var(--line); }
.badge.fresh { color: var(--ok); border-color: var(--ok); }
.badge.aging { color: var(--warn); border-color: var(--warn); border-style: dashed; }
.badge.stale { color: #fff; background: var(--bad); border-color: var(--bad); font-weight: 600; }
.badge.none { color: var(--muted); }
.badge.contradiction { color: var(--warn); border-color: var(--warn); font-weight: 600; }
.badge.gap-badge { color: var(--warn); border-color: var(--warn); }
.badge.advice-badge { color: var(--muted); border-style: dotted; }
.advice-toggle { font-size: 12px; margin-top: 4px; padding: 0; border: none; background: none; color: var(--accent); text-decoration: underline; cursor: pointer; }
dl.advice { margin: 4px 0 0; font-size: 12px; }
dl.advice dt { font-weight: 600; color: var(--muted); }
dl.advice dd { margin: 0 0 4px 14px; }
@media (max-width: 600px) { main { padding: 8px; } .glance-grid { grid-template-columns: 1fr; } #monitors table, #actors table, #leases table, #observations table, #subscriptions table, #runs table { display: block; overflow-x: auto; } }
`;
