// An A2A client built on the A2A project's JavaScript SDK (@a2a-js/sdk,
// A2A 1.0), driven by e2e/serve_test.go against `agentry serve`: it reads
// the agent card without a token, streams a prompt over JSON-RPC+SSE,
// answers the write_file confirmation with proceed_once on the same task,
// streams the rest, and tries a wrong token. It prints one JSON object
// summarising what it saw and exits non-zero on anything unexpected.
//
//   AGENTRY_TEST_A2A_JS=<dir>/node_modules AGENTRY_A2A_TOKEN=<token> \
//     node client.mjs <server URL> [workspace]
//
// The SDK is imported by absolute path from AGENTRY_TEST_A2A_JS (NODE_PATH
// does not apply to ESM imports), through the entry points its
// package.json exports.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { randomUUID } from "node:crypto";

const DEVTOOL = "https://github.com/google-gemini/gemini-cli/blob/main/docs/a2a/developer-profile/v0/spec.md";
const STREAM_TIMEOUT_MS = 30_000;

function fail(msg) {
  throw new Error(msg);
}

// sdkImport imports one of @a2a-js/sdk's exported entry points ("." or
// "./client") from the node_modules directory AGENTRY_TEST_A2A_JS names.
async function sdkImport(entry) {
  const modules = process.env.AGENTRY_TEST_A2A_JS;
  if (!modules) fail("AGENTRY_TEST_A2A_JS is not set: it names the node_modules directory holding @a2a-js/sdk");
  const dir = join(modules, "@a2a-js", "sdk");
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const exp = pkg.exports?.[entry];
  const file = typeof exp === "string" ? exp : exp?.import ?? exp?.default;
  if (!file) fail(`@a2a-js/sdk ${pkg.version} exports no ESM entry ${entry}`);
  return { mod: await import(pathToFileURL(join(dir, file)).href), version: pkg.version };
}

const [{ mod: sdk, version: sdkVersion }, { mod: client }] = await Promise.all([sdkImport("."), sdkImport("./client")]);
const { Role, TaskState } = sdk;
const {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} = client;

// state names a task state as A2A 0.3 spelled it: input-required.
function state(s) {
  const name = TaskState[s] ?? String(s);
  return name.replace(/^TASK_STATE_/, "").toLowerCase().replaceAll("_", "-");
}

// toolCallOf returns the development-tool ToolCall a status update's
// message carries as a DataPart, if any.
function toolCallOf(update) {
  for (const p of update.status?.message?.parts ?? []) {
    if (p.content?.$case === "data" && p.content.value && p.content.value.tool_call_id !== undefined) {
      return p.content.value;
    }
  }
  return undefined;
}

function textOf(update) {
  let s = "";
  for (const p of update.status?.message?.parts ?? []) {
    if (p.content?.$case === "text") s += p.content.value;
  }
  return s;
}

// describe summarises a stream response the way agentry's Go tests do:
// Task(state), or KIND:state plus the tool call's status and +confirm
// when it carries a confirmation request.
function describe(resp) {
  const { $case, value } = resp.payload ?? {};
  switch ($case) {
    case "task":
      return `Task(${state(value.status?.state)})`;
    case "statusUpdate": {
      const dev = value.metadata?.[DEVTOOL];
      let s = `${dev?.kind ?? "NO_DEVTOOL_METADATA"}:${state(value.status?.state)}`;
      const tc = toolCallOf(value);
      if (tc) {
        s += `/${tc.status}`;
        if (tc.confirmation_request) s += "+confirm";
      }
      return s;
    }
    case "message":
      return "Message";
    case "artifactUpdate":
      return "ArtifactUpdate";
  }
  return `Unknown(${JSON.stringify(resp)})`;
}

// recordingFetch wraps fetch: it sends the bearer token (when given) and
// remembers each response's status and A2A-Extensions header.
function recordingFetch(token, log) {
  return async (input, init = {}) => {
    const headers = new Headers(init.headers);
    if (token !== undefined) headers.set("Authorization", `Bearer ${token}`);
    const res = await fetch(input, { ...init, headers });
    log.push({
      url: String(input),
      authorization: headers.has("Authorization"),
      status: res.status,
      extensions: res.headers.get("A2A-Extensions"),
    });
    return res;
  };
}

function makeClient(card, fetchImpl) {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      preferredTransports: ["JSONRPC"],
    }),
  );
  return factory.createFromAgentCard(card);
}

// callOptions activates the development-tool extension on a call (the
// SDK sends it as the A2A-Extensions header).
function callOptions() {
  return {
    serviceParameters: ServiceParameters.create(withA2AExtensions(DEVTOOL)),
    signal: AbortSignal.timeout(STREAM_TIMEOUT_MS),
  };
}

