// sdk.health and sdk.notify: tell the user when a required part is broken.
// cd examples && vigil script run scripts/notify-health.js
const report = sdk.health.check();
const broken = Object.entries(report.components)
  .filter(([name, c]) => name !== 'backends' && !c.ok)
  .map(([name, c]) => `${name}: ${c.detail}`);
sdk.notify.send('vigil health', report.ok ? 'all required parts work' : broken.join('; ')); // never throws
return { ok: report.ok, broken };
