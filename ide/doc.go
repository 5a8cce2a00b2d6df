// Package ide is agentry's CLI side of gemini-cli's IDE companion
// contract (docs/ide.md): finding the companion of the editor agentry runs
// in, and talking to it — an MCP client over streamable HTTP (Connect,
// Client) that keeps the editor's context, opens diffs in the editor and
// reconnects when the companion restarts.
//
// # The connection
//
// Connect opens an MCP session with the MCP Go SDK's client to
// http://127.0.0.1:<port>/mcp, with "Authorization: Bearer <token>" on
// every request when the endpoint has a token, never through a proxy and
// never following a redirect, then lists the companion's tools; diffs need
// both openDiff and closeDiff. The SDK's client has no handlers for
// custom notification methods (it drops them as unsupported before any
// middleware sees them), so the client's HTTP transport reads the
// server-sent event streams on their way to the SDK and takes the
// contract's notifications out of them, in stream order: ide/contextUpdate,
// ide/diffAccepted, ide/diffRejected and the older ide/diffClosed.
//
// # Where it differs from gemini-cli
//
//   - Host: always 127.0.0.1. gemini-cli connects to host.docker.internal
//     when it finds /.dockerenv or /run/.containerenv (and no SSH or dev
//     container variables); agentry does not, so the token never leaves
//     the loopback interface, and a companion in the same container (as
//     agentry's own, or gemini-cli's tests run in Docker) is still found.
//     A companion on a container's host is reached by forwarding its port.
//   - Reconnection: gemini-cli stays disconnected until /ide enable; the
//     Client retries with backoff, re-reading the endpoint through
//     WithRediscover (a restarted companion has a new port and token).
//     While it is down nothing waits: OpenDiff fails at once, pending ones
//     fail when the connection is lost, and edits fall back to the normal
//     confirmation. The SDK's own stream resumption is off: a broken stream
//     is a lost companion.
//   - Bad notifications: gemini-cli's SDK reports a notification that fails
//     its schema as a connection error (the status turns Disconnected);
//     the Client ignores it, keeps the last good context and stays
//     connected. It also refuses contexts over MaxContextBytes or with more
//     than MaxContextFiles files.
//   - Protocol: the session starts with initialize at protocol 2025-11-25,
//     the SDK's probe of the newer server/discover being answered locally:
//     the contract's notifications need the standalone SSE stream, which
//     protocol 2026-07-28 removed.
//   - Transport: HTTP only. gemini-cli also runs a companion over stdio (a
//     discovery file's "stdio" command, GEMINI_CLI_IDE_SERVER_STDIO_COMMAND);
//     no companion known to agentry does.
//   - CloseDiff ends an OpenDiff waiting on the same file with
//     ErrDiffClosed; gemini-cli's resolveDiffFromCli resolves it with the
//     terminal's answer instead, which agentry's approver already has.
//
// Connect takes a few round trips on loopback; callers run it in the
// background so that agentry's start-up never waits for an editor.
package ide
