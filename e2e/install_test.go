package e2e

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestBinaryIsStatic: the binary built as the README's Install section
// builds it records CGO_ENABLED=0 and, where ldd exists, links no shared
// library.
func TestBinaryIsStatic(t *testing.T) {
	out, err := exec.Command("go", "version", "-m", binary).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^\s*build\s+CGO_ENABLED=0\s*$`).Match(out) {
		t.Errorf("the binary was not built with CGO_ENABLED=0:\n%s", out)
	}
	ldd, err := exec.LookPath("ldd")
	if err != nil {
		return // not every system has ldd; the build setting above is the check there
	}
	// ldd exits non-zero for a static binary: its words are the test.
	out, _ = exec.Command(ldd, binary).CombinedOutput()
	if !strings.Contains(string(out), "not a dynamic executable") && !strings.Contains(string(out), "statically linked") {
		t.Errorf("ldd says the binary is dynamic:\n%s", out)
	}
}

// TestVersionCommand: `agentry version` starts with the line --version
// prints, then says how the binary was built.
func TestVersionCommand(t *testing.T) {
	e := newEnv(t)
	short := e.run("", "--version")
	long := e.run("", "version")
	if short.code != 0 || long.code != 0 {
		t.Fatalf("--version exit %d, version exit %d\n%s%s", short.code, long.code, short.stderr, long.stderr)
	}
	if !strings.HasPrefix(short.stdout, "agentry version ") || !strings.HasPrefix(long.stdout, short.stdout) {
		t.Errorf("--version printed %q; version printed %q, which should start with it", short.stdout, long.stdout)
	}
	for _, want := range []string{"\ngo: go1.", "\ncgo: off\n"} {
		if !strings.Contains(long.stdout, want) {
			t.Errorf("version lacks %q:\n%s", want, long.stdout)
		}
	}
}
