// The dashboard's script (served as /ui/app.js, a classic script). It reads /ui/events with
// fetch, so the bearer token travels in the Authorization header as for any
// API call, and redraws the views from each `view` event. Text is set with
// textContent only: nothing the server relays is ever parsed as HTML.
// The token lives in this script's memory only, never in session or local
// storage, a cookie or the address: no other page, tab or later visit of this
// origin can read it. A reload asks for it again.
let token = new URLSearchParams(location.hash.slice(1)).get('token') ?? '';
if (location.hash) history.replaceState(null, '', location.pathname);
let controller;
const live = document.getElementById('live');

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null) node.setAttribute(k, String(v));
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(child === null || child === undefined ? '' : String(child)));
  return node;
}

const pill = (state) => el('span', { class: `pill ${state}` }, state);
const ago = (seconds) => (seconds === null || seconds === undefined ? '—' : seconds < 90 ? `${Math.round(seconds)} s` : `${Math.round(seconds / 60)} min`);
const until = (iso) => {
  if (!iso) return '—';
  const s = Math.round((Date.parse(iso) - Date.now()) / 1000);
  return s >= 0 ? `in ${s} s` : `${-s} s ago`;
};

function table(headers, rows, empty) {
  if (rows.length === 0) return el('p', { class: 'empty' }, empty);
  return el(
    'table',
    {},
    el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', {}, h)))),
    el('tbody', {}, ...rows.map((cells) => el('tr', {}, ...cells.map((c) => (c instanceof Node && c.nodeName === 'TD' ? c : el('td', {}, c)))))),
  );
}

const num = (n) => el('td', { class: 'num' }, n ?? '—');

// The Statecharts tab lives in chart.js (window.vigilCharts); an actor's row opens its chart.
const charts = window.vigilCharts;
function chartButton(a) {
  const button = el('button', { type: 'button', class: 'link', 'data-chart': `${a.kind}:${a.key}`, 'aria-label': `chart of ${a.kind} ${a.key}` }, 'chart');
  button.addEventListener('click', () => {
    charts?.open(a.kind, a.key);
    show('charts');
    connect();
  });
  return button;
}

/** Gaps: the advice ones (glance.js explains them) muted with ℹ and their explanation as a tooltip; the others as alerts. */
function gapsCell(gaps) {
  const advice = window.vigilGapAdvice ?? {};
  return el(
    'span',
    {},
    ...gaps
      .filter((g) => g !== 'independence_unknown')
      .map((g) => (advice[g] ? el('span', { class: 'gap advice', title: advice[g][1] }, `ℹ ${advice[g][0]}`) : el('span', { class: 'gap' }, `△ ${g.replaceAll('_', ' ')}`))),
  );
}

/** An actor's own status (XState's), in words: a lease actor that is running may well be in its `completed` state. */
const actorWord = { active: '▶ running', done: '■ finished', stopped: '■ stopped', error: '✗ failed', stored: '◇ stored as a row (an actor is made when needed)' };

/** Data cells open: a cut cell's button shows the whole data, indented, until it is folded again (kept across redraws). */
const openData = new Set();
function dataCell(key, data) {
  const text = JSON.stringify(data);
  if (text === undefined || text.length <= 48) return el('td', { class: 'data mono' }, text ?? '—');
  const open = openData.has(key);
  const button = el('button', { type: 'button', class: 'data-toggle', 'data-focus': `data-${key}`, 'aria-expanded': String(open), 'aria-label': open ? 'fold the data' : 'show all the data' }, open ? '▾' : '▸');
  button.addEventListener('click', () => {
    if (openData.has(key)) openData.delete(key);
    else openData.add(key);
    window.vigilRedraw?.();
  });
  return el('td', { class: open ? 'data mono open' : 'data mono', 'data-cell': key }, button, open ? el('pre', {}, JSON.stringify(data, null, 2)) : text);
}

