// The Statecharts tab (served as /ui/chart.js, a classic script loaded before
// app.js). It draws each machine from its own definition (/ui/machines), laid
// out by elkjs (/ui/elk.js, the global ELK), as SVG; the actor chosen in the
// Actors tab comes with every view (`view.chart`): its current state is
// outlined and marked, the edge it took last is drawn thick and dashed, and
// its last transitions are listed. Text is set with textContent only.
(() => {
  const svgNs = 'http://www.w3.org/2000/svg';
  const kinds = ['monitor', 'subscription', 'lease', 'source'];
  const charts = new Map();
  const drawn = new Map();
  let kind = 'lease';
  let actor = null;
  const elk = new ELK();

  const svg = (tag, attrs = {}, text) => {
    const node = document.createElementNS(svgNs, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const html = (tag, attrs = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
    node.append(...children.map((c) => (c instanceof Node ? c : String(c ?? ''))));
    return node;
  };
  const textWidth = (text, size) => Math.ceil(text.length * size * 0.62) + 4;

  const edgeLabel = (t) => `${t.event}${t.guard ? ` [${t.guard}]` : ''}`;

  /** ELK's graph: states as (nested) nodes, targeted transitions as labelled edges, a dot for each initial state. */
  function elkGraph(chart) {
    const nodes = new Map();
    const root = { id: chart.machine, children: [], edges: [] };
    const inPlace = new Map();
    for (const t of chart.transitions) {
      if (t.to !== null) continue;
      const list = inPlace.get(t.from) ?? [];
      if (!list.includes(t.event)) list.push(t.event);
      inPlace.set(t.from, list);
    }
    for (const s of chart.states) {
      const stays = inPlace.get(s.id) ?? [];
      const note = stays.length ? `stays on ${stays.join(', ')}` : '';
      const width = Math.max(textWidth(s.key, 14) + 70, textWidth(note, 10) + 16, 90);
      const node = { id: s.id, state: s, note, width, height: note ? 46 : 34, children: [], edges: [], labels: [{ text: s.key }] };
      if (s.type === 'compound') {
        node.layoutOptions = { 'elk.padding': '[top=30,left=12,bottom=12,right=12]' };
        delete node.width;
        delete node.height;
      }
      nodes.set(s.id, node);
    }
    for (const s of chart.states) (s.parent ? nodes.get(s.parent).children : root.children).push(nodes.get(s.id));
    for (const s of chart.states) {
      if (!s.initial) continue;
      const dot = { id: `initial:${s.id}`, width: 12, height: 12, dot: true };
      (s.parent ? nodes.get(s.parent).children : root.children).push(dot);
      root.edges.push({ id: `e-initial:${s.id}`, sources: [dot.id], targets: [s.id] });
    }
    if (chart.transitions.some((t) => t.from === chart.machine && t.to !== null)) {
      root.children.push({ id: `any:${chart.machine}`, width: 90, height: 28, any: true, labels: [{ text: 'any state' }] });
    }
    chart.transitions.forEach((t, i) => {
      if (t.to === null) return;
      const from = t.from === chart.machine ? `any:${chart.machine}` : t.from;
      const text = edgeLabel(t);
      // The layout places the label on its edge (inline, at its middle), so it never floats away from it.
      root.edges.push({ id: `t${i}`, transition: t, sources: [from], targets: [t.to], labels: [{ text, width: textWidth(text, 11), height: 14, layoutOptions: { 'elk.edgeLabels.placement': 'CENTER' } }] });
    });
    root.layoutOptions = {
      'elk.algorithm': 'layered',
      'elk.direction': 'DOWN',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.edgeLabels.inline': 'true',
      'elk.layered.spacing.nodeNodeBetweenLayers': '50',
      'elk.spacing.nodeNode': '36',
      'elk.spacing.edgeLabel': '4',
      'elk.spacing.edgeEdge': '14',
    };
    return root;
  }

  async function draw(chart) {
    const laid = await elk.layout(elkGraph(chart));
    const picture = svg('svg', { viewBox: `-8 -8 ${laid.width + 16} ${laid.height + 16}`, role: 'img', 'aria-label': `statechart of the ${chart.kind} machine`, class: 'chart' });
    const defs = svg('defs');
    defs.append(svg('marker', { id: `arrow-${chart.kind}`, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 8, markerHeight: 8, markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse' }));
    defs.firstChild.append(svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead' }));
    picture.append(defs);
    // Never drawn larger than a little over its natural size: a small machine stays readable, not huge.
    picture.style.maxWidth = `${Math.round((laid.width + 16) * 1.3)}px`;
    const stateEls = new Map();
    // ELK gives each node's place relative to its parent, and each edge's relative to its container.
    const origin = new Map([[laid.id, { x: 0, y: 0 }]]);
    const placeNodes = (children, dx, dy) => {
      for (const n of children ?? []) {
        const x = dx + n.x;
        const y = dy + n.y;
        origin.set(n.id, { x, y });
        if (n.dot) {
          picture.append(svg('circle', { cx: x + 6, cy: y + 6, r: 6, class: 'initial' }));
          continue;
        }
        const g = svg('g', { class: n.any ? 'state any' : `state ${n.state.type}`, 'data-state': n.any ? '' : n.state.id });
        g.append(svg('rect', { x, y, width: n.width, height: n.height, rx: 10 }));
        if (n.state?.type === 'final') g.append(svg('rect', { x: x + 3, y: y + 3, width: n.width - 6, height: n.height - 6, rx: 8, class: 'inner' }));
        g.append(svg('text', { x: x + 10, y: y + 20, class: 'name' }, n.any ? 'any state' : n.state.key));
        if (n.note) g.append(svg('text', { x: x + 10, y: y + 37, class: 'note' }, n.note));
        g.append(svg('text', { x: x + n.width - 8, y: y + 20, class: 'now-mark', 'text-anchor': 'end' }, ''));
        picture.append(g);
        if (!n.any) stateEls.set(n.state.id, g);
        placeNodes(n.children, x, y);
      }
    };
    placeNodes(laid.children, 0, 0);
    const edgeEls = [];
    for (const e of laid.edges) {
      const at = origin.get(e.container) ?? { x: 0, y: 0 };
      const line = [];
      for (const section of e.sections ?? []) {
        const points = [section.startPoint, ...(section.bendPoints ?? []), section.endPoint];
        line.push(...points.map((p) => ({ x: p.x + at.x, y: p.y + at.y })));
        const path = svg('path', { d: points.map((p, i) => `${i ? 'L' : 'M'}${p.x + at.x},${p.y + at.y}`).join(' '), class: 'edge', 'data-edge': e.id, 'marker-end': `url(#arrow-${chart.kind})` });
        picture.append(path);
        if (e.transition) edgeEls.push({ transition: e.transition, path });
      }
      for (const label of e.labels ?? []) {
        // The layout keeps room for the label beside its edge; it is centred on the nearest point of the
        // edge itself, on a backing of the page's colour, so that it never floats away from its line.
        const on = nearestOn(line, { x: label.x + at.x + label.width / 2, y: label.y + at.y + label.height / 2 });
        const [x, y] = [on.x - label.width / 2, on.y - label.height / 2];
        picture.append(svg('rect', { x: x - 2, y, width: label.width + 4, height: label.height, rx: 3, class: 'label-bg' }));
        const t = svg('text', { x: on.x, y: y + 11, 'text-anchor': 'middle', class: e.transition?.delay ? 'label delayed' : 'label', 'data-edge': e.id }, label.text);
        picture.append(t);
        if (e.transition) edgeEls.push({ transition: e.transition, path: t });
      }
    }
    return { picture, stateEls, edgeEls };
  }

  /** The point of a polyline nearest to `c`. */
  function nearestOn(points, c) {
    let best = points[0] ?? c;
    let bestD = Number.POSITIVE_INFINITY;
    for (let i = 1; i < points.length; i++) {
      const [a, b] = [points[i - 1], points[i]];
      const [dx, dy] = [b.x - a.x, b.y - a.y];
      const len = dx * dx + dy * dy;
      const t = len === 0 ? 0 : Math.max(0, Math.min(1, ((c.x - a.x) * dx + (c.y - a.y) * dy) / len));
      const p = { x: a.x + t * dx, y: a.y + t * dy };
      const d = Math.hypot(p.x - c.x, p.y - c.y);
      if (d < bestD) [best, bestD] = [p, d];
    }
    return best;
  }

  function highlight(entry) {
    const { stateEls, edgeEls } = entry;
    const chart = charts.get(kind);
    for (const g of stateEls.values()) {
      g.classList.remove('current');
      g.querySelector('.now-mark').textContent = '';
    }
    for (const e of edgeEls) e.path.classList.remove('fired');
    if (!actor?.found || actor.kind !== kind) return;
    const path = actor.state.split('.');
    for (let i = 1; i <= path.length; i++) {
      const g = stateEls.get(`${chart.machine}.${path.slice(0, i).join('.')}`);
      if (!g) continue;
      g.classList.add('current');
      if (i === path.length) g.querySelector('.now-mark').textContent = '◀ now';
    }
    const last = actor.transitions.at(-1);
    if (!last) return;
    const within = (id, path) => path !== null && (id === chart.machine || `${chart.machine}.${path}` === id || `${chart.machine}.${path}`.startsWith(`${id}.`));
    for (const e of edgeEls) {
      const t = e.transition;
      if (t.eventType === last.event && within(t.to, last.to) && within(t.from, last.from)) e.path.classList.add('fired');
    }
  }

  function panel() {
    const section = document.getElementById('charts');
    if (!section.firstChild) {
      const picker = html('div', { class: 'toolbar', role: 'group', 'aria-label': 'machine' });
      for (const k of kinds) {
        const b = html('button', { type: 'button', 'data-kind': k }, k);
        b.addEventListener('click', () => {
          kind = k;
          refresh();
        });
        picker.append(b);
      }
      section.append(picker, html('p', { id: 'chart-actor', class: 'muted', 'aria-live': 'polite' }), html('div', { id: 'chart-picture' }), html('h3', {}, 'Last transitions'), html('ol', { id: 'chart-transitions', class: 'mono' }));
    }
    return section;
  }

  async function refresh() {
    const section = panel();
    for (const b of section.querySelectorAll('[data-kind]')) b.setAttribute('aria-pressed', String(b.dataset.kind === kind));
    const who = section.querySelector('#chart-actor');
    if (!actor) who.textContent = 'Choose an actor in the Actors tab ("chart") to follow its state; the machine is drawn from its definition.';
    else if (actor.found === null) who.textContent = `following ${actor.kind}:${actor.key} …`;
    else if (!actor.found) who.textContent = `${actor.kind}:${actor.key} is not resident (stopped, trimmed or not visible to this token).`;
    else who.textContent = `${actor.kind}:${actor.key} — state ${actor.state} (${actor.status})`;
    const list = section.querySelector('#chart-transitions');
    const entries = actor?.found ? actor.transitions.slice().reverse() : [];
    list.replaceChildren(...entries.map((t) => html('li', {}, `${new Date(t.at).toLocaleTimeString()}  ${t.event}  ${t.from ?? '∅'} → ${t.to}`)));
    if (entries.length === 0) list.replaceChildren(html('li', { class: 'muted' }, actor?.found ? (actor.kind === 'source' ? 'none since this chart opened (a source records no transitions)' : 'none recorded') : '—'));
    const chart = charts.get(kind);
    if (!chart) return;
    // One layout per machine, shared by every refresh that comes while it runs.
    if (!drawn.has(kind)) drawn.set(kind, draw(chart));
    const shown = kind;
    const entry = await drawn.get(shown);
    if (shown !== kind) return;
    const holder = section.querySelector('#chart-picture');
    if (holder.firstChild !== entry.picture) holder.replaceChildren(entry.picture);
    highlight(entry);
    section.dataset.drawn = kind;
  }

  window.vigilCharts = {
    /** Called by app.js with every view. */
    update(view) {
      if (!view.chart) return;
      actor = view.chart;
      if (kinds.includes(actor.kind)) kind = actor.kind;
      refresh();
    },
    /** The chart's target for /ui/events, set from the Actors tab. */
    target: '',
    open(k, key) {
      this.target = `${k}:${key}`;
      kind = k;
      actor = { kind: k, key, found: null, transitions: [] };
      refresh();
    },
  };

  fetch('/ui/machines')
    .then((r) => r.json())
    .then((body) => {
      for (const c of body.machines) charts.set(c.kind, c);
      refresh();
    })
    .catch((error) => {
      panel().querySelector('#chart-actor').textContent = `cannot load the machines: ${error.message}`;
    });
})();
