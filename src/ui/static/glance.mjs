// Monitors at a glance (served as /ui/glance.js, a classic script loaded before
// app.js, which calls window.vigilGlance(view) above the monitors' table): a
// card per monitor with a sparkline of observations per minute over the last
// hour, the time since the source's last contact judged against ttl_seconds,
// and open contradictions and gaps as badges. Every judgement is written as a
// word and a symbol as well as a colour. The protocol's gaps that a healthy
// new monitor has (no subscribers yet, one actor, no event provenance, not
// attested) are advice, not alerts: shown in a neutral style, each explained
// on the card by its "why" button; a stale source stays an alert.
(() => {
  /** The gaps that are advice: what each means, and what would close it. */
  const advice = {
    no_event_provenance: [
      'no event provenance',
      'Its latest observation names no event it came from (source_ref or wasDerivedFrom), so a reader cannot trace it back. Nothing is wrong; when you relay something (a CI job, a webhook delivery), publish its URL or id as source_ref.',
    ],
    single_actor: [
      'single actor',
      'Everything so far comes from one actor, so nothing corroborates it. One producer is a normal start; a second, independent producer (another actor) would raise confidence.',
    ],
    no_subscribers: [
      'no subscribers',
      'Nobody subscribes to it, so nothing reacts to what arrives. Subscribe (vigil watch, POST /subscriptions) or point a sentinel at it when something should.',
    ],
    unattested_origin: [
      'unattested origin',
      'It was created without a registration token, so the server does not vouch for its owner. Normal on your own machine; a server started with --registration-token attests the monitors made with it.',
    ],
  };
  window.vigilGapAdvice = advice;
  const explained = new Set();
  const svgNs = 'http://www.w3.org/2000/svg';
  const el = (tag, attrs = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
    node.append(...children.map((c) => (c instanceof Node ? c : String(c ?? ''))));
    return node;
  };
  const svg = (tag, attrs = {}) => {
    const node = document.createElementNS(svgNs, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    return node;
  };
  const ago = (s) => (s < 90 ? `${Math.round(s)} s` : s < 5400 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`);

  function sparkline(counts) {
    const width = 180;
    const height = 36;
    const max = Math.max(1, ...counts);
    const total = counts.reduce((a, b) => a + b, 0);
    const picture = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'spark', role: 'img', 'aria-label': `${total} observations in the last hour, at most ${max} in a minute, ${counts.at(-1) ?? 0} this minute` });
    const step = width / counts.length;
    counts.forEach((n, i) => {
      if (n === 0) return;
      const h = Math.max(2, Math.round((n / max) * (height - 4)));
      picture.append(svg('rect', { x: (i * step).toFixed(1), y: height - h, width: Math.max(1, step - 1).toFixed(1), height: h }));
    });
    picture.append(svg('line', { x1: 0, y1: height - 0.5, x2: width, y2: height - 0.5, class: 'base' }));
    return el('div', { class: 'spark-wrap' }, picture, el('span', { class: 'spark-caption' }, `${total}/h · ${counts.at(-1) ?? 0} this min`));
  }

  /** fresh (under half the ttl), aging (under the ttl), stale (past it); without a ttl only the age is shown. */
  function contact(m) {
    const age = m.since_last_source_contact_s;
    if (age === null || age === undefined) return el('span', { class: 'badge none', title: 'no source contact recorded' }, '○ no contact yet');
    if (!m.ttl_seconds) return el('span', { class: 'badge none', title: 'this monitor has no ttl_seconds' }, `○ ${ago(age)} ago · no ttl`);
    const ratio = age / m.ttl_seconds;
    const [level, mark] = ratio > 1 ? ['stale', '✕'] : ratio > 0.5 ? ['aging', '◐'] : ['fresh', '●'];
    return el('span', { class: `badge ${level}`, title: `last source contact ${ago(age)} ago; ttl ${m.ttl_seconds} s` }, `${mark} ${level} · ${ago(age)} ago / ttl ${ago(m.ttl_seconds)}`);
  }

  function card(m) {
    const badges = el('div', { class: 'badges' }, contact(m));
    if (m.contradictions_open > 0) badges.append(el('span', { class: 'badge contradiction' }, `⚠ ${m.contradictions_open} contradiction${m.contradictions_open === 1 ? '' : 's'} open`));
    const tips = m.gaps.filter((g) => advice[g]);
    for (const gap of m.gaps) {
      if (gap === 'independence_unknown' || advice[gap]) continue;
      badges.append(el('span', { class: 'badge gap-badge' }, `△ ${gap.replaceAll('_', ' ')}`));
    }
    for (const gap of tips) badges.append(el('span', { class: 'badge advice-badge', title: advice[gap][1] }, `ℹ ${advice[gap][0]}`));
    const parts = [badges];
    if (tips.length) {
      const open = explained.has(m.id);
      const why = el('button', { type: 'button', class: 'link advice-toggle', 'data-focus': `advice-${m.id}`, 'aria-expanded': String(open) }, open ? 'hide the advice' : `why ${tips.length === 1 ? 'this tip' : `these ${tips.length} tips`}?`);
      why.addEventListener('click', () => {
        if (explained.has(m.id)) explained.delete(m.id);
        else explained.add(m.id);
        window.vigilRedraw?.();
      });
      parts.push(why);
      if (open) parts.push(el('dl', { class: 'advice' }, ...tips.flatMap((g) => [el('dt', {}, `ℹ ${advice[g][0]}`), el('dd', {}, advice[g][1])])));
    }
    return el(
      'article',
      { class: 'glance', 'data-glance': m.id, tabindex: 0, 'aria-label': `monitor ${m.name}` },
      el('h3', {}, m.name, ' ', m.name === m.id ? '' : el('code', {}, m.id), ' ', el('span', { class: `pill ${m.status}` }, m.status)),
      sparkline(m.per_minute?.length ? m.per_minute : new Array(60).fill(0)),
      ...parts,
    );
  }

  window.vigilGlance = (view) => {
    if (view.monitors.length === 0) return '';
    return el('div', { class: 'glance-grid', role: 'list', 'aria-label': 'monitors at a glance' }, ...view.monitors.map((m) => {
      const c = card(m);
      c.setAttribute('role', 'listitem');
      return c;
    }));
  };
})();
