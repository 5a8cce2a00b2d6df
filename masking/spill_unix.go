//go:build unix

package masking

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
)

// The file calls are made directly: os.OpenFile also registers every file
// with the runtime's poller, five more system calls a file on Linux, and a
// first masking pass over a long history creates hundreds of files.

// createFile creates path, private to the user as tool output may hold
// secrets, and writes data to it. An existing path is left alone, and the
// error is then fs.ErrExist.
func createFile(path string, data []byte) error {
	fd, err := retryEINTR(func() (int, error) {
		return syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o600)
	})
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	for len(data) > 0 {
		n, err := retryEINTR(func() (int, error) { return syscall.Write(fd, data) })
		if err == nil && n == 0 {
			err = io.ErrShortWrite
		}
		if err != nil {
			syscall.Close(fd)
			syscall.Unlink(path) // the next pass would replace it anyway
			return &os.PathError{Op: "write", Path: path, Err: err}
		}
		data = data[n:]
	}
	if err := syscall.Close(fd); err != nil {
		return &os.PathError{Op: "close", Path: path, Err: err}
	}
	return nil
}

// sameFile reports whether path is a regular file holding exactly data. A
// missing path holds other data.
func sameFile(path string, data []byte) (bool, error) {
	fd, err := retryEINTR(func() (int, error) {
		return syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
	})
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ELOOP) {
		return false, nil // gone, or a symbolic link: replaced
	}
	if err != nil {
		return false, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return false, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size != int64(len(data)) {
		return false, nil
	}
	buf := make([]byte, min(len(data), 32<<10))
	for rest := data; len(rest) > 0; {
		n, err := retryEINTR(func() (int, error) { return syscall.Read(fd, buf[:min(len(buf), len(rest))]) })
		if err != nil {
			return false, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 || !bytes.Equal(buf[:n], rest[:n]) {
			return false, nil
		}
		rest = rest[n:]
	}
	return true, nil
}

func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if !errors.Is(err, syscall.EINTR) {
			return n, err
		}
	}
}
