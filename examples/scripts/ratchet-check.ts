// sdk.ratchet: counted metrics that may only go down (.vigil/ratchet.json).
// cd examples && vigil script run scripts/ratchet-check.ts --var RECORD=1
if (sdk.vars.RECORD === '1') sdk.ratchet.baseline();
const result = sdk.ratchet.check();
for (const v of result.violations) console.log(`${v.name}: ${v.count} > ${v.limit}`);
return result.passed;
