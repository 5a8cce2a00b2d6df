//go:build !(linux || darwin || freebsd || openbsd || netbsd)

package runtime

func errnoCause(error) string { return "" }

func fileSystemFull(string) bool { return false }
