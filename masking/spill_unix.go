//go:build unix

package masking

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// writeFile writes data to path, replacing any earlier content: names are
// deterministic, so a second write of the same output yields the same
// file. The file is private to the user, as tool output may hold secrets.
//
// It makes the open, write and close calls itself: os.WriteFile also
// registers every file with the runtime's poller, five more system calls
// a file on Linux, and a first masking pass over a long history creates
// hundreds of files.
func writeFile(path string, data []byte) error {
	fd, err := retryEINTR(func() (int, error) {
		return syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC|syscall.O_CLOEXEC, 0o600)
	})
	if err != nil {
		return fmt.Errorf("masking: spill tool output: %w", &os.PathError{Op: "open", Path: path, Err: err})
	}
	for len(data) > 0 {
		n, err := retryEINTR(func() (int, error) { return syscall.Write(fd, data) })
		if err == nil && n == 0 {
			err = io.ErrShortWrite
		}
		if err != nil {
			syscall.Close(fd)
			return fmt.Errorf("masking: spill tool output: %w", &os.PathError{Op: "write", Path: path, Err: err})
		}
		data = data[n:]
	}
	if err := syscall.Close(fd); err != nil {
		return fmt.Errorf("masking: spill tool output: %w", &os.PathError{Op: "close", Path: path, Err: err})
	}
	return nil
}

func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if !errors.Is(err, syscall.EINTR) {
			return n, err
		}
	}
}
