// sdk.cir: record what a check found, then read back what is known.
// cd examples && vigil script run scripts/cir-capture-query.ts --var FINDING="tests pass on main"
const finding: string = sdk.vars.FINDING ?? 'tests pass on main';
const { id } = sdk.cir.capture(finding, { type: 'test.result', domain: 'ci', confidence: 0.9, source: 'script:cir-example', tags: ['example'] });
const recent = sdk.cir.query({ type: 'test.result', since: '24h', limit: 5 });
const related = sdk.cir.search('tests main', { limit: 3 });
return { id, recent: recent.map((s) => s.body), related: related.map((s) => s.id), stats: sdk.cir.stats(), contradictions: sdk.cir.contradictions().length };
