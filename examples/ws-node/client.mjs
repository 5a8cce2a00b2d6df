#!/usr/bin/env node
// Joins a live agentry session over WebSocket (GET /ws, docs/ws.md), sends
// one prompt and prints its turn as it streams: the answer's text, tool
// calls, and the turns others start on the same session. Node 20 and the
// `ws` package.
//
//   AGENTRY_A2A_TOKEN=… node client.mjs http://127.0.0.1:41242 "What is in this workspace?" [--yes]
//
// The URL is the server's (its /ws is used) or a ws:// one, which may carry
// ?contextId=… to join a session that is running. A tool call that needs
// confirmation is allowed once with --yes and declined without it. Exits 0
// when the turn completes; 1 on a JSON-RPC error, a failed turn or a
// closed connection.

import WebSocket from "ws";

const DEVTOOL = "https://github.com/google-gemini/gemini-cli/blob/main/docs/a2a/developer-profile/v0/spec.md";

const args = process.argv.slice(2);
const yes = args.includes("--yes");
const [server, prompt] = args.filter((a) => a !== "--yes");
const token = process.env.AGENTRY_A2A_TOKEN;
if (!server || !prompt || !token) {
  console.error('usage: AGENTRY_A2A_TOKEN=… node client.mjs URL "prompt" [--yes]');
  process.exit(2);
}

const url = new URL(server);
url.protocol = url.protocol.replace(/^http/, "ws");
if (url.pathname === "/") url.pathname = "/ws";

// The token goes in the Authorization header. A browser cannot set headers
// on a WebSocket; it offers the token as a second subprotocol instead,
// base64url without padding (the server never selects that entry):
//
//   const b64 = btoa(token).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
//   new WebSocket(url, ["a2a.v1", `a2a.bearer.${b64}`]);
const ws = new WebSocket(url, ["a2a.v1"], { headers: { Authorization: `Bearer ${token}` } });

let nextId = 1;
const send = (method, message) => {
  const id = nextId++;
  ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params: { message } }));
  return id;
};

const mine = new Set(); // the tasks this client started
const pending = new Map(); // tool_call_id → confirmation asked on our turn
const toolStatus = new Map(); // tool_call_id → last status printed
const answers = new Set(); // the ids of the requests carrying our answers
let done = false;
let midLine = false; // the last text written did not end a line

const print = (s) => {
  if (midLine) process.stdout.write("\n");
  console.log(s);
  midLine = false;
};
const state = (s) => s.replace(/^TASK_STATE_/, "").toLowerCase().replaceAll("_", "-");
const short = (id) => id.slice(-8);

ws.on("open", () => {
  send("SendStreamingMessage", { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: prompt }] });
});

ws.on("message", (data) => {
  const f = JSON.parse(data);
  if (f.error) {
    if (answers.has(f.id) && f.error.code === -32600) {
      print(`[confirm] ${f.error.message}`); // someone else answered first
      return;
    }
    console.error(`error ${f.error.code}: ${f.error.message}`);
    process.exit(1);
  }
  if (f.method === "session/attached") {
    const p = f.params;
    print(`attached to context ${p.contextId}${p.taskId ? ` (turn ${p.taskId} running)` : ""}`);
  } else if (f.method === "session/event") {
    show(f.params.event);
  } else if (f.result) {
    show(f.result, true);
  }
});

// show prints one event: the stream's result, or a notification's event.
function show(ev, response = false) {
  const task = ev.task;
  const update = ev.statusUpdate;
  const taskId = task?.id ?? update?.taskId ?? ev.artifactUpdate?.taskId;
  if (!taskId) return;
  if (response && task && !mine.has(taskId)) {
    mine.add(taskId);
    print(`task ${taskId} in context ${task.contextId}`);
  }
  const ours = mine.has(taskId);
  const tag = ours ? "" : `[other turn ${short(taskId)}] `;
  if (task) {
    // A turn that was under way when we joined, as one task.
    if (!ours) print(`${tag}${state(task.status.state)}: ${task.history?.find((m) => m.role === "ROLE_USER")?.parts?.[0]?.text ?? ""}`);
    return finish(taskId, task.status.state);
  }
  if (!update) return;
  const message = update.status.message;
  switch (update.metadata?.[DEVTOOL]?.kind) {
    case "TEXT_CONTENT":
      for (const p of message?.parts ?? []) {
        if (typeof p.text !== "string") continue;
        if (ours) {
          process.stdout.write(p.text);
          midLine = !p.text.endsWith("\n");
        } else {
          print(`${tag}${p.text}`);
        }
      }
      break;
    case "TOOL_CALL_UPDATE":
      for (const p of message?.parts ?? []) {
        const call = p.data;
        if (!call?.tool_call_id || toolStatus.get(call.tool_call_id) === call.status) continue;
        toolStatus.set(call.tool_call_id, call.status);
        print(`${tag}[tool] ${call.tool_name} ${call.status}: ${call.description ?? ""}`);
        if (ours && call.status === "PENDING" && call.confirmation_request) {
          pending.set(call.tool_call_id, call.confirmation_request);
        }
      }
      break;
    case "STATE_CHANGE":
      if (!ours) print(`${tag}${state(update.status.state)}`);
      break;
  }
  finish(taskId, update.status.state);
}

// finish acts on a task's state: answers our confirmations when the turn
// waits for them, and ends when our turn ends.
function finish(taskId, s) {
  if (!mine.has(taskId) || done) return;
  switch (s) {
    case "TASK_STATE_INPUT_REQUIRED":
      if (pending.size === 0) return; // already answered
      for (const [callId, req] of pending) {
        const option = yes ? "proceed_once" : "cancel";
        const what = req.execute_details?.command ?? req.file_edit_details?.file_path ?? callId;
        print(`[confirm] ${option}${yes ? "" : " (run with --yes to allow)"}: ${what}`);
        answers.add(send("SendMessage", {
          messageId: crypto.randomUUID(),
          role: "ROLE_USER",
          taskId,
          parts: [{ data: { tool_call_id: callId, selected_option_id: option } }],
        }));
      }
      pending.clear();
      break;
    case "TASK_STATE_COMPLETED":
      done = true;
      print(`task ${short(taskId)}: completed`);
      ws.close(1000);
      break;
    case "TASK_STATE_FAILED":
    case "TASK_STATE_CANCELED":
    case "TASK_STATE_REJECTED":
      print(`task ${short(taskId)}: ${state(s)}`);
      process.exit(1);
  }
}

ws.on("unexpected-response", (_req, res) => {
  // A refused handshake: the body says what to change.
  let body = "";
  res.on("data", (c) => (body += c));
  res.on("end", () => {
    let msg = body;
    try {
      msg = JSON.parse(body).error ?? body;
    } catch {}
    console.error(`handshake refused: HTTP ${res.statusCode}: ${msg}`);
    process.exit(1);
  });
});
ws.on("error", (err) => {
  console.error(`connection: ${err.message}`);
  process.exit(1);
});
ws.on("close", (code, reason) => {
  if (done) process.exit(0);
  console.error(`connection closed: ${code} ${reason}`);
  process.exit(1);
});
