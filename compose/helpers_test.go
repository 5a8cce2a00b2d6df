package compose

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/modeltest"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/internal/sessiontest"
	"google.golang.org/genai"
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
)

// TestAbortRealShellCommand aborts a real shell command whose child keeps
// running: the whole process group is gone afterwards, the call is answered,
// and the next Send on the same session succeeds.
// runningPID waits for a shell command to write its background process's
// pid to file, and checks that the process runs.
func runningPID(t *testing.T, file string) int {
	t.Helper()
	var pid int
	proctest.Eventually(t, "the command to start", func() bool {
		data, err := os.ReadFile(file)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && pid > 0
	})
	if !proctest.Running(pid) {
		t.Fatalf("sleep %d is not running", pid)
	}
	return pid
}

// summarize names each content by its first part: its text, fc:<tool> or
// fr:<tool>.
func summarize(contents []*genai.Content) []string {
	var out []string
	for _, c := range contents {
		p := c.Parts[0]
		switch {
		case p.FunctionCall != nil:
			out = append(out, "fc:"+p.FunctionCall.Name)
		case p.FunctionResponse != nil:
			out = append(out, "fr:"+p.FunctionResponse.Name)
		default:
			out = append(out, p.Text)
		}
	}
	return out
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