function userMessage(parts, { taskId = "", contextId = "", metadata } = {}) {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    taskId,
    contextId,
    parts,
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

async function collect(c, message) {
  const events = [];
  for await (const ev of c.sendMessageStream({ tenant: "", message, configuration: undefined, metadata: undefined }, callOptions())) {
    events.push(ev);
  }
  return events;
}

// summary of one stream: the described events, the TEXT_CONTENT text,
// the task and context ids seen, the models named in the metadata.
function summarise(events) {
  const taskIds = new Set();
  const contextIds = new Set();
  const models = new Set();
  let text = "";
  for (const ev of events) {
    const { $case, value } = ev.payload ?? {};
    if ($case === "task") {
      taskIds.add(value.id);
      contextIds.add(value.contextId);
    } else if ($case === "statusUpdate") {
      taskIds.add(value.taskId);
      contextIds.add(value.contextId);
      const dev = value.metadata?.[DEVTOOL];
      if (dev?.model !== undefined) models.add(dev.model);
      if (dev?.kind === "TEXT_CONTENT") text += textOf(value);
    }
  }
  return { events: events.map(describe), text, taskIds: [...taskIds], contextIds: [...contextIds], models: [...models] };
}

async function main() {
  const url = process.argv[2] ?? fail("usage: node client.mjs <server URL> [workspace]");
  const workspace = process.argv[3];
  const token = process.env.AGENTRY_A2A_TOKEN ?? fail("AGENTRY_A2A_TOKEN is not set");
  const out = { sdkVersion };

  // The card, without a token.
  const cardLog = [];
  const card = await new DefaultAgentCardResolver({ fetchImpl: recordingFetch(undefined, cardLog) }).resolve(url);
  const ext = (card.capabilities?.extensions ?? []).find((e) => e.uri === DEVTOOL);
  out.card = {
    name: card.name,
    status: cardLog[0]?.status,
    sentAuthorization: cardLog[0]?.authorization,
    streaming: card.capabilities?.streaming === true,
    devtool: ext ? { required: ext.required === true } : null,
    interfaces: (card.supportedInterfaces ?? []).map((i) => `${i.protocolBinding} ${i.protocolVersion} ${i.url}`),
  };
  if (!ext) fail(`the agent card lists no ${DEVTOOL} extension: ${JSON.stringify(card.capabilities)}`);

  const log = [];
  const c = await makeClient(card, recordingFetch(token, log));
  out.transport = `${c.transport.protocolName} ${c.protocolVersion}`;

  // First stream: the prompt, up to the confirmation request.
  const metadata = workspace ? { [DEVTOOL]: { workspace_path: workspace } } : undefined;
  const first = await collect(c, userMessage([{ content: { $case: "text", value: "write a.txt" } }], { metadata }));
  out.first = summarise(first);
  out.first.extensionsEchoed = log.at(-1)?.extensions ?? null;
  let pending;
  for (const ev of first) {
    if (ev.payload?.$case !== "statusUpdate") continue;
    const tc = toolCallOf(ev.payload.value);
    if (ev.payload.value.metadata?.[DEVTOOL]?.kind === "TOOL_CALL_UPDATE" && tc?.status === "PENDING" && tc.confirmation_request) {
      pending = { tc, taskId: ev.payload.value.taskId, contextId: ev.payload.value.contextId };
    }
  }
  if (!pending) fail(`no TOOL_CALL_UPDATE PENDING with a confirmation_request in the first stream: ${out.first.events.join(" ")}`);
  const req = pending.tc.confirmation_request;
  out.confirmation = {
    toolName: pending.tc.tool_name,
    inputParameters: pending.tc.input_parameters ?? null,
    options: (req.options ?? []).map((o) => o.id),
    fileEdit: req.file_edit_details
      ? {
          fileName: req.file_edit_details.file_name ?? null,
          filePath: req.file_edit_details.file_path ?? null,
          newContent: req.file_edit_details.new_content ?? null,
        }
      : null,
  };
  if (!out.confirmation.options.includes("proceed_once")) fail(`no proceed_once option: ${JSON.stringify(req.options)}`);

  // Second stream: the confirmation on the same task and context.
  const confirmation = userMessage(
    [{ content: { $case: "data", value: { tool_call_id: pending.tc.tool_call_id, selected_option_id: "proceed_once" } } }],
    { taskId: pending.taskId, contextId: pending.contextId },
  );
  const second = await collect(c, confirmation);
  out.second = summarise(second);
  out.sameTask =
    [...out.first.taskIds, ...out.second.taskIds].every((id) => id === pending.taskId) &&
    [...out.first.contextIds, ...out.second.contextIds].every((id) => id === pending.contextId);
  out.text = out.second.text;

  // A wrong token: the streaming call and a plain call are refused.
  out.wrongToken = {};
  for (const [what, call] of [
    ["stream", async (wc) => { for await (const _ of wc.sendMessageStream({ tenant: "", message: userMessage([{ content: { $case: "text", value: "hello" } }]) }, callOptions())); }],
    ["getTask", (wc) => wc.getTask({ tenant: "", id: pending.taskId }, callOptions())],
  ]) {
    const wrongLog = [];
    const wc = await makeClient(card, recordingFetch(`${token}-wrong`, wrongLog));
    let error = null;
    try {
      await call(wc);
    } catch (e) {
      error = `${e?.name}: ${e?.message}`;
    }
    out.wrongToken[what] = { status: wrongLog.at(-1)?.status ?? null, error };
  }

  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stderr.write(`a2a-js client: ${e?.stack ?? e}\n`);
  process.exit(1);
});
