// An MCP client in another language: the official TypeScript SDK over stdio, starting the
// command given as a JSON list in argv[2] (promptvcr mcp -- <server>) as its server.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "promptvcr-node-test", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const added = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
const counted = await client.callTool({ name: "count", arguments: { n: 3 } });
await client.close();
console.log(JSON.stringify({
  tools: tools.tools.map((t) => t.name).sort(),
  added: added.content[0].text,
  counted: counted.content[0].text,
}));
