package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentry-dev/agentry/commands"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/ide"
	"github.com/agentry-dev/agentry/ide/idewire"
)

// newIDECmd is `agentry ide`, the IDE companion's commands: `status` here,
// `companion` in ide_companion.go.
func newIDECmd(io stdio, exit *int) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ide",
		Short: "The IDE companion: what agentry finds of the editor it runs in",
	}
	cmd.AddCommand(newIDEStatusCmd(io, exit))
	return cmd
}

// newIDEStatusCmd is `agentry ide status`.
func newIDEStatusCmd(io stdio, exit *int) *cobra.Command {
	var workspace string
	var trust, asJSON, connect bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Say which IDE companion agentry would connect to, and why",
		Long: `Say which IDE companion a session started here would connect to, and why:
the IDE's process (GEMINI_CLI_IDE_PID, or the walk up the process tree), each
discovery file in the temporary directory's gemini/ide with why it was chosen
or skipped, the GEMINI_CLI_IDE_* variables, and the workspace check. It runs
headless; with --connect it also connects to the companion it found, as a
session would (the token, the MCP handshake, the diff tools offered), says
how that went and how long it took, and disconnects.

Exit code 0 when a companion is usable (and, with --connect, connected), 1
when none is.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			st := ideStatusInput{opts: ide.DiscoverOptions{Cwd: workspace}}
			s, err := config.Load(config.LoadOptions{Workspace: workspace, TrustWorkspace: trust})
			if err != nil {
				st.settingsErr = err
			} else {
				st.enabled, st.userSettings = s.IDE.Enabled, s.UserSettingsPath()
				st.opts.Cwd = s.Workspace
			}
			if connect {
				st.connect = func(ep ide.Endpoint) ideConnResult { return connectOnce(c.Context(), ep) }
			}
			*exit = ideStatus(io.out, st, asJSON)
			return nil
		},
	}
	cmd.Flags().StringVarP(&workspace, "workspace", "w", "", "the workspace directory, which must lie in the IDE's workspace (default the current directory)")
	cmd.Flags().BoolVar(&trust, "trust-workspace", false, "trust the workspace: read its settings (for ide.enabled)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the findings as one JSON object")
	cmd.Flags().BoolVar(&connect, "connect", false, "also connect to the companion found, as a session would, and say how it went")
	return cmd
}

// ideConnectTimeout bounds `agentry ide status --connect`'s connection.
const ideConnectTimeout = 10 * time.Second

// ideConnResult is how a connection to a companion went.
type ideConnResult struct {
	// Connected: the MCP handshake and tools/list succeeded.
	Connected bool `json:"connected"`
	// IDE is the companion's display name; CanDiff, whether it offers
	// openDiff and closeDiff.
	IDE     string `json:"ide,omitempty"`
	CanDiff bool   `json:"canDiff"`
	// Millis is how long the connection took.
	Millis float64 `json:"millis"`
	Error  string  `json:"error,omitempty"`
}

// connectOnce connects to ep as a session would, then disconnects.
func connectOnce(ctx context.Context, ep ide.Endpoint) ideConnResult {
	ctx, cancel := context.WithTimeout(ctx, ideConnectTimeout)
	defer cancel()
	start := time.Now()
	c, err := ide.Connect(ctx, ep)
	r := ideConnResult{Millis: float64(time.Since(start).Microseconds()) / 1000}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer c.Close()
	r.Connected, r.IDE, r.CanDiff = true, c.Status().IDE, c.CanDiff()
	return r
}

// ideStatusInput is what `agentry ide status` reports on.
type ideStatusInput struct {
	opts         ide.DiscoverOptions
	enabled      bool
	userSettings string
	settingsErr  error
	// connect, when set, connects to the endpoint found (--connect).
	connect func(ide.Endpoint) ideConnResult
}

// ideStatusJSON is `agentry ide status --json`.
type ideStatusJSON struct {
	Usable     bool        `json:"usable"`
	Problem    string      `json:"problem,omitempty"`
	Endpoint   *ideEPJSON  `json:"endpoint,omitempty"`
	IDEEnabled bool        `json:"ideEnabled"`
	Settings   string      `json:"settingsError,omitempty"`
	Report     *ide.Report `json:"report"`
	// Connection is how --connect's connection went, DiscoveryMillis
	// how long discovery took (with --connect only, as the rest of the
	// output does not vary from run to run).
	Connection      *ideConnResult `json:"connection,omitempty"`
	DiscoveryMillis float64        `json:"discoveryMillis,omitempty"`
}

// ideEPJSON is an endpoint without its token.
type ideEPJSON struct {
	Port      int              `json:"port"`
	TokenSet  bool             `json:"tokenSet"`
	Workspace []string         `json:"workspace"`
	IDE       *idewire.IDEInfo `json:"ide,omitempty"`
	File      string           `json:"file,omitempty"`
}

// ideStatus runs discovery and prints its findings; it returns the exit
// code: 0 when a companion is usable, 1 otherwise.
func ideStatus(w io.Writer, in ideStatusInput, asJSON bool) int {
	start := time.Now()
	ep, rep, err := ide.Discover(in.opts)
	took := float64(time.Since(start).Microseconds()) / 1000
	code := 0
	if err != nil {
		code = 1
	}
	var conn *ideConnResult
	if err == nil && in.connect != nil {
		r := in.connect(ep)
		conn = &r
		if !r.Connected {
			code = 1
		}
	}
	if asJSON {
		out := ideStatusJSON{Usable: err == nil, Report: rep, IDEEnabled: in.enabled, Connection: conn}
		if in.connect != nil {
			out.DiscoveryMillis = took
		}
		if err != nil {
			out.Problem = err.Error()
		} else {
			out.Endpoint = &ideEPJSON{Port: ep.Port, TokenSet: ep.Token != "", Workspace: ep.Workspace, IDE: ep.IDE, File: ep.File}
		}
		if in.settingsErr != nil {
			out.Settings = in.settingsErr.Error()
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		_ = enc.Encode(out)
		return code
	}
	var b strings.Builder
	writeDiscovery(&b, ep, rep, err)
	switch {
	case conn == nil:
	case conn.Connected:
		diffs := "offers openDiff and closeDiff: edits are shown as diffs"
		if !conn.CanDiff {
			diffs = "offers no diff tools: edits are confirmed in the terminal"
		}
		fmt.Fprintf(&b, "Connection: connected to %s in %.1f ms; it %s\n", conn.IDE, conn.Millis, diffs)
	default:
		fmt.Fprintf(&b, "Connection: failed after %.1f ms: %s\n", conn.Millis, conn.Error)
	}
	switch {
	case in.settingsErr != nil:
		fmt.Fprintf(&b, "ide.enabled: unknown, the settings do not load: %v\n", in.settingsErr)
	case in.enabled:
		b.WriteString("ide.enabled: true (sessions connect to the companion)\n")
	default:
		fmt.Fprintf(&b, "ide.enabled: false (turn it on with --ide, /ide enable, or \"ide\": {\"enabled\": true} in %s)\n", in.userSettings)
	}
	_, _ = io.WriteString(w, b.String())
	return code
}

// writeDiscovery writes what discovery found: the verdict, then how.
func writeDiscovery(b *strings.Builder, ep ide.Endpoint, rep *ide.Report, err error) {
	if err != nil {
		fmt.Fprintf(b, "No usable IDE companion: %v\n", err)
	} else {
		from := "from the environment"
		if ep.File != "" {
			from = "from " + ep.File
		}
		fmt.Fprintf(b, "IDE companion: %s on 127.0.0.1:%d (%s)\n", ep.IDE.DisplayName, ep.Port, from)
		fmt.Fprintf(b, "  workspace: %s\n", strings.Join(ep.Workspace, ", "))
		fmt.Fprintf(b, "  token: %s\n", map[bool]string{true: "set", false: "none"}[ep.Token != ""])
	}
	switch rep.PIDSource {
	case "":
		b.WriteString("IDE process: not looked for (no discovery file or GEMINI_CLI_IDE_SERVER_PORT to choose by)\n")
	case idewire.EnvIDEPID:
		fmt.Fprintf(b, "IDE process: %d (from %s)\n", rep.IDEPID, idewire.EnvIDEPID)
	default:
		var steps []string
		for _, p := range rep.Walk {
			steps = append(steps, fmt.Sprintf("%d %s", p.PID, commandName(p.Command)))
		}
		fmt.Fprintf(b, "IDE process: %d (process tree: %s)\n", rep.IDEPID, strings.Join(steps, " < "))
	}
	if rep.IDE != nil {
		fmt.Fprintf(b, "IDE: %s (%s)\n", rep.IDE.DisplayName, rep.IDE.Name)
	}
	fmt.Fprintf(b, "Discovery files in %s:", rep.Dir)
	if len(rep.Files) == 0 {
		b.WriteString(" none\n")
	} else {
		b.WriteString("\n")
	}
	for _, f := range rep.Files {
		state := "dead"
		if f.Alive {
			state = "alive"
		}
		port := ""
		if f.Port != 0 {
			port = ", port " + strconv.Itoa(f.Port)
		}
		fmt.Fprintf(b, "  %-9s %s (pid %d %s%s): %s\n", f.Verdict, filepath.Base(f.Path), f.PID, state, port, f.Reason)
	}
	if rep.Unread > 0 {
		fmt.Fprintf(b, "  (%d more, ranked lower, not read)\n", rep.Unread)
	}
	if len(rep.Env) > 0 {
		b.WriteString("Environment:\n")
		for _, k := range []string{idewire.EnvIDEPID, idewire.EnvServerPort, idewire.EnvWorkspacePath, idewire.EnvAuthToken} {
			if v, ok := rep.Env[k]; ok {
				fmt.Fprintf(b, "  %s=%s\n", k, v)
			}
		}
	}
}

// commandName is a command line's program name.
func commandName(command string) string {
	first, _, _ := strings.Cut(command, " ")
	return filepath.Base(first)
}

// ideLink is a session's connection to its IDE companion as /ide drives
// it. The session wiring implements it over the connection (package ide's
// client); /ide status, enable and disable work without one, on the
// setting and discovery alone.
type ideLink interface {
	// Enable discovers the companion and connects to it.
	Enable(ctx context.Context) error
	// Disable disconnects, closing the diffs open in the IDE.
	Disable(ctx context.Context) error
	// State is the connection's state.
	State() ideLinkState
}

// Connection states of an ideLink, gemini-cli's IDEConnectionStatus.
const (
	ideConnected    = "connected"
	ideConnecting   = "connecting"
	ideDisconnected = "disconnected"
)

// ideLinkState is the connection as /ide status shows it.
type ideLinkState struct {
	// Status is ideConnected, ideConnecting or ideDisconnected.
	Status string
	// Detail says why it is disconnected (gemini-cli's texts).
	Detail string
	// IDE is the IDE's display name.
	IDE string
	// OpenFiles are the files open in the IDE, most recent first.
	OpenFiles []idewire.File
}

// gemini-cli's status details (core/ide/ide-client.ts).
const (
	ideTextInitial  = "IDE integration is currently disabled. To enable it, run /ide enable."
	ideTextDisabled = "IDE integration disabled. To enable it again, run /ide enable."
)

// ideSlash is the terminal's /ide command.
type ideSlash struct {
	// settings are the session's; SetUserSetting persists enable and
	// disable.
	settings *config.Settings
	// link is the session's connection; nil until the session wiring
	// provides one.
	link ideLink
	// discover runs discovery (ide.Discover in the terminal).
	discover func() (ide.Endpoint, *ide.Report, error)
	// enabled is ide.enabled as this session has it.
	enabled bool
}

// command returns /ide status|enable|disable.
func (s *ideSlash) command() commands.Command {
	return commands.Command{
		Name:        "ide",
		Description: "Manage IDE integration",
		SubCommands: []commands.Command{
			{Name: "status", Description: "Check status of IDE integration", Run: s.status},
			{Name: "enable", Description: "Enable IDE integration", Run: s.enable},
			{Name: "disable", Description: "Disable IDE integration", Run: s.disable},
		},
	}
}

// statusLine is gemini-cli's getIdeStatusMessage(WithFiles).
func statusLine(st ideLinkState, withFiles bool) string {
	switch st.Status {
	case ideConnected:
		line := "🟢 Connected to " + st.IDE
		if withFiles && len(st.OpenFiles) > 0 {
			line += formatOpenFiles(st.OpenFiles)
		}
		return line
	case ideConnecting:
		return "🟡 Connecting..."
	}
	line := "🔴 Disconnected"
	if st.Detail != "" {
		line += ": " + st.Detail
	}
	return line
}

// formatOpenFiles is gemini-cli's formatFileList.
func formatOpenFiles(files []idewire.File) string {
	counts := map[string]int{}
	for _, f := range files {
		counts[filepath.Base(f.Path)]++
	}
	var lines []string
	for _, f := range files {
		name := filepath.Base(f.Path)
		if counts[name] > 1 {
			name += " (/" + filepath.Base(filepath.Dir(f.Path)) + ")"
		}
		if f.IsActive {
			name += " (active)"
		}
		lines = append(lines, "  - "+name)
	}
	return "\n\nOpen files:\n" + strings.Join(lines, "\n") +
		"\n\n(Note: The file list is limited to a number of recently accessed files within your workspace and only includes local files on disk)"
}

// state is the link's state, or, without a link, what the setting and
// discovery say.
func (s *ideSlash) state() ideLinkState {
	if s.link != nil {
		return s.link.State()
	}
	if !s.enabled {
		return ideLinkState{Status: ideDisconnected, Detail: ideTextInitial}
	}
	return ideLinkState{Status: ideDisconnected, Detail: "this session does not connect to IDE companions yet; agentry ide status says what it would find."}
}

func (s *ideSlash) status(_ context.Context, _ commands.Target, _ string, out func(string)) error {
	st := s.state()
	text := statusLine(st, true)
	if st.Status != ideConnected {
		ep, rep, err := s.discover()
		var b strings.Builder
		writeDiscovery(&b, ep, rep, err)
		text += "\n\n" + strings.TrimRight(b.String(), "\n")
	}
	out(text)
	return nil
}

func (s *ideSlash) enable(ctx context.Context, _ commands.Target, _ string, out func(string)) error {
	return s.set(ctx, true, out)
}

func (s *ideSlash) disable(ctx context.Context, _ commands.Target, _ string, out func(string)) error {
	return s.set(ctx, false, out)
}

// set writes ide.enabled to the user settings, as gemini-cli's /ide
// enable and disable do, then connects or disconnects.
func (s *ideSlash) set(ctx context.Context, on bool, out func(string)) error {
	if err := s.settings.SetUserSetting("ide.enabled", on); err != nil {
		return fmt.Errorf("/ide: %w", err)
	}
	s.enabled = on
	var linkErr error
	if s.link != nil {
		if on {
			linkErr = s.link.Enable(ctx)
		} else {
			linkErr = s.link.Disable(ctx)
		}
	}
	st := s.state()
	if s.link == nil && !on {
		st.Detail = ideTextDisabled
	}
	out(statusLine(st, false))
	if linkErr != nil && !errors.Is(linkErr, context.Canceled) {
		return fmt.Errorf("/ide: %w", linkErr)
	}
	return nil
}
