// One turn of a chat frontend: open a session, append the user's message, read the context
// to send to a model. Run (after npm ci): TTMEMORY_URL=http://127.0.0.1:8000/api/memory
// TTMEMORY_TOKEN=<a DRF token> npm run example   (or TTMEMORY_API_KEY=ttm_...)
import { createMemoryClient, type Problem } from "../src/index.js";

const client = createMemoryClient({
  baseUrl: process.env.TTMEMORY_URL ?? "http://127.0.0.1:8000/api/memory",
  token: process.env.TTMEMORY_TOKEN,
  apiKey: process.env.TTMEMORY_API_KEY,
});

const opened = await client.POST("/sessions/", { body: { key: "example-chat" } });
if (opened.error) throw new Error(describe(opened.error));
const session = opened.data;

const appended = await client.POST("/sessions/{session_id}/messages/", {
  params: { path: { session_id: session.id } },
  body: { message: { role: "user", content: "Hi, I am Ada" } },
});
if (appended.error) throw new Error(describe(appended.error));

const context = await client.GET("/sessions/{session_id}/context/", {
  params: { path: { session_id: session.id }, query: { max_tokens: 4000 } },
});
if (context.error) throw new Error(describe(context.error));
console.log(`session ${session.id}: ${context.data.messages.length} messages, ${context.data.tokens} tokens`);

function describe(problem: Problem): string {
  const fields = Object.entries(problem.errors ?? {}).map(([name, why]) => `${name}: ${why.join(", ")}`);
  return [`${problem.status} ${problem.title}: ${problem.detail}`, ...fields].join("\n");
}
