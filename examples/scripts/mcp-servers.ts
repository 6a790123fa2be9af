// servers.<id>.call: tools of MCP servers in <workspace>/.mcp.json, e.g.
//   {"mcpServers": {"echo": {"command": "node", "args": ["test/fakes/echo-mcp-server.mjs"]}}}
// cd examples && vigil script run scripts/mcp-servers.ts --var SERVER=echo
const id = sdk.vars.SERVER ?? 'echo';
const reply = await servers[id].call('echo', { text: 'hello from a script' });
return reply.content;
