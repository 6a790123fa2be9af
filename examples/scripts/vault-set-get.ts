// sdk.vault: store a secret (scope "example"), read it, list names, delete it.
// cd examples && vigil script run scripts/vault-set-get.ts --var VALUE=s3cret
sdk.vault.set('demo_token', sdk.vars.VALUE ?? 'example-value', { scope: 'example' });
const value = sdk.vault.get('demo_token', { scope: 'example' });
const names = sdk.vault.list({ scope: 'example' });
const missing = sdk.vault.get('never_set'); // null, not an error
sdk.vault.delete('demo_token', { scope: 'example' });
return { roundTrip: value === (sdk.vars.VALUE ?? 'example-value'), names, missing };
