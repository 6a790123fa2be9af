// sdk.vars (frozen), sdk.workspace, sleep (capped at 30000 ms).
// cd examples && vigil script run scripts/vars-workspace-sleep.js --var NAME=world
let refused = false;
try {
  sdk.vars.NAME = 'changed';
} catch {
  refused = true; // scripts run in strict mode: a frozen object refuses writes
}
await sleep(100);
return { hello: sdk.vars.NAME, refused, workspace: sdk.workspace.path };
