package version

import (
	"runtime"
	"runtime/debug"
)

// BuildInfo is what a binary knows of its own build.
type BuildInfo struct {
	// Version is Version().
	Version string
	// Go is the Go release that built the binary, and OS and Arch its
	// target.
	Go, OS, Arch string
	// Revision is the commit built from, with Modified set when the tree
	// had uncommitted changes; "" when the build did not record it.
	Revision string
	Modified bool
	// CGO is the CGO_ENABLED setting of the build ("0" makes a static
	// binary), "" when not recorded.
	CGO string
}

// Build returns the binary's build information.
func Build() BuildInfo {
	b := BuildInfo{Version: Version(), Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "CGO_ENABLED":
			b.CGO = s.Value
		}
	}
	return b
}
