//go:build !unix

package childproc

// Watch does nothing where there are no Unix process groups.
func Watch(int) (*Guard, error) { return nil, nil }
