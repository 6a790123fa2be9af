// The Observations tab's filter (served as /ui/filter.js, a classic script
// loaded before app.js): type, subject and actor, and whether to show the
// protocol's bookkeeping (folded by default). The server applies it
// (/ui/events?obs_type=…), so the table holds the latest matching
// observations rather than a filtered few of the latest. The form sits
// above the table and is not redrawn with each view, so typing is never lost.
(() => {
  const section = document.getElementById('observations');
  const form = document.createElement('form');
  form.id = 'obs-filter';
  form.setAttribute('aria-label', 'filter observations');
  const field = (name, label, attrs = {}) => {
    const input = document.createElement('input');
    Object.assign(input, { name, placeholder: label, autocomplete: 'off', ...attrs });
    input.setAttribute('aria-label', label);
    return input;
  };
  const type = field('type', 'type');
  type.setAttribute('list', 'obs-types');
  const types = document.createElement('datalist');
  types.id = 'obs-types';
  const subject = field('subject', 'subject');
  const actor = field('actor', 'actor');
  const bookkeeping = document.createElement('input');
  bookkeeping.type = 'checkbox';
  bookkeeping.name = 'bookkeeping';
  const label = document.createElement('label');
  label.append(bookkeeping, ' show bookkeeping (leases, rejections, subscriptions…)');
  const apply = document.createElement('button');
  apply.textContent = 'Filter';
  const clear = document.createElement('button');
  clear.type = 'button';
  clear.textContent = 'Clear';
  form.append(type, types, subject, actor, label, apply, clear);
  section.before(form);
  const sync = () => {
    form.hidden = section.hidden;
  };
  new MutationObserver(sync).observe(section, { attributes: true, attributeFilter: ['hidden'] });
  sync();

  const changed = () => window.vigilReconnect?.();
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    changed();
  });
  bookkeeping.addEventListener('change', changed);
  clear.addEventListener('click', () => {
    for (const input of [type, subject, actor]) input.value = '';
    bookkeeping.checked = false;
    changed();
  });

  window.vigilFilter = {
    /** The query parameters /ui/events takes for this filter. */
    params() {
      const p = new URLSearchParams();
      if (type.value.trim()) p.set('obs_type', type.value.trim());
      if (subject.value.trim()) p.set('obs_subject', subject.value.trim());
      if (actor.value.trim()) p.set('obs_actor', actor.value.trim());
      if (bookkeeping.checked) p.set('obs_bookkeeping', '1');
      return p;
    },
    update(view) {
      const known = view.observation_types ?? [];
      if (types.childElementCount === known.length) return;
      types.replaceChildren(...known.map((t) => Object.assign(document.createElement('option'), { value: t })));
    },
  };
})();
