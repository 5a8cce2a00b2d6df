//go:build !unix

package policy

import "io/fs"

func ownerUID(fs.FileInfo) (uint32, bool) { return 0, false }

func unixMode(st fs.FileInfo) uint32 { return uint32(st.Mode().Perm()) }

const (
	openNoFollow = 0
	openNonBlock = 0
)
