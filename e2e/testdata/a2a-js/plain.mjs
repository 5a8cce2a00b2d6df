// A generic A2A client built on the A2A project's JavaScript SDK
// (@a2a-js/sdk, A2A 1.0), driven by e2e/serve_test.go against
// `agentry serve`. It never asks for the development-tool extension: it
// reads the card, streams a prompt over one binding (JSONRPC, HTTP+JSON
// or GRPC), gets the write_file call's approval question, answers it
// first with a reply the server refuses, then with "yes" on the same
// task, streams the rest and reads the task back. It prints one JSON
// object summarising what it saw and exits non-zero on anything
// unexpected.
//
//   AGENTRY_TEST_A2A_JS=<dir>/node_modules AGENTRY_A2A_TOKEN=<token> \
//     node plain.mjs <server URL> <JSONRPC|HTTP+JSON|GRPC>
//
// The SDK is imported by absolute path from AGENTRY_TEST_A2A_JS (NODE_PATH
// does not apply to ESM imports), through the entry points its
// package.json exports; its gRPC transport needs the optional peers
// @grpc/grpc-js and @bufbuild/protobuf installed beside it.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { randomUUID } from "node:crypto";

const DEVTOOL = "https://github.com/google-gemini/gemini-cli/blob/main/docs/a2a/developer-profile/v0/spec.md";
const STREAM_TIMEOUT_MS = 30_000;

function fail(msg) {
  throw new Error(msg);
}

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

const [{ mod: sdk, version: sdkVersion }, { mod: client }, { mod: grpcClient }] = await Promise.all([
  sdkImport("."),
  sdkImport("./client"),
  sdkImport("./client/grpc"),
]);
const { Role, TaskState } = sdk;
const { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } = client;
const { GrpcTransportFactory } = grpcClient;

function state(s) {
  const name = TaskState[s] ?? String(s);
  return name.replace(/^TASK_STATE_/, "").toLowerCase().replaceAll("_", "-");
}

function partsText(parts) {
  let s = "";
  for (const p of parts ?? []) {
    if (p.content?.$case === "text") s += p.content.value;
    else if (p.content) s += `<${p.content.$case}>`;
  }
  return s;
}

// describe summarises a stream response: Task(state), status:state with
// the first line of its text, artifact=/+ "text" (replacing / appending),
// ! for a last chunk; NO_DEVTOOL_METADATA is never printed, a
// development-tool kind is.
function describe(resp) {
  const { $case, value } = resp.payload ?? {};
  switch ($case) {
    case "task":
      return `Task(${state(value.status?.state)})`;
    case "statusUpdate": {
      let s = `status:${state(value.status?.state)}`;
      const dev = value.metadata?.[DEVTOOL];
      if (dev) s += `{${dev.kind}}`;
      const text = partsText(value.status?.message?.parts);
      if (text) s += `[${JSON.stringify(text.split("\n")[0])}]`;
      return s;
    }
    case "artifactUpdate":
      return `artifact${value.append ? "+" : "="}${JSON.stringify(partsText(value.artifact?.parts))}${value.lastChunk ? "!" : ""}`;
    case "message":
      return "Message";
  }
  return `Unknown(${JSON.stringify(resp)})`;
}

// recordingFetch sends the bearer token and remembers each request's
// A2A-Extensions header and each response's status and content type.
function recordingFetch(token, log) {
  return async (input, init = {}) => {
    const headers = new Headers(init.headers);
    if (token !== undefined) headers.set("Authorization", `Bearer ${token}`);
    const res = await fetch(input, { ...init, headers });
    log.push({
      url: String(input),
      extensionsSent: headers.get("A2A-Extensions") ?? headers.get("X-A2A-Extensions"),
      status: res.status,
      contentType: res.headers.get("Content-Type"),
    });
    return res;
  };
}

function userMessage(text, { taskId = "", contextId = "" } = {}) {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    taskId,
    contextId,
    parts: [{ content: { $case: "text", value: text } }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

async function main() {
  const url = process.argv[2] ?? fail("usage: node plain.mjs <server URL> <JSONRPC|HTTP+JSON|GRPC>");
  const binding = process.argv[3] ?? fail("usage: node plain.mjs <server URL> <JSONRPC|HTTP+JSON|GRPC>");
  const token = process.env.AGENTRY_A2A_TOKEN ?? fail("AGENTRY_A2A_TOKEN is not set");
  const out = { sdkVersion, binding };

  const card = await new DefaultAgentCardResolver({ fetchImpl: recordingFetch(undefined, []) }).resolve(url);
  const ext = (card.capabilities?.extensions ?? []).find((e) => e.uri === DEVTOOL);
  out.card = { devtoolListed: !!ext, devtoolRequired: ext?.required === true };

  const log = [];
  const fetchImpl = recordingFetch(token, log);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl }), new GrpcTransportFactory({})],
      preferredTransports: [binding],
    }),
  );
  const c = await factory.createFromAgentCard(card);
  out.transport = `${c.transport.protocolName} ${c.protocolVersion}`;
  // gRPC carries the token as call metadata; nothing asks for the
  // extension on any binding.
  const callOptions = () => ({
    serviceParameters: binding === "GRPC" ? { authorization: `Bearer ${token}` } : {},
    signal: AbortSignal.timeout(STREAM_TIMEOUT_MS),
  });
  const stream = async (message) => {
    const events = [];
    for await (const ev of c.sendMessageStream({ tenant: "", message, configuration: undefined, metadata: undefined }, callOptions())) {
      events.push(ev);
    }
    return events;
  };
  const answerOf = (events) => {
    let text = "";
    for (const ev of events) {
      if (ev.payload?.$case !== "artifactUpdate") continue;
      if (!ev.payload.value.append) text = "";
      text += partsText(ev.payload.value.artifact?.parts);
    }
    return text;
  };

  const first = await stream(userMessage("write a.txt"));
  out.first = first.map(describe);
  const last = first.at(-1)?.payload;
  if (last?.$case !== "statusUpdate" || state(last.value.status?.state) !== "input-required") {
    fail(`the first stream did not end input-required: ${out.first.join(" ")}`);
  }
  const { taskId, contextId } = last.value;
  out.question = partsText(last.value.status?.message?.parts);

  // A reply that is none of the documented words: refused, as an error
  // the SDK raises, and the task keeps waiting.
  const before = log.length;
  try {
    await stream(userMessage("maybe later", { taskId, contextId }));
    out.badReply = { error: null };
  } catch (e) {
    out.badReply = { error: `${e?.name}: ${e?.message}`, reason: e?.reason ?? null };
  }
  const http = log.slice(before).at(-1);
  if (http) out.badReply.http = { status: http.status, contentType: http.contentType };

  const second = await stream(userMessage("yes", { taskId, contextId }));
  out.second = second.map(describe);
  out.answer = answerOf([...first, ...second]);

  const task = await c.getTask({ tenant: "", id: taskId, historyLength: undefined }, callOptions());
  out.task = {
    state: state(task.status?.state),
    artifacts: (task.artifacts ?? []).map((a) => ({ name: a.name, text: partsText(a.parts) })),
    devtoolMetadata: !!task.metadata?.[DEVTOOL],
  };
  out.extensionsSent = log.filter((l) => l.extensionsSent).map((l) => l.url);
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stderr.write(`a2a-js plain client: ${e?.stack ?? e}\n`);
  process.exit(1);
});
