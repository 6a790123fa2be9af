// The style of the lease timelines: a bar per holding with its holder's name
// on it, symbols for the moments, a hatched track after a dead letter, and a
// "now" line. Nothing is told by colour alone.
export const timelineStyle = `
.timelines { margin-bottom: 14px; }
.legend { font-size: 12px; white-space: pre-wrap; }
.timeline { border: 1px solid var(--line); border-radius: 8px; padding: 6px 10px 10px; margin-bottom: 10px; background: var(--panel); }
.timeline h3 { margin: 2px 0 6px; font-size: 14px; }
.lane-row { display: flex; align-items: center; gap: 8px; min-height: 26px; }
.lane-subject { flex: 0 0 150px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.lane { position: relative; flex: 1; height: 22px; background: var(--bg); border: 1px solid var(--line); border-radius: 4px; overflow: hidden; }
.axis-lane { background: none; border: none; height: 16px; font-size: 11px; color: var(--muted); overflow: visible; }
.axis-lane span { position: absolute; transform: translateX(-50%); white-space: nowrap; }
.axis-lane span:first-child { transform: none; }
.axis-lane .now-label { font-weight: 700; color: var(--fg); }
.hold { position: absolute; top: 2px; bottom: 2px; background: var(--holder); color: #fff; font-size: 11px; line-height: 16px; padding: 0 4px; border-radius: 3px; overflow: hidden; white-space: nowrap; text-shadow: 0 0 2px #000, 0 0 2px #000; min-width: 2px; }
.hold-until { position: absolute; top: 9px; height: 0; border-top: 2px dashed var(--muted); }
.dead-zone { position: absolute; top: 0; bottom: 0; background: repeating-linear-gradient(45deg, transparent 0 5px, var(--muted) 5px 7px); color: var(--fg); font-size: 11px; padding-left: 18px; line-height: 20px; opacity: .8; }
.moment { position: absolute; top: 1px; transform: translateX(-50%); font-size: 13px; line-height: 18px; color: var(--fg); text-shadow: 0 0 3px var(--bg), 0 0 3px var(--bg); }
.now-line { position: absolute; top: 0; bottom: 0; border-left: 2px solid var(--fg); }
@media (max-width: 600px) { .lane-row { flex-wrap: wrap; } .lane-subject { flex-basis: 100%; } .axis .lane-subject { display: none; } }
`;