const views = {
  monitors: (v) =>
    table(
      ['Monitor', 'Status', 'Source', 'Head', 'Observations', 'Subscribers', 'Last source contact', 'Gaps'],
      v.monitors.map((m) => [
        el('td', { 'data-monitor': m.id }, el('strong', {}, m.name), el('br'), el('code', {}, m.id)),
        pill(m.status),
        el(
          'span',
          { 'data-source': m.source_live ? 'live' : 'label' },
          m.source,
          m.source_ref ? ` ${m.source_ref}` : '',
          ' ',
          m.source_live ? pill('live') : el('span', { class: 'label', title: 'a label: the server does not run this source' }, 'label'),
          ' ',
          m.source_state ? pill(m.source_state) : '',
          m.source_error ? el('div', { class: 'gap' }, m.source_error) : '',
        ),
        num(m.head),
        num(m.observations),
        num(m.subscriptions),
        ago(m.since_last_source_contact_s),
        gapsCell(m.gaps),
      ]),
      'No monitors visible to this token.',
    ),
  subscriptions: (v) =>
    table(
      ['Subscription', 'Monitor', 'Subscriber', 'State', 'Cursor', 'Lag', 'Last pull'],
      v.subscriptions.map((s) => [el('code', {}, s.id), s.monitor, s.subscriber, pill(s.state), num(s.cursor), num(s.lag), s.last_pull ?? '—']),
      'No subscriptions in memory for the monitors this token owns.',
    ),
  leases: (v) =>
    table(
      ['Monitor', 'Subject', 'State', 'Holder', 'Expires', 'Attempts'],
      v.leases.map((l) => [l.monitor, el('code', {}, l.subject), pill(l.state), l.holder ?? '—', until(l.expires), num(l.attempts)]),
      'No leases in memory for the monitors this token owns.',
    ),
  observations: (v) =>
    table(
      ['Time', 'Monitor', 'Seq', 'Type', 'Subject', 'Actor', 'Data'],
      v.observations.map((o) => [o.time, o.monitor, num(o.seq), el('code', {}, o.type), o.subject ?? '—', o.actor, dataCell(`${o.monitor}/${o.seq}`, o.data)]),
      'No observations yet.',
    ),
  runs: (v) =>
    table(
      ['Time', 'Monitor', 'Run', 'Status', 'Data'],
      v.runs.map((o) => [o.time, o.monitor, o.subject ?? '—', o.data?.payload?.status ?? o.data?.status ?? '—', dataCell(`run/${o.monitor}/${o.subject}`, o.data)]),
      'No recipe runs published to this server (vigil.yml server: {base, token}).',
    ),
  actors: (v) =>
    el(
      'div',
      {},
      el('p', { class: 'muted actors-note' }, "State is where the actor's machine stands (a completed lease can be claimed again); Actor says whether the actor itself is running and takes events, or, for a lease that no actor holds, that it is stored as a row (its chart makes its actor)."),
      table(
        ['Kind', 'Id', 'Monitor', 'Machine', 'State', 'Actor', 'Chart'],
        v.actors.map((a) => [a.kind, el('code', {}, a.key), a.monitor ?? '—', a.machine, pill(a.state), el('td', { 'data-actor-status': a.status }, actorWord[a.status] ?? a.status), chartButton(a)]),
        'No actors in memory.',
      ),
    ),
};

let lastView;
// The page's other scripts (timeline.js) redraw after a change of their own controls.
window.vigilRedraw = () => lastView && render(lastView);
window.vigilReconnect = () => connect();
function render(view) {
  lastView = view;
  // A redraw keeps the keyboard where it was: the focused button or card is found again by its data attribute.
  const focus = Object.entries(document.activeElement?.dataset ?? {}).find(([k]) => ['chart', 'glance', 'focus'].includes(k));
  const focused = focus ? `[data-${focus[0]}="${CSS.escape(focus[1])}"]` : undefined;
  for (const [name, draw] of Object.entries(views)) {
    const section = document.getElementById(name);
    section.replaceChildren(draw(view));
  }
  // Monitors at a glance (glance.js) sit above the monitors' table.
  const cards = window.vigilGlance?.(view);
  if (cards) document.getElementById('monitors').prepend(cards);
  // Lease timelines (timeline.js) sit above the leases' table.
  const timelines = window.vigilTimelines?.(view);
  if (timelines) document.getElementById('leases').prepend(timelines);
  // Run waterfalls (waterfall.js) sit above the runs' table.
  const waterfalls = window.vigilWaterfalls?.(view);
  if (waterfalls) document.getElementById('runs').prepend(waterfalls);
  if (focused) document.querySelector(focused)?.focus();
  charts?.update(view);
  window.vigilFilter?.update(view);
  live.textContent = `live · ${new Date(view.as_of).toLocaleTimeString()}${view.admin ? ' · admin' : ''}`;
}

function show(name) {
  for (const button of document.querySelectorAll('nav button')) button.setAttribute('aria-selected', String(button.dataset.view === name));
  for (const section of document.querySelectorAll('main section')) section.hidden = section.id !== name;
}

async function connect() {
  controller?.abort();
  controller = new AbortController();
  const signal = controller.signal;
  try {
    const params = window.vigilFilter?.params() ?? new URLSearchParams();
    if (charts?.target) params.set('chart', charts.target);
    const query = params.size ? `?${params}` : '';
    const response = await fetch(`/ui/events${query}`, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal });
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
    live.className = 'on';
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end = buffer.indexOf('\n\n');
      while (end !== -1) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(frame)?.[1];
        const data = frame
          .split('\n')
          .filter((line) => line.startsWith('data: '))
          .map((line) => line.slice(6))
          .join('\n');
        if (event === 'view') render(JSON.parse(data));
        end = buffer.indexOf('\n\n');
      }
    }
  } catch (error) {
    if (signal.aborted) return;
    live.textContent = `disconnected (${error.message}); retrying`;
  }
  if (signal.aborted) return;
  live.className = 'off';
  setTimeout(connect, 2000);
}

for (const button of document.querySelectorAll('nav button')) button.addEventListener('click', () => show(button.dataset.view));
document.getElementById('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  token = document.getElementById('token').value.trim();
  document.getElementById('token').value = '';
  connect();
});
// Expiry countdowns move even when nothing on the server changed.
setInterval(() => lastView && render(lastView), 1000);
connect();
