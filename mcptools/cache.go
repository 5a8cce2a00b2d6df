package mcptools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentry-dev/agentry/internal/safefs"
)

// cacheFormat is the version of the cache files' shape; a file of another
// version is ignored.
const cacheFormat = 1

// lists is what one server offers, as last listed: its enabled tools,
// resources and prompts, each sorted as the server listed them.
type lists struct {
	Tools     []*mcp.Tool     `json:"tools"`
	Resources []*mcp.Resource `json:"resources,omitempty"`
	Prompts   []*mcp.Prompt   `json:"prompts,omitempty"`
}

// cacheFile is the JSON shape of a cache entry.
type cacheFile struct {
	Format int    `json:"format"`
	Server string `json:"server"` // the name it was listed under, for people
	lists
}

// cachePath returns the cache file of a server's settings in dir: the
// name is a hash of the whole settings, so a changed command, argument,
// URL, header or filter is a different entry. Only lazy, which says when
// the server starts and not what it offers, is left out.
func cachePath(dir string, c ServerConfig) (string, error) {
	c.Lazy = nil
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return filepath.Join(dir, hex.EncodeToString(sum[:16])+".json"), nil
}

// readCache returns the lists cached in path and their encoding, or nil
// when there is no usable entry.
func readCache(path string) (*lists, []byte) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil
	}
	// The schemas stay JSON: they go to the model as they are, and
	// decoding them into maps is most of what reading the cache costs.
	var f struct {
		Format    int             `json:"format"`
		Tools     []rawTool       `json:"tools"`
		Resources []*mcp.Resource `json:"resources"`
		Prompts   []*mcp.Prompt   `json:"prompts"`
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Format != cacheFormat || f.Tools == nil {
		return nil, nil
	}
	l := &lists{Tools: make([]*mcp.Tool, len(f.Tools)), Resources: f.Resources, Prompts: f.Prompts}
	for i := range f.Tools {
		t := f.Tools[i].Tool
		if len(f.Tools[i].InputSchema) > 0 {
			t.InputSchema = f.Tools[i].InputSchema
		}
		if len(f.Tools[i].OutputSchema) > 0 {
			t.OutputSchema = f.Tools[i].OutputSchema
		}
		l.Tools[i] = &t
	}
	return l, b
}

// rawTool is a cached tool whose schemas are kept as JSON.
type rawTool struct {
	mcp.Tool
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

// encodeCache returns the cache file of l.
func encodeCache(server string, l *lists) ([]byte, error) {
	return json.MarshalIndent(cacheFile{Format: cacheFormat, Server: server, lists: *l}, "", "  ")
}

// writeCache writes b to path atomically, the directory 0700 and the
// file 0600, unless the file already holds b.
func writeCache(path string, b []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("mcp cache: %w", err)
	}
	if err := safefs.WritePrivateIn(dir, filepath.Base(path), b); err != nil {
		return fmt.Errorf("mcp cache: %w", err)
	}
	return nil
}
