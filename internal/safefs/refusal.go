package safefs

import (
	"errors"
	"fmt"
)

// Refusal words why err refused a file, for a message that names the file
// and the rule it broke: "not a regular file (a FIFO, a device, a socket or
// a directory)", "larger than 1 MiB" (limit is the reader's cap), "a
// symbolic link or path leading outside the workspace" (where names the
// root). It returns "" when err is none of [ErrNotRegular], [ErrTooLarge]
// and [ErrEscapes].
func Refusal(err error, limit int64, where string) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrNotRegular):
		return "not a regular file (a FIFO, a device, a socket or a directory)"
	case errors.Is(err, ErrTooLarge):
		return "larger than " + Size(limit)
	case errors.Is(err, ErrEscapes):
		return "a symbolic link or path leading outside " + where
	}
	return ""
}

// Size formats a byte count for a message: "1 MiB", "64 KiB", "100 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
