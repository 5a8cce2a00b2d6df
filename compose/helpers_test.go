package compose

import (
	"path/filepath"
	"testing"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/modeltest"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/internal/sessiontest"
)

// The scripted model, tool and session helpers of package sessiontest,
// under the short names this package's tests use.
type (
	turn          = modeltest.Turn
	fixedResolver = modeltest.FixedResolver
	timers        = modeltest.Timers
	fixedHistory  = modeltest.FixedHistory
	instant       = modeltest.Instant
	signalling    = modeltest.Signalling
)

var (
	newScript     = modeltest.NewScript
	textTurn      = modeltest.TextTurn
	callTurn      = modeltest.CallTurn
	fc            = modeltest.FC
	collectStream = sessiontest.CollectStream
	types         = sessiontest.Types
	last          = sessiontest.Last
	find          = sessiontest.Find
	run           = sessiontest.Run
	history       = modeltest.History
	newWordStream = modeltest.NewWordStream
	summarize     = modeltest.Summarize
)

// runningPID waits for a shell command to write its background process's
// pid to file, and checks that the process runs.
func runningPID(t *testing.T, file string) int {
	t.Helper()
	pid := proctest.WaitPID(t, file)
	if !proctest.Running(pid) {
		t.Fatalf("sleep %d is not running", pid)
	}
	return pid
}

// settingsWith returns the default settings with model name and mutations.
func settingsWith(name string, mutate func(*config.Settings)) config.Settings {
	s := config.Defaults()
	s.Model.Name = name
	if mutate != nil {
		mutate(&s)
	}
	return s
}

// silentChain is a user chain pro → flash whose fallbacks never ask.
func silentChain(s *config.Settings) {
	silent := map[string]string{"terminal": "silent", "transient": "silent", "not_found": "silent", "unknown": "silent"}
	s.Model.FallbackChains = [][]config.ModelPolicySettings{{
		{Model: "gemini-2.5-pro", Actions: silent},
		{Model: "gemini-2.5-flash", Actions: silent, LastResort: true},
	}}
}

// childTestSettings is s with a fresh workspace and home and the
// in-memory store, for sessions built from settings.
func childTestSettings(t *testing.T, s config.Settings) config.Settings {
	s.Workspace = t.TempDir()
	s.Home = filepath.Join(t.TempDir(), ".agentry")
	s.Session.Store = config.SessionStoreMemory
	return s
}

func readerDef(maxTurns int) agents.Definition {
	return agents.Definition{Name: "reader", Kind: agents.KindLocal, Description: "Reads files.",
		SystemPrompt: "You read files.", Tools: []string{"read"}, MaxTurns: maxTurns}
}
