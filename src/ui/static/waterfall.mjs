// Runs as waterfalls (served as /ui/waterfall.js, a classic script loaded
// before app.js, which puts window.vigilWaterfalls(view) above the runs'
// table): per run a row per step on a time axis from the run's first start to
// its last end (or now while it runs, so running bars grow), grouped by wave,
// each bar saying its status in a word and a symbol besides its colour and
// pattern, with tokens and cost; a composite's child runs nested below it.
// A step's button opens what the server knows of it.
(() => {
  const marks = { succeeded: '✓', failed: '✗', running: '▶', pending: '…', cancelled: '⊘', skipped: '⊘', over_budget: '$', timed_out: '◷' };
  const open = new Set();
  const el = (tag, attrs = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
    node.append(...children.map((c) => (c instanceof Node ? c : String(c ?? ''))));
    return node;
  };
  const secs = (ms) => (ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`);
  const tokens = (u) => (u ? `${u.input_tokens + u.output_tokens} tok` : '');
  const usd = (u) => (!u ? '' : u.usd_unknown ? 'usd unknown' : `$${u.usd.toFixed(4)}`);

  function totals(run) {
    const all = [run, ...(run.children ?? [])].flatMap((r) => r.steps);
    const used = all.filter((s) => s.usage);
    const t = used.reduce((n, s) => n + s.usage.input_tokens + s.usage.output_tokens, 0);
    const d = used.reduce((n, s) => n + (s.usage.usd ?? 0), 0);
    const unknown = used.some((s) => s.usage.usd_unknown);
    return used.length ? `${t} tokens · $${d.toFixed(4)}${unknown ? ' (some usd unknown)' : ''}` : 'no usage reported';
  }

  function details(run, step) {
    const lines = [
      `status: ${step.status}${step.exit_code !== null ? ` (exit ${step.exit_code})` : ''}`,
      `backend: ${step.backend ?? '—'}; wave ${step.wave ?? '—'}`,
      `started ${step.started ?? '—'}, ended ${step.ended ?? '—'}`,
      step.reason ? `reason: ${step.reason}` : null,
      step.killed_by ? `stopped by ${step.killed_by}` : null,
      step.usage ? `usage: ${step.usage.input_tokens} input + ${step.usage.output_tokens} output tokens, ${usd(step.usage)}` : null,
      `log: the step's log stays with the run (.vigil/runs/${run.id}/ in the project that ran it); the server is sent its state only`,
    ].filter(Boolean);
    return el('pre', { class: 'step-details', 'data-details': `${run.id}/${step.label}` }, lines.join('\n'));
  }

  function waterfall(run, now, depth) {
    const starts = run.steps.map((s) => Date.parse(s.started ?? '')).filter((t) => t > 0);
    const from = starts.length ? Math.min(...starts) : now;
    const endOf = (s) => (s.ended ? Date.parse(s.ended) : s.started ? now : null);
    const to = Math.max(from + 1000, ...run.steps.map((s) => endOf(s) ?? from));
    const pct = (t) => `${(((t - from) / (to - from)) * 100).toFixed(2)}%`;
    const steps = [...run.steps].sort((a, b) => (a.wave ?? 99) - (b.wave ?? 99) || (a.started ?? '~').localeCompare(b.started ?? '~'));
    const rows = [];
    let wave;
    for (const s of steps) {
      if (s.wave !== wave) {
        wave = s.wave;
        rows.push(el('div', { class: 'wave-label' }, wave === null ? 'not in a wave' : `wave ${wave}`));
      }
      const key = `${run.id}/${s.label}`;
      const start = s.started ? Date.parse(s.started) : null;
      const end = endOf(s);
      const bar = start === null
        ? el('span', { class: 'wf-bar pending', style: 'left:0;width:0' })
        : el('span', { class: `wf-bar ${s.status}`, style: `left:${pct(start)};width:calc(${pct(end)} - ${pct(start)})` }, `${marks[s.status] ?? '•'} ${s.status} · ${secs(end - start)}`);
      const button = el('button', { type: 'button', class: 'link step-name', 'data-focus': `step-${key}`, 'aria-expanded': String(open.has(key)) }, s.label);
      button.addEventListener('click', () => {
        if (open.has(key)) open.delete(key);
        else open.add(key);
        window.vigilRedraw?.();
      });
      rows.push(el('div', { class: 'wf-row', 'data-step': key }, button, el('div', { class: 'wf-track' }, bar), el('span', { class: 'wf-usage' }, [tokens(s.usage), usd(s.usage)].filter(Boolean).join(' · '))));
      if (open.has(key)) rows.push(details(run, s));
    }
    const running = run.status === 'running';
    return el(
      'section',
      { class: 'waterfall', 'data-run': run.id, style: `margin-left:${depth * 18}px`, 'aria-label': `run ${run.id}` },
      el('h3', {}, `${depth ? '↳ ' : ''}${run.recipe ?? 'run'} `, el('code', {}, run.id), ' ', el('span', { class: `pill ${run.status}` }, `${marks[run.status] ?? ''} ${run.status}`)),
      el('p', { class: 'muted wf-meta' }, `${secs(to - from)}${running ? ' so far' : ''} · ${totals(run)}${run.reason ? ` · ${run.reason}` : ''}`),
      ...rows,
      ...(run.children ?? []).map((c) => waterfall(c, now, depth + 1)),
    );
  }

  window.vigilWaterfalls = (view) => {
    const all = view.run_waterfalls ?? [];
    if (all.length === 0) return '';
    const now = Date.now();
    return el('div', { class: 'waterfalls' }, ...all.flatMap((w) => [el('h2', { class: 'wf-monitor' }, `runs on ${w.monitor}`), ...w.runs.map((r) => waterfall(r, now, 0))]));
  };
})();
