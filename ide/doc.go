// Package ide is agentry's CLI side of gemini-cli's IDE companion
// contract (docs/ide.md): finding the companion of the editor agentry runs
// in, and talking to it — an MCP client over streamable HTTP (Connect,
// Client) that keeps the editor's context, opens diffs in the editor and
// reconnects when the companion restarts.
package ide
