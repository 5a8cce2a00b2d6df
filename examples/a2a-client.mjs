#!/usr/bin/env node
// Sends one prompt to a running `agentry serve` over A2A (JSON-RPC,
// SendMessage) and prints the agent's answer. Node 18 or newer, nothing
// to install.
//
//   AGENTRY_A2A_TOKEN=… node examples/a2a-client.mjs http://127.0.0.1:41242 "What is in this workspace?"
//
// The token is the one `agentry serve` printed at start (or the one you set
// with AGENTRY_A2A_TOKEN). Add a context id as a third argument to continue
// a conversation; the script prints the context id of the one it ran in.

const [url = "http://127.0.0.1:41242", prompt, contextId] = process.argv.slice(2);
const token = process.env.AGENTRY_A2A_TOKEN;
if (!prompt || !token) {
  console.error('usage: AGENTRY_A2A_TOKEN=… node a2a-client.mjs URL "prompt" [CONTEXT_ID]');
  process.exit(2);
}

// The agent card is public: it names the agent and its interfaces.
const cardResponse = await fetch(new URL("/.well-known/agent-card.json", url));
if (!cardResponse.ok) {
  console.error(`agent card: HTTP ${cardResponse.status}`);
  process.exit(1);
}
const card = await cardResponse.json();
console.error(`agent: ${card.name} (${card.version ?? "no version"})`);

const message = {
  messageId: crypto.randomUUID(),
  role: "ROLE_USER",
  parts: [{ text: prompt }],
  ...(contextId ? { contextId } : {}),
};
const response = await fetch(url, {
  method: "POST",
  headers: {
    "Content-Type": "application/json",
    Authorization: `Bearer ${token}`,
  },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message } }),
});
const reply = await response.json();
if (reply.error) {
  console.error(`error ${reply.error.code}: ${reply.error.message}`);
  process.exit(1);
}
const task = reply.result.task ?? reply.result;

// Plain A2A: the answer is the task's artifact; the agent's text messages
// in its history are the fallback.
const texts = (parts = []) => parts.filter((p) => typeof p.text === "string").map((p) => p.text);
let answer = (task.artifacts ?? []).flatMap((a) => texts(a.parts));
if (answer.length === 0) {
  answer = (task.history ?? []).filter((m) => m.role === "ROLE_AGENT").flatMap((m) => texts(m.parts));
}
console.log(answer.join("\n"));
console.error(`task ${task.id}: ${task.status?.state}; context ${task.contextId}`);
if (task.status?.state !== "TASK_STATE_COMPLETED") process.exit(1);
