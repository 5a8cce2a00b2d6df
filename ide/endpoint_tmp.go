package ide

import "github.com/agentry-dev/agentry/ide/idewire"

// Endpoint is what discovery hands the connection: a companion's port,
// token and validated workspace roots.
//
// Temporary copy of the connection's own declaration, removed when the
// connection lands beside discovery.
type Endpoint struct {
	Port      int
	Token     string
	Workspace []string         // the validated roots
	IDE       *idewire.IDEInfo // may be nil
	File      string           // the discovery file, "" from the environment
}
