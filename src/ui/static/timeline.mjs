// Leases over time (served as /ui/timeline.js, a classic script loaded before
// app.js, which puts window.vigilTimelines(view) above the leases' table): per
// monitor a row per subject on a time axis ending a little after "now", which
// moves with every redraw. A bar is a holding, labelled with its holder (and
// coloured per holder from a colour-blind-safe palette); each moment is a
// symbol with its name in the tooltip and the accessible label: ▶ claim,
// ↻ renew, ✓ complete, ◇ release, ✗ reject, ◷ expired, ☠ dead letter. A
// dead-lettered subject's track is hatched from then on.
(() => {
  const spans = [
    ['1 min', 60_000],
    ['5 min', 300_000],
    ['15 min', 900_000],
    ['1 h', 3_600_000],
  ];
  let span = 900_000;
  const symbols = { claim: '▶', renew: '↻', complete: '✓', release: '◇', reject: '✗', expired: '◷', dead_lettered: '☠' };
  const ends = new Set(['complete', 'release', 'reject', 'expired']);
  // Okabe–Ito: told apart with the common colour-blindnesses; the holder's name is on the bar as well.
  const palette = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442'];
  const colourOf = (holder) => palette[[...(holder ?? '')].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % palette.length];

  const el = (tag, attrs = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
    node.append(...children.map((c) => (c instanceof Node ? c : String(c ?? ''))));
    return node;
  };
  const clock = (ms) => new Date(ms).toLocaleTimeString();

  /** Holdings from the moments: a claim opens one, an end (or the next claim) closes it; an open one runs to now. */
  function holdings(moments, now) {
    const out = [];
    let open = null;
    for (const m of moments) {
      const at = Date.parse(m.at);
      if (m.action === 'claim') {
        if (open) out.push({ ...open, to: at });
        open = { holder: m.by, note: m.note, from: at, expires: m.expires };
      } else if (m.action === 'renew' && open) {
        open.expires = m.expires;
        if (m.note) open.note = m.note;
      } else if (ends.has(m.action) && open) {
        out.push({ ...open, to: at });
        open = null;
      }
    }
    if (open) out.push({ ...open, to: now, open: true });
    return out;
  }

  function track(subject, now, from, to) {
    const pct = (t) => `${(((Math.min(Math.max(t, from), to) - from) / (to - from)) * 100).toFixed(2)}%`;
    const width = (a, b) => `${(((Math.min(b, to) - Math.max(a, from)) / (to - from)) * 100).toFixed(2)}%`;
    const lane = el('div', { class: 'lane' });
    const dead = subject.moments.find((m) => m.dead_lettered);
    if (dead) {
      const at = Date.parse(dead.at);
      if (at < to) lane.append(el('div', { class: 'dead-zone', style: `left:${pct(at)};width:${width(at, to)}`, title: `dead-lettered at ${clock(at)}` }, 'dead-lettered'));
    }
    for (const h of holdings(subject.moments, now)) {
      if (h.to < from || h.from > to) continue;
      // A note says what the holder held it for (a concurrency slot's: the run and step), so it leads the bar.
      const label = `${h.holder ?? '?'} held ${subject.subject} ${clock(h.from)}–${h.open ? 'now' : clock(h.to)}${h.note ? `: ${h.note}` : ''}`;
      const text = h.note ? `${h.note} (${h.holder ?? '?'})` : (h.holder ?? '?');
      lane.append(el('div', { class: 'hold', style: `left:${pct(h.from)};width:${width(h.from, h.to)};--holder:${colourOf(h.holder)}`, title: label }, text));
      const expires = h.open && h.expires ? Date.parse(h.expires) : null;
      if (expires && expires > now) lane.append(el('div', { class: 'hold-until', style: `left:${pct(now)};width:${width(now, expires)}`, title: `expires ${clock(expires)}` }));
    }
    for (const m of subject.moments) {
      const at = Date.parse(m.at);
      if (at < from || at > to) continue;
      const kind = m.dead_lettered ? 'dead_lettered' : m.action;
      const what = `${kind.replace('_', ' ')} by ${m.by} at ${clock(at)}${m.note ? `: ${m.note}` : ''}`;
      lane.append(el('span', { class: `moment ${kind}`, style: `left:${pct(at)}`, title: what, 'aria-label': what, role: 'img' }, symbols[kind] ?? '•'));
    }
    lane.append(el('div', { class: 'now-line', style: `left:${pct(now)}` }));
    return el('div', { class: 'lane-row', role: 'listitem' }, el('code', { class: 'lane-subject', title: subject.subject }, subject.subject), lane);
  }

  function axis(now, from, to) {
    const at = (t) => `${(((t - from) / (to - from)) * 100).toFixed(2)}%`;
    return el(
      'div',
      { class: 'lane-row axis', 'aria-hidden': 'true' },
      el('span', { class: 'lane-subject' }, ''),
      el('div', { class: 'lane axis-lane' }, el('span', { style: 'left:0' }, clock(from)), el('span', { style: `left:${at(from + (now - from) / 2)}` }, clock(from + (now - from) / 2)), el('span', { class: 'now-label', style: `left:${at(now)}` }, 'now')),
    );
  }

  window.vigilTimelines = (view) => {
    const timelines = view.lease_timelines ?? [];
    if (timelines.length === 0) return '';
    const now = Date.now();
    const from = now - span;
    const to = now + span * 0.12;
    const picker = el('div', { class: 'toolbar', role: 'group', 'aria-label': 'time span' }, 'span: ');
    for (const [name, ms] of spans) {
      const b = el('button', { type: 'button', 'aria-pressed': String(ms === span), 'data-focus': `span-${ms}` }, name);
      b.addEventListener('click', () => {
        span = ms;
        window.vigilRedraw?.();
      });
      picker.append(b);
    }
    const legend = el('p', { class: 'muted legend' }, Object.entries(symbols).map(([k, s]) => `${s} ${k.replace('_', ' ')}`).join('   '), '   ▬ held (holder named)   ┄ until expiry');
    return el(
      'div',
      { class: 'timelines' },
      picker,
      legend,
      ...timelines.map((t) => el('section', { class: 'timeline', 'data-timeline': t.monitor, 'aria-label': `leases of ${t.monitor}` }, el('h3', {}, t.monitor), axis(now, from, to), el('div', { role: 'list' }, ...t.subjects.map((s) => track(s, now, from, to))))),
    );
  };
})();
