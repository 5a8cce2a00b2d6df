package commands_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/commands"
)

func TestMCPAuthSubcommand(t *testing.T) {
	// Without MCPAuth, /mcp has no subcommand and takes no words.
	r, err := commands.New(commands.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if path, args, _ := r.Parse("/mcp auth github"); !slices.Equal(path, []string{"mcp"}) || args != "auth github" {
		t.Fatalf("without MCPAuth: %v %q", path, args)
	}

	var asked []string
	r, err = commands.New(commands.Config{MCPAuth: func(_ context.Context, server string, out func(string)) error {
		asked = append(asked, server)
		out("open https://as.example/authorize")
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	path, args, ok := r.Parse("/mcp auth github")
	if !ok || !slices.Equal(path, []string{"mcp", "auth"}) || args != "github" {
		t.Fatalf("parse: %v %q %v", path, args, ok)
	}
	var out []string
	if err := r.Run(t.Context(), nil, path, args, func(s string) { out = append(out, s) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []string{"github"}) || len(out) != 1 || !strings.Contains(out[0], "https://as.example/authorize") {
		t.Fatalf("asked %v, out %v", asked, out)
	}
	if err := r.Run(t.Context(), nil, []string{"mcp", "auth"}, "", nil); err == nil || !strings.Contains(err.Error(), "usage: /mcp auth SERVER") {
		t.Fatalf("no server: %v", err)
	}
	// Plain /mcp still lists (it needs a conversation).
	if c, err := r.Lookup([]string{"mcp"}); err != nil || c.Run == nil || !c.NeedsTarget {
		t.Fatalf("/mcp: %+v %v", c, err)
	}
}
