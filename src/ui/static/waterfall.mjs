// Runs as waterfalls (served as /ui/waterfall.js, a classic script loaded
// before app.js, which puts window.vigilWaterfalls(view) above the runs'
// table). Each run is one timeline: a composite's children, theirs, and every
// step of each, all on the same time axis, from the run's start to its end
// (or now while it runs, so running bars grow), nested under their parent
// and folded away with its button. The times are the run records' own
// (started, ended). Waves head the steps only where a recipe has waves. Each
// bar says its status in a word and a symbol besides its colour and pattern,
// and its text sits inside the bar or beside it, never cut to nothing.
// A step's button opens what the server knows of it.
(() => {
  const marks = {
    succeeded: '✓',
    failed: '✗',
    running: '▶',
    pending: '…',
    cancelled: '⊘',
    skipped: '⊘',
    over_budget: '$',
    timed_out: '◷',
    killed: '⊗',
    fenced: '⊟',
    interrupted: '↯',
    conflict: '≠',
    awaiting_gate: '‖',
    reused: '↺',
  };
  const open = new Set();
  const folded = new Set();
  const el = (tag, attrs = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
    node.append(...children.map((c) => (c instanceof Node ? c : String(c ?? ''))));
    return node;
  };
  /** As `vigil runs` prints it: one decimal under a minute. */
  const secs = (ms) => (ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.floor((ms % 60_000) / 1000)} s`);
  const tokens = (u) => (u ? `${u.input_tokens + u.output_tokens} tok` : '');
  const usd = (u) => (!u ? '' : u.usd_unknown ? 'usd unknown' : `$${u.usd.toFixed(4)}`);
  const at = (iso) => (iso ? Date.parse(iso) : Number.NaN);
  const tree = (run) => [run, ...(run.children ?? []).flatMap(tree)];

  function usageOf(run) {
    const used = tree(run)
      .flatMap((r) => r.steps)
      .filter((s) => s.usage);
    return {
      any: used.length > 0,
      tokens: used.reduce((n, s) => n + s.usage.input_tokens + s.usage.output_tokens, 0),
      usd: used.reduce((n, s) => n + (s.usage.usd ?? 0), 0),
      unknown: used.some((s) => s.usage.usd_unknown),
    };
  }

  function totals(run) {
    const u = usageOf(run);
    return u.any ? `${u.tokens} tokens · $${u.usd.toFixed(4)}${u.unknown ? ' (some usd unknown)' : ''}` : 'no usage reported';
  }

  /** Used against the run's budget, per limit it sets: "tokens 45 of 1,000 (5%)". */
  function budgetUse(run) {
    const b = run.budget;
    if (!b) return null;
    const used = usageOf(run);
    const parts = [];
    if (b.tokens !== undefined) parts.push(`tokens ${used.tokens.toLocaleString()} of ${b.tokens.toLocaleString()} (${Math.round((used.tokens / b.tokens) * 100)}%)`);
    if (b.usd !== undefined) parts.push(`$${used.usd.toFixed(4)} of $${b.usd} (${Math.round((used.usd / b.usd) * 100)}%)`);
    if (b.minutes !== undefined) parts.push(`${b.minutes} min at most`);
    return parts.length ? `budget: ${parts.join(', ')}` : null;
  }

  function details(run, step) {
    const lines = [
      `status: ${step.status}${step.exit_code !== null ? ` (exit ${step.exit_code})` : ''}`,
      `backend: ${step.backend ?? '—'}; wave ${step.wave ?? '—'}`,
      `started ${step.started ?? '—'}, ended ${step.ended ?? '—'}`,
      step.reason ? `reason: ${step.reason}` : null,
      step.killed_by ? `stopped by ${step.killed_by}` : null,
      step.usage ? `usage: ${step.usage.input_tokens} input + ${step.usage.output_tokens} output tokens, ${usd(step.usage)}` : null,
      step.log_tail
        ? `last lines of its log (the whole log: .vigil/runs/${run.id}/ in the project that ran it):\n${step.log_tail}`
        : `log: ${step.status === 'running' ? 'its last lines come when it ends' : 'it wrote nothing'} (the whole log: .vigil/runs/${run.id}/ in the project that ran it)`,
    ].filter(Boolean);
    return el('pre', { class: 'step-details', 'data-details': `${run.id}/${step.label}` }, lines.join('\n'));
  }

  /** The time the whole tree covers: the root's start to the last end (now while anything runs). */
  function span(root, now) {
    let from = Number.POSITIVE_INFINITY;
    let to = Number.NEGATIVE_INFINITY;
    for (const r of tree(root)) {
      for (const [s, e, live] of [[r.started, r.ended, r.id !== null && r.status === 'running'], ...r.steps.map((x) => [x.started, x.ended, x.status === 'running' || x.status === 'awaiting_gate'])]) {
        const start = at(s);
        if (Number.isNaN(start)) continue;
        from = Math.min(from, start);
        const end = at(e);
        to = Math.max(to, Number.isNaN(end) ? (live ? now : start) : end);
      }
    }
    if (!Number.isFinite(from)) return { from: now, to: now + 1000 };
    return { from, to: Math.max(to, from + 100) };
  }

  /** Tick marks at a round step: 0 s, 2 s, 4 s … (at most about six). */
  function axis(from, to) {
    const total = to - from;
    const steps = [100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000];
    const step = steps.find((s) => total / s <= 6) ?? 3_600_000;
    const ticks = [];
    for (let t = 0; t <= total; t += step) {
      const label = step < 1000 ? `${(t / 1000).toFixed(1)} s` : t < 60_000 ? `${t / 1000} s` : `${Math.round(t / 60_000)} min`;
      const left = (t / total) * 100;
      // A tick near the end is labelled to its left, so that the label stays inside the scale.
      ticks.push(el('span', { class: left > 88 ? 'wf-tick end' : 'wf-tick', style: `left:${left.toFixed(2)}%` }, label));
    }
    return el('div', { class: 'wf-row wf-axis', 'aria-hidden': 'true' }, el('span', { class: 'wf-name' }), el('div', { class: 'wf-scale' }, ...ticks), el('span'));
  }

  /** A bar from start to end; its text inside when the bar is wide, else beside it where there is room. */
  function bar(pct, status, start, end, text) {
    const left = pct(start);
    const width = Math.max(0, pct(end) - left);
    const place = width >= 34 ? 'inside' : left + width <= 62 ? 'after' : 'before';
    return el('span', { class: `wf-bar ${status} text-${place}`, style: `left:${left.toFixed(2)}%;width:${width.toFixed(2)}%` }, el('span', { class: 'wf-text' }, text));
  }

  function stepRows(run, depth, pct, now) {
    const rows = [];
    const waves = run.steps.some((s) => s.wave !== null);
    // Not started (pending, skipped) last; ISO times compare as strings.
    const key = (s) => s.started ?? '\uffff';
    const byStart = (a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
    const steps = waves ? [...run.steps].sort((a, b) => (a.wave ?? 1e9) - (b.wave ?? 1e9) || byStart(a, b)) : [...run.steps].sort(byStart);
    let wave;
    for (const s of steps) {
      if (waves && s.wave !== wave) {
        wave = s.wave;
        rows.push(el('div', { class: 'wave-label', style: `--depth:${depth}` }, wave === null ? 'no wave' : `wave ${wave}`));
      }
      const key = `${run.id}/${s.label}`;
      const start = at(s.started);
      const end = at(s.ended);
      const live = s.status === 'running' || s.status === 'awaiting_gate';
      const stop = Number.isNaN(end) ? (live ? now : start) : end;
      const track = Number.isNaN(start)
        ? el('span', { class: 'wf-note' }, `${marks[s.status] ?? '•'} ${s.status}${s.reason ? `: ${s.reason}` : ''}`)
        : bar(pct, s.status, start, stop, `${marks[s.status] ?? '•'} ${s.status} · ${secs(stop - start)}${live && Number.isNaN(end) ? ' so far' : ''}`);
      const button = el('button', { type: 'button', class: 'link step-name', 'data-focus': `step-${key}`, 'aria-expanded': String(open.has(key)) }, s.label);
      button.addEventListener('click', () => {
        if (open.has(key)) open.delete(key);
        else open.add(key);
        window.vigilRedraw?.();
      });
      rows.push(
        el(
          'div',
          { class: 'wf-row wf-step', 'data-step': key, style: `--depth:${depth}` },
          el('span', { class: 'wf-name' }, button),
          el('div', { class: 'wf-track' }, track),
          el('span', { class: 'wf-usage' }, [tokens(s.usage), usd(s.usage)].filter(Boolean).join(' · ')),
        ),
      );
      if (open.has(key)) rows.push(details(run, s));
    }
    return rows;
  }

  /** A child run (or an entry that never ran) as a row with its bar, then its steps and children unless folded. */
  function runRows(run, depth, pct, now) {
    const name = `${run.role ? `${run.role} · ` : ''}${run.recipe ?? 'run'}`;
    if (run.id === null) {
      const why = run.reason ? `: ${run.reason.replace(/, and no earlier entry failed$/, '')}` : '';
      return [
        el(
          'div',
          { class: 'wf-row wf-run wf-unrun', 'data-entry': name, style: `--depth:${depth}` },
          el('span', { class: 'wf-name' }, el('span', { class: 'wf-label' }, name)),
          el('div', { class: 'wf-track' }, el('span', { class: 'wf-note' }, `${marks[run.status] ?? '•'} ${run.status === 'skipped' ? 'skipped' : run.status}${why}`)),
          el('span', { class: 'wf-usage' }),
        ),
      ];
    }
    const start = at(run.started);
    const end = at(run.ended);
    const live = run.status === 'running';
    const stop = Number.isNaN(end) ? (live ? now : start) : end;
    const inner = run.steps.length + (run.children?.length ?? 0);
    const shut = folded.has(run.id);
    const toggle = inner
      ? el('button', { type: 'button', class: 'wf-toggle', 'data-focus': `run-${run.id}`, 'aria-expanded': String(!shut), 'aria-label': `${shut ? 'show' : 'hide'} what ran in ${name}` }, shut ? '▸' : '▾')
      : el('span', { class: 'wf-toggle-space' });
    if (inner)
      toggle.addEventListener('click', () => {
        if (folded.has(run.id)) folded.delete(run.id);
        else folded.add(run.id);
        window.vigilRedraw?.();
      });
    const text = `${marks[run.status] ?? '•'} ${run.status} · ${secs(Math.max(0, stop - start))}${live ? ' so far' : ''}`;
    const u = usageOf(run);
    const rows = [
      el(
        'div',
        { class: 'wf-row wf-run', 'data-run-row': run.id, style: `--depth:${depth}` },
        el('span', { class: 'wf-name' }, toggle, el('span', { class: 'wf-label', title: `run ${run.id}` }, name)),
        el('div', { class: 'wf-track' }, Number.isNaN(start) ? el('span', { class: 'wf-note' }, `${marks[run.status] ?? '•'} ${run.status}`) : bar(pct, run.status, start, stop, text)),
        el('span', { class: 'wf-usage' }, u.any ? `${u.tokens} tok · $${u.usd.toFixed(4)}` : ''),
      ),
    ];
    if (shut) return rows;
    rows.push(...stepRows(run, depth + 1, pct, now));
    for (const c of run.children ?? []) rows.push(...runRows(c, depth + 1, pct, now));
    return rows;
  }

  function waterfall(root, now) {
    const { from, to } = span(root, now);
    const pct = (t) => ((t - from) / (to - from)) * 100;
    const running = root.status === 'running';
    const start = at(root.started);
    const end = at(root.ended);
    const took = Number.isNaN(start) ? to - from : (Number.isNaN(end) ? now : end) - start;
    const composite = (root.children?.length ?? 0) > 0 || (root.entries?.length ?? 0) > 0;
    const rows = composite ? runRows(root, 0, pct, now) : stepRows(root, 0, pct, now);
    return el(
      'section',
      { class: 'waterfall', 'data-run': root.id, 'aria-label': `run ${root.id}` },
      el('h3', {}, `${root.recipe ?? 'run'} `, root.type && root.type !== 'sequence' ? el('span', { class: 'wf-type' }, root.type) : '', ' ', el('code', {}, root.id), ' ', el('span', { class: `pill ${root.status}` }, `${marks[root.status] ?? ''} ${root.status}`)),
      el('p', { class: 'muted wf-meta' }, `${secs(Math.max(0, took))}${running ? ' so far' : ''} · ${totals(root)}${root.reason ? ` · ${root.reason}` : ''}`),
      ...(budgetUse(root) ? [el('p', { class: 'muted wf-budget' }, budgetUse(root))] : []),
      axis(from, to),
      ...rows,
    );
  }

  window.vigilWaterfalls = (view) => {
    const all = view.run_waterfalls ?? [];
    if (all.length === 0) return '';
    const now = Date.now();
    return el(
      'div',
      { class: 'waterfalls' },
      ...all.flatMap((w) => [el('h2', { class: 'wf-monitor' }, `runs on ${w.name && w.name !== w.monitor ? `${w.name} ` : ''}`, el('code', {}, w.monitor)), ...w.runs.map((r) => waterfall(r, now))]),
    );
  };
})();
