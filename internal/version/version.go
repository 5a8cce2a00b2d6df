// Package version reports agentry's version.
package version

import "runtime/debug"

// Version returns the module version agentry was built from, or "dev" for a
// build from a source tree.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// UserAgent is the user agent agentry sends to model APIs.
func UserAgent() string { return "agentry/" + Version() }
