package archtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/agentry-dev/agentry"

// rule is one line of the doc's import rules: pkg (relative to the module
// root) must not import any of banned; a banned path ending in "/..."
// covers that path and everything below it.
type rule struct {
	pkg    string
	banned []string
}

var ruleLine = regexp.MustCompile("^- `([^`]+)`: (.+)$")

// readRules parses the "Import rules" section of the architecture doc.
func readRules(doc []byte) ([]rule, error) {
	var rules []rule
	in := false
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = strings.TrimSpace(strings.TrimPrefix(line, "## ")) == "Import rules"
			continue
		}
		if !in {
			continue
		}
		m := ruleLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		r := rule{pkg: m[1]}
		for _, f := range strings.Split(m[2], ",") {
			f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "."))
			if !strings.HasPrefix(f, "`") || !strings.HasSuffix(f, "`") {
				return nil, fmt.Errorf("rule for %s: %q is not a `quoted` import path", r.pkg, f)
			}
			r.banned = append(r.banned, strings.Trim(f, "`"))
		}
		rules = append(rules, r)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("no rules found under \"## Import rules\"")
	}
	return rules, nil
}

// breaches returns the imports of imports that r bans.
func (r rule) breaches(imports []string) []string {
	var out []string
	for _, imp := range imports {
		for _, b := range r.banned {
			if imp == b || (strings.HasSuffix(b, "/...") && (imp == strings.TrimSuffix(b, "/...") || strings.HasPrefix(imp, strings.TrimSuffix(b, "...")))) {
				out = append(out, imp)
				break
			}
		}
	}
	return out
}

// TestRuleMatching: the matcher catches exact paths and subtrees, and
// nothing else, so the rules test can fail.
func TestRuleMatching(t *testing.T) {
	r := rule{pkg: "runtime", banned: []string{"net/http", "github.com/a2aproject/a2a-go/..."}}
	got := r.breaches([]string{"net/http", "net/http/httptest", "github.com/a2aproject/a2a-go", "github.com/a2aproject/a2a-go/v2/a2a", "github.com/a2aproject/a2a-goose", "context"})
	want := []string{"net/http", "github.com/a2aproject/a2a-go", "github.com/a2aproject/a2a-go/v2/a2a"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("breaches = %q, want %q", got, want)
	}
	rules, err := readRules([]byte("# x\n## Import rules\n\n- `runtime`: `net/http`, `google.golang.org/grpc/...`.\n## Other\n- `masking`: `x`\n"))
	if err != nil || len(rules) != 1 || rules[0].pkg != "runtime" || len(rules[0].banned) != 2 || rules[0].banned[1] != "google.golang.org/grpc/..." {
		t.Errorf("readRules = %+v, %v", rules, err)
	}
}

// TestImportRules checks every rule of docs/architecture.md against the
// packages' non-test imports, as go list reports them.
func TestImportRules(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := readRules(doc)
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for _, r := range rules {
		pkgs = append(pkgs, "./"+r.pkg)
	}
	cmd := exec.CommandContext(t.Context(), "go", append([]string{"list", "-json=ImportPath,Imports"}, pkgs...)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	imports := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		imports[p.ImportPath] = p.Imports
	}
	for _, r := range rules {
		path := module + "/" + r.pkg
		imps, ok := imports[path]
		if !ok {
			t.Errorf("rule for %s: no such package", r.pkg)
			continue
		}
		if b := r.breaches(imps); len(b) > 0 {
			t.Errorf("%s imports %s, which docs/architecture.md's import rules forbid", r.pkg, strings.Join(b, ", "))
		}
	}
}
