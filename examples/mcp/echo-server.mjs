#!/usr/bin/env node
// A stdio MCP server for scripts/mcp-servers.ts (.mcp.json): tools "echo" and "add".
// With MARKER set, it writes its pid there when it starts (to prove lazy
// start and closing at exit).
import { writeFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

if (process.env.MARKER) writeFileSync(process.env.MARKER, String(process.pid));
const server = new McpServer({ name: 'echo-test', version: '1.0.0' });
server.tool('echo', 'Echoes its text', { text: z.string() }, async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }));
server.tool('add', 'Adds two numbers', { a: z.number(), b: z.number() }, async ({ a, b }) => ({
  content: [{ type: 'text', text: String(a + b) }],
}));
await server.connect(new StdioServerTransport());
