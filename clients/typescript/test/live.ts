// Run by tests/api/test_clients.py against a live server: TTMEMORY_URL, TTMEMORY_API_KEY.
import assert from "node:assert/strict";
import { createMemoryClient, nextCursor, type Problem } from "../src/index.js";

const client = createMemoryClient({
  baseUrl: process.env.TTMEMORY_URL!,
  apiKey: process.env.TTMEMORY_API_KEY!,
});

// Open a session and append five turns, one by one and as a batch.
const opened = await client.POST("/sessions/", { body: { key: "ts-client" } });
assert.equal(opened.response.status, 201);
const sid = opened.data!.id;
const path = { session_id: sid };
for (const text of ["one", "two", "three"]) {
  const added = await client.POST("/sessions/{session_id}/messages/", {
    params: { path },
    body: { message: { role: "user", content: text } },
  });
  assert.equal(added.response.status, 201);
}
const batch = await client.POST("/sessions/{session_id}/messages/", {
  params: { path },
  body: { messages: [{ role: "assistant", content: "four" }, { role: "user", content: "five" }] },
});
assert.deepEqual(batch.data!.messages.map((m) => m.seq), [4, 5]);

// Page newest first, two at a time, following the cursor.
const seen: number[][] = [];
let before: number | undefined;
for (;;) {
  const page = await client.GET("/sessions/{session_id}/messages/", {
    params: { path, query: { limit: 2, before } },
  });
  seen.push(page.data!.results.map((m) => m.seq));
  before = nextCursor(page.data!.next);
  if (before === undefined) break;
}
assert.deepEqual(seen, [[4, 5], [2, 3], [1]]);

// Remember a fact and recall it.
const fact = await client.POST("/facts/", { body: { text: "Lives in Lisbon", kind: "fact" } });
assert.equal(fact.response.status, 201);
const recall = await client.POST("/facts/recall/", { body: { query: "Lisbon", k: 3 } });
assert.deepEqual(recall.data!.hits.map((hit) => hit.fact.id), [fact.data!.id]);

// Snapshot, add a turn, roll back (the turn goes), undo (it is back).
const snapshot = await client.POST("/sessions/{session_id}/snapshots/", {
  params: { path },
  body: { label: "before six" },
});
await client.POST("/sessions/{session_id}/messages/", {
  params: { path },
  body: { message: { role: "user", content: "six" } },
});
const rolled = await client.POST("/sessions/{session_id}/snapshots/{snapshot_id}/rollback/", {
  params: { path: { session_id: sid, snapshot_id: snapshot.data!.id } },
  body: { safe: true },
});
assert.deepEqual(rolled.data!.removed_seqs, [6]);
assert.equal(rolled.data!.session.message_count, 5);
const undone = await client.POST("/sessions/{session_id}/undo/", { params: { path } });
assert.equal(undone.data!.session.message_count, 6);

// An error answer is typed as the shared Problem.
const missing = await client.GET("/sessions/{session_id}/", {
  params: { path: { session_id: 987654321 } },
});
const problem: Problem | undefined = missing.error;
assert.equal(missing.response.headers.get("content-type"), "application/problem+json");
assert.deepEqual(problem, { type: "about:blank", title: "Not Found", status: 404, detail: "Not found." });
const invalid = await client.POST("/sessions/{session_id}/messages/", {
  params: { path },
  body: { message: { role: "robot", content: "x" } },
});
assert.equal(invalid.error!.status, 400);
assert.ok(invalid.error!.errors!["message.role"]!.length > 0);

console.log(JSON.stringify({ ok: true, session: sid, pages: seen }));
