// sdk.ledger: check the hash chain of .vigil/ledger.jsonl.
// cd examples && vigil script run scripts/ledger-verify.js
const verdict = sdk.ledger.verify();
if (!verdict.valid) sdk.notify.send('ledger broken', `line ${verdict.broken.line}: ${verdict.broken.reason}`);
return verdict;
