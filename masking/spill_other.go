//go:build !unix

package masking

import (
	"bytes"
	"os"
)

// createFile creates path, private to the user as tool output may hold
// secrets, and writes data to it. An existing path is left alone, and the
// error is then fs.ErrExist.
func createFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// sameFile reports whether path is a regular file holding exactly data. A
// missing path holds other data.
func sameFile(path string, data []byte) (bool, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() != int64(len(data)) {
		return false, err
	}
	got := make([]byte, len(data)+1)
	n, _ := f.ReadAt(got, 0)
	if n != len(data) || !bytes.Equal(got[:n], data) {
		return false, nil
	}
	return true, nil
}
