// Package ide is agentry's CLI side of gemini-cli's IDE companion
// contract (docs/ide.md): finding the companion of the editor agentry runs
// in (Discover), and talking to it — an MCP client over streamable HTTP (Connect,
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
// Where the connection differs from gemini-cli (the host, reconnection,
// ignored bad notifications, the protocol version) is in docs/ide.md.
//
// Connect takes a few round trips on loopback; callers run it in the
// background so that agentry's start-up never waits for an editor.
package ide
