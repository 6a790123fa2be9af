// A plugin tool: the job's params arrive as JSON on stdin, the result is stdout.
let input = '';
for await (const chunk of process.stdin) input += chunk;
const { text = '' } = JSON.parse(input || '{}');
process.stdout.write(`${JSON.stringify({ text: String(text).toUpperCase() })}\n`);
