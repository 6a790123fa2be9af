// sdk.plugin and sdk.dispatch: list plugins and tools, queue a job, read its status.
// cd examples && vigil script run scripts/plugin-dispatch.ts --var TOOL=upper
const plugins = sdk.plugin.list();
const tools = sdk.dispatch.list();
if (!sdk.vars.TOOL) return { plugins, tools };
const job = sdk.dispatch.send(sdk.vars.TOOL, { text: 'hello' }); // {id, status: "queued"}; the daemon or `vigil dispatch run` runs it
return { job, status: sdk.dispatch.status(job.id) };
