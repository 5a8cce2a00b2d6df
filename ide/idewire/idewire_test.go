package idewire_test

import (
	"testing"

	"github.com/agentry-dev/agentry/ide/idewire"
)

func TestFileName(t *testing.T) {
	name := idewire.FileName(4242, 37001)
	if name != "gemini-ide-server-4242-37001.json" {
		t.Fatalf("FileName = %q", name)
	}
	pid, port, ok := idewire.ParseFileName(name)
	if !ok || pid != 4242 || port != 37001 {
		t.Fatalf("ParseFileName(%q) = %d %d %v", name, pid, port, ok)
	}
	for _, bad := range []string{"gemini-ide-server-4242.json", "gemini-ide-server-a-1.json", "x-gemini-ide-server-1-2.json", "gemini-ide-server-1-2.json.tmp", "gemini-ide-server-99999999999999999999-1.json"} {
		if _, _, ok := idewire.ParseFileName(bad); ok {
			t.Errorf("ParseFileName(%q) accepted it", bad)
		}
	}
}
