package ide

// Discovery: which IDE companion a session connects to (docs/ide.md,
// "Connecting to an IDE"). The package's documentation is the
// connection's (doc.go).

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentry-dev/agentry/ide/idewire"
)

// Limits of discovery.
const (
	// MaxDiscoveryBytes bounds the read of one discovery file; a larger
	// file is refused. A companion's file is a few hundred bytes.
	MaxDiscoveryBytes = 64 << 10
	// maxWalk bounds the process-tree walk, as gemini-cli's
	// MAX_TRAVERSAL_DEPTH.
	maxWalk = 32
	// MaxDiscoveryFiles bounds the discovery files read, the best ranked
	// first; gemini-cli reads them all. A machine has a few.
	MaxDiscoveryFiles = 64
)

// Errors of Discover. Each comes wrapped in a *DiscoverError whose message
// is gemini-cli's text for the user.
var (
	// ErrNoCompanion: no discovery file and no environment names a
	// companion, or none that agentry may use.
	ErrNoCompanion = errors.New("ide: no IDE companion found")
	// ErrUnsupported: no IDE is detected (no discovery file names one and
	// no environment marker does).
	ErrUnsupported = errors.New("ide: not running in a supported IDE")
	// ErrNoWorkspace: the IDE has no folder open.
	ErrNoWorkspace = errors.New("ide: the IDE has no workspace folder open")
	// ErrWorkspaceMismatch: the working directory is outside every
	// workspace root of the companion.
	ErrWorkspaceMismatch = errors.New("ide: the working directory is outside the IDE's workspace")
)

// DiscoverError is why Discover found no usable companion: Kind is one of
// the Err* sentinels (errors.Is matches it), Text is gemini-cli's message
// for the user.
type DiscoverError struct {
	Kind error
	Text string
}

func (e *DiscoverError) Error() string { return e.Text }
func (e *DiscoverError) Unwrap() error { return e.Kind }

// gemini-cli's texts (core/ide/ide-client.ts, ide-connection-utils.ts),
// with agentry's name for gemini-cli's and without "/ide install", which
// agentry does not have.
const (
	textNotFound    = "Failed to connect to IDE companion extension. Please ensure the extension is running."
	textNoFolder    = "To use this feature, please open a workspace folder in your IDE and try again."
	textMismatch    = "Directory mismatch. agentry is running in a different location than the open workspace in the IDE. Please run agentry from one of the following directories: "
	textUnsupported = "IDE integration is not supported in your current environment. To use this feature, run agentry in one of these supported IDEs: Antigravity, VS Code, or VS Code forks, or in an editor running a companion (agentry ide companion)."
	textNoPortFmt   = "Failed to connect to IDE companion extension in %s. Please ensure the extension is running."
)

// Process is one entry of the process table.
type Process struct {
	PID  int `json:"pid"`
	PPID int `json:"ppid"`
	// Command is the command line, its arguments joined by spaces (ps's
	// command column).
	Command string `json:"command"`
}

// ProcessLookup reads one process of the process table.
type ProcessLookup func(pid int) (Process, error)

// DiscoverOptions tell Discover where to look. The zero value discovers for
// the current process in the real environment.
type DiscoverOptions struct {
	// LookupEnv reads the environment; default os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Processes reads the process table for the walk up from PID; default
	// ProcFS("/proc") on Linux, ps(1) on other Unix systems, none on
	// Windows (the IDE's pid is then unknown unless GEMINI_CLI_IDE_PID
	// names it).
	Processes ProcessLookup
	// PID is the process whose tree is walked; default os.Getpid().
	PID int
	// Dir holds the discovery files; default idewire.Dir().
	Dir string
	// UID returns the user whose files are accepted; default os.Getuid.
	// It returns -1 where files have no owner (Windows): then owner and
	// mode are not checked.
	UID func() int
	// Alive reports whether a process lives, for sorting the files;
	// default kill(pid, 0) succeeding or failing with EPERM (always true on
	// Windows).
	Alive func(pid int) bool
	// Cwd is the directory that must lie inside the IDE's workspace;
	// default os.Getwd().
	Cwd string
}

// Report says what Discover found and why it chose or skipped each
// discovery file, for `agentry ide status` and /ide status.
type Report struct {
	// IDEPID is the IDE's process id; 0 when unknown.
	IDEPID int `json:"idePid"`
	// PIDSource says how it was found: "GEMINI_CLI_IDE_PID", "process
	// tree" or "" (not looked for: no discovery file and no
	// GEMINI_CLI_IDE_SERVER_PORT needed it, or no process table).
	PIDSource string `json:"pidSource,omitempty"`
	// IDECommand is the IDE process's command line, when read.
	IDECommand string `json:"ideCommand,omitempty"`
	// Walk is the process chain walked, agentry's process first.
	Walk []Process `json:"walk,omitempty"`
	// Dir is the discovery directory.
	Dir string `json:"dir"`
	// Files are the discovery files considered, in the order they were
	// ranked.
	Files []FileReport `json:"files"`
	// Unread counts the files ranked below the first MaxDiscoveryFiles,
	// not read.
	Unread int `json:"unread,omitempty"`
	// Chosen is the file chosen; "" when none was (the environment may
	// still name a companion).
	Chosen string `json:"chosen,omitempty"`
	// Env lists the contract's variables that were set (the token's value
	// left out).
	Env map[string]string `json:"env,omitempty"`
	// IDE is the IDE detected, from the discovery file or the environment.
	IDE *idewire.IDEInfo `json:"ide,omitempty"`
	// Source is where the endpoint came from: "file", "environment" or
	// "" (no usable companion).
	Source string `json:"source,omitempty"`
	// Problem is why no companion is usable (gemini-cli's text); "" when
	// one is.
	Problem string `json:"problem,omitempty"`
}

// FileReport is one discovery file's fate.
type FileReport struct {
	Path string `json:"path"`
	// PID is the IDE pid its name holds (0 for no pid).
	PID int `json:"pid"`
	// Alive reports whether that process lives.
	Alive bool `json:"alive"`
	// Port is the port its content names (0 when it names none or was not
	// read).
	Port int `json:"port,omitempty"`
	// Verdict is "chosen", "candidate" (valid but another won), "mismatch"
	// (its workspace does not hold the working directory) or "refused"
	// (not read or not valid).
	Verdict string `json:"verdict"`
	// Reason says why.
	Reason string `json:"reason"`
}

// File verdicts.
const (
	VerdictChosen    = "chosen"
	VerdictCandidate = "candidate"
	VerdictMismatch  = "mismatch"
	VerdictRefused   = "refused"
)

// config is a discovery file's content as gemini-cli reads it: no schema,
// fields absent or present.
type config struct {
	port          int // 0: none usable
	portText      string
	workspacePath *string
	authToken     *string
	ideInfo       *idewire.IDEInfo
}

// Discover finds the IDE companion agentry should connect to, by
// gemini-cli's rules (docs/ide.md, "Connecting to an IDE"): the IDE's pid
// (GEMINI_CLI_IDE_PID, else a walk up the process tree to the shell's
// grandparent), its discovery file (the legacy name, then every
// gemini-ide-server-<pid>-<port>.json ranked IDE pid first, live pids, larger
// pids), the workspace check against the working directory, the tie-break
// by GEMINI_CLI_IDE_SERVER_PORT, and the GEMINI_CLI_IDE_* fallbacks. Unlike
// gemini-cli it refuses files that are symbolic links, not regular, larger
// than MaxDiscoveryBytes, or (besides not owned by the user) writable by
// group or others.
//
// The Report is always filled. The error is a *DiscoverError (errors.Is
// one of ErrNoCompanion, ErrUnsupported, ErrNoWorkspace,
// ErrWorkspaceMismatch) when no companion is usable.
func Discover(opts DiscoverOptions) (Endpoint, *Report, error) {
	d := newDiscovery(opts)
	return d.run()
}

// discovery is one Discover call.
type discovery struct {
	opts   DiscoverOptions
	env    func(string) (string, bool)
	uid    int
	rep    *Report
	pidSet bool
	// dirProblem says why the discovery directory is not trusted.
	dirProblem string
}

func newDiscovery(opts DiscoverOptions) *discovery {
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.Processes == nil {
		opts.Processes = defaultProcesses()
	}
	if opts.PID == 0 {
		opts.PID = os.Getpid()
	}
	if opts.Dir == "" {
		opts.Dir = idewire.Dir()
	}
	if opts.UID == nil {
		opts.UID = os.Getuid
	}
	if opts.Alive == nil {
		opts.Alive = alive
	}
	if opts.Cwd == "" {
		opts.Cwd, _ = os.Getwd()
	}
	return &discovery{opts: opts, env: opts.LookupEnv, uid: opts.UID(), rep: &Report{Dir: opts.Dir, Files: []FileReport{}}}
}

func (d *discovery) getenv(name string) string {
	if v, ok := d.env(name); ok {
		return v
	}
	return ""
}

func (d *discovery) run() (Endpoint, *Report, error) {
	for _, name := range []string{idewire.EnvIDEPID, idewire.EnvServerPort, idewire.EnvWorkspacePath, idewire.EnvAuthToken} {
		if v, ok := d.env(name); ok && v != "" {
			if name == idewire.EnvAuthToken {
				v = "(set)"
			}
			if d.rep.Env == nil {
				d.rep.Env = map[string]string{}
			}
			d.rep.Env[name] = v
		}
	}
	// The walk is needed only to choose among files, or to name the IDE
	// of an endpoint from the environment: with neither, discovery costs
	// one directory read.
	entries, _ := os.ReadDir(d.opts.Dir)
	if len(entries) > 0 {
		d.dirProblem = checkDir(d.opts.Dir, d.uid)
	}
	if slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), "gemini-ide-server-") }) ||
		d.getenv(idewire.EnvServerPort) != "" || d.getenv(idewire.EnvIDEPID) != "" {
		d.findIDE()
	}
	cfg := d.chooseFile(entries)
	// The IDE: the chosen file's ideInfo, else the environment's markers.
	if cfg != nil && cfg.ideInfo != nil && cfg.ideInfo.Name != "" && cfg.ideInfo.DisplayName != "" {
		info := *cfg.ideInfo
		d.rep.IDE = &info
	} else {
		d.rep.IDE = detectIDE(d.getenv, d.rep.IDECommand)
	}
	if d.rep.IDE == nil {
		return d.fail(ErrUnsupported, textUnsupported)
	}
	envToken, hasEnvToken := d.env(idewire.EnvAuthToken)
	envWS, hasEnvWS := d.env(idewire.EnvWorkspacePath)
	var ep Endpoint
	var token, ws *string
	if hasEnvToken {
		token = &envToken
	}
	if hasEnvWS {
		ws = &envWS
	}
	if cfg != nil {
		if cfg.authToken != nil {
			token = cfg.authToken
		}
		if cfg.workspacePath != nil {
			ws = cfg.workspacePath
		}
	}
	roots, kind, text := validateWorkspace(ws, d.opts.Cwd)
	if kind != nil {
		return d.fail(kind, text)
	}
	ep.Workspace, ep.IDE = roots, d.rep.IDE
	if token != nil {
		ep.Token = *token
	}
	// The port: the file's, else GEMINI_CLI_IDE_SERVER_PORT's.
	switch envPort := parsePort(d.getenv(idewire.EnvServerPort)); {
	case cfg != nil && cfg.port != 0:
		ep.Port, ep.File, d.rep.Source = cfg.port, d.rep.Chosen, "file"
	case envPort != 0:
		ep.Port, d.rep.Source = envPort, "environment"
		if cfg != nil {
			ep.File = d.rep.Chosen
		}
	default:
		return d.fail(ErrNoCompanion, fmt.Sprintf(textNoPortFmt, d.rep.IDE.DisplayName))
	}
	return ep, d.rep, nil
}

func (d *discovery) fail(kind error, text string) (Endpoint, *Report, error) {
	d.rep.Problem = text
	d.rep.Source = ""
	return Endpoint{}, d.rep, &DiscoverError{Kind: kind, Text: text}
}

// findIDE finds the IDE's pid: GEMINI_CLI_IDE_PID when it is a positive
// number, else the walk up the process tree.
func (d *discovery) findIDE() {
	if n, err := strconv.Atoi(strings.TrimSpace(d.getenv(idewire.EnvIDEPID))); err == nil && n > 0 {
		d.rep.IDEPID, d.rep.PIDSource = n, idewire.EnvIDEPID
		if d.opts.Processes != nil {
			if p, err := d.opts.Processes(n); err == nil {
				d.rep.IDECommand = p.Command
			}
		}
		return
	}
	if d.opts.Processes == nil {
		return
	}
	pid, walk := walkToIDE(d.opts.Processes, d.opts.PID)
	d.rep.IDEPID, d.rep.PIDSource, d.rep.Walk = pid, "process tree", walk
	if p, err := d.opts.Processes(pid); err == nil {
		d.rep.IDECommand = p.Command
	}
}

// shells are the shells whose grandparent is the IDE (gemini-cli's list).
var shells = []string{"zsh", "bash", "sh", "tcsh", "csh", "ksh", "fish", "dash"}

// isShell reports whether a command line runs a shell: the base name of
// its first word is one of shells. A login shell's leading "-" (-bash) is
// dropped, which gemini-cli does not do.
func isShell(command string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(command), " ")
	name := strings.TrimPrefix(filepath.Base(first), "-")
	return slices.Contains(shells, name)
}

// walkToIDE is gemini-cli's getIdeProcessInfoForUnix: up from pid, at most
// maxWalk steps; at the first shell the IDE is the shell's grandparent when
// that is above 1 (skipping the terminal's pty host), else its parent; with
// no shell, the last process reached. It returns the chain walked.
func walkToIDE(lookup ProcessLookup, pid int) (int, []Process) {
	var walk []Process
	cur := pid
	for range maxWalk {
		p, err := lookup(cur)
		if err != nil {
			break
		}
		walk = append(walk, p)
		if isShell(p.Command) {
			ide := p.PPID
			if gp, err := lookup(p.PPID); err == nil {
				walk = append(walk, gp)
				if gp.PPID > 1 {
					ide = gp.PPID
				}
			}
			return ide, walk
		}
		if p.PPID <= 1 {
			break
		}
		cur = p.PPID
	}
	return cur, walk
}

// chooseFile picks the discovery file as gemini-cli's
// getConnectionConfigFromFile does, filling the report; nil when none is
// usable. Among one pid's files the newest ranks first, where gemini-cli
// takes directory order: a killed companion's file must not win over its
// restarted successor's.
func (d *discovery) chooseFile(entries []os.DirEntry) *config {
	dir := d.opts.Dir
	if d.rep.IDEPID > 0 {
		legacy := filepath.Join(dir, fmt.Sprintf("gemini-ide-server-%d.json", d.rep.IDEPID))
		if _, err := os.Lstat(legacy); err == nil {
			fr := FileReport{Path: legacy, PID: d.rep.IDEPID, Alive: d.opts.Alive(d.rep.IDEPID)}
			cfg, why := d.load(legacy)
			if cfg != nil {
				fr.Port, fr.Verdict, fr.Reason = cfg.port, VerdictChosen, "the legacy file of the IDE's pid, tried first"
				d.rep.Files = append(d.rep.Files, fr)
				d.rep.Chosen = legacy
				return cfg
			}
			fr.Verdict, fr.Reason = VerdictRefused, why
			d.rep.Files = append(d.rep.Files, fr)
		}
	}
	type cand struct {
		fr    FileReport
		cfg   *config
		mtime time.Time
	}
	var cands []cand
	for _, e := range entries {
		pid, _, ok := idewire.ParseFileName(e.Name())
		if !ok {
			continue
		}
		c := cand{fr: FileReport{Path: filepath.Join(dir, e.Name()), PID: pid, Alive: d.opts.Alive(pid)}}
		if fi, err := e.Info(); err == nil {
			c.mtime = fi.ModTime()
		}
		cands = append(cands, c)
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		known := d.rep.IDEPID > 0
		ai, bi := known && a.fr.PID == d.rep.IDEPID, known && b.fr.PID == d.rep.IDEPID
		switch {
		case ai && !bi:
			return -1
		case bi && !ai:
			return 1
		case a.fr.Alive && !b.fr.Alive:
			return -1
		case b.fr.Alive && !a.fr.Alive:
			return 1
		}
		if a.fr.PID != b.fr.PID {
			return b.fr.PID - a.fr.PID
		}
		// The same IDE's files: the newest first. A companion that
		// was killed leaves its file behind, and the one restarted in
		// its place writes a newer one.
		return b.mtime.Compare(a.mtime)
	})
	if len(cands) > MaxDiscoveryFiles {
		d.rep.Unread = len(cands) - MaxDiscoveryFiles
		cands = cands[:MaxDiscoveryFiles]
	}
	var valid []int
	for i := range cands {
		c := &cands[i]
		cfg, why := d.load(c.fr.Path)
		if cfg == nil {
			c.fr.Verdict, c.fr.Reason = VerdictRefused, why
			continue
		}
		c.cfg, c.fr.Port = cfg, cfg.port
		if _, kind, text := validateWorkspace(cfg.workspacePath, d.opts.Cwd); kind != nil {
			c.fr.Verdict, c.fr.Reason = VerdictMismatch, text
			continue
		}
		c.fr.Verdict, c.fr.Reason = VerdictCandidate, "its workspace holds the working directory"
		valid = append(valid, i)
	}
	defer func() {
		for _, c := range cands {
			d.rep.Files = append(d.rep.Files, c.fr)
		}
	}()
	envPort := strings.TrimSpace(d.getenv(idewire.EnvServerPort))
	portMatch := func(i int) bool { return envPort != "" && cands[i].cfg != nil && cands[i].cfg.portText == envPort }
	pick := func(i int, why string) *config {
		cands[i].fr.Verdict, cands[i].fr.Reason = VerdictChosen, why
		d.rep.Chosen = cands[i].fr.Path
		return cands[i].cfg
	}
	switch {
	case len(valid) == 1:
		return pick(valid[0], "the only file whose workspace holds the working directory")
	case len(valid) > 1:
		for _, i := range valid {
			if portMatch(i) {
				return pick(i, "its port is "+idewire.EnvServerPort+"'s, among several whose workspace holds the working directory")
			}
		}
		return pick(valid[0], "ranked first among several whose workspace holds the working directory")
	}
	// None valid: gemini-cli still returns the best mismatched file (the
	// env port's, else the first read), so that connecting reports the
	// mismatch.
	for i := range cands {
		if portMatch(i) {
			return pick(i, "no file's workspace holds the working directory; its port is "+idewire.EnvServerPort+"'s")
		}
	}
	for i := range cands {
		if cands[i].cfg != nil {
			return pick(i, "no file's workspace holds the working directory; ranked first")
		}
	}
	return nil
}

// load reads and parses one discovery file; nil and the reason when it is
// refused.
func (d *discovery) load(path string) (*config, string) {
	if d.dirProblem != "" {
		return nil, "its directory " + d.dirProblem
	}
	data, why := readDiscoveryFile(path, d.uid, MaxDiscoveryBytes)
	if why != "" {
		return nil, why
	}
	cfg, err := parseConfig(data)
	if err != nil {
		return nil, err.Error()
	}
	return cfg, ""
}

// parseConfig decodes a discovery file as gemini-cli does: any JSON object,
// its fields taken when they have the expected type.
func parseConfig(data []byte) (*config, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return nil, errors.New("not a JSON object")
	}
	cfg := &config{}
	if p, ok := raw["port"]; ok {
		var n json.Number
		var s string
		switch {
		case json.Unmarshal(p, &n) == nil:
			cfg.portText = n.String()
		case json.Unmarshal(p, &s) == nil:
			cfg.portText = s
		}
		cfg.port = parsePort(cfg.portText)
	}
	str := func(name string) *string {
		var s string
		if m, ok := raw[name]; ok && json.Unmarshal(m, &s) == nil {
			return &s
		}
		return nil
	}
	cfg.workspacePath, cfg.authToken = str("workspacePath"), str("authToken")
	if m, ok := raw["ideInfo"]; ok {
		var info idewire.IDEInfo
		if json.Unmarshal(m, &info) == nil {
			cfg.ideInfo = &info
		}
	}
	return cfg, nil
}

// parsePort returns a port 1..65535 written in decimal, else 0.
func parsePort(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > 65535 {
		return 0
	}
	return n
}

// validateWorkspace is gemini-cli's validateWorkspacePath: ws nil (no
// workspace named anywhere), "" (no folder open), or a list of roots joined
// with the OS's list separator of which one, resolved, must hold cwd,
// resolved. It returns the resolved roots, or the error kind and text.
// Empty entries are dropped; gemini-cli resolves them to the working
// directory, so that "/a:" would hold every directory.
func validateWorkspace(ws *string, cwd string) ([]string, error, string) {
	if ws == nil {
		return nil, ErrNoCompanion, textNotFound
	}
	if *ws == "" {
		return nil, ErrNoWorkspace, textNoFolder
	}
	var roots []string
	for _, p := range filepath.SplitList(*ws) {
		if p == "" {
			continue
		}
		roots = append(roots, realPath(p))
	}
	real := realPath(cwd)
	for _, r := range roots {
		if within(real, r) {
			return roots, nil, ""
		}
	}
	return nil, ErrWorkspaceMismatch, textMismatch + strings.Join(roots, ", ")
}

// realPath is gemini-cli's resolveToRealPath: a file:// URL becomes its
// path, percent-escapes are decoded, the path is made absolute and its
// symbolic links resolved (as far as it exists).
func realPath(p string) string {
	if strings.HasPrefix(p, "file://") {
		if u, err := url.Parse(p); err == nil {
			p = u.Path
			if runtime.GOOS == "windows" {
				p = strings.TrimPrefix(p, "/")
			}
		}
	}
	if s, err := url.PathUnescape(p); err == nil {
		p = s
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	// Resolve the longest existing prefix, then put the rest back.
	rest := ""
	for cur := abs; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether child is dir or below it; case-insensitively on
// macOS and Windows, as gemini-cli's isSubpath.
func within(child, dir string) bool {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		child, dir = strings.ToLower(child), strings.ToLower(dir)
	}
	rel, err := filepath.Rel(dir, child)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// ideDefs are gemini-cli's IDE definitions (core/ide/detect-ide.ts).
var ideDefs = map[string]string{
	"devin": "Devin", "replit": "Replit", "cursor": "Cursor", "cloudshell": "Cloud Shell",
	"codespaces": "GitHub Codespaces", "firebasestudio": "Firebase Studio", "trae": "Trae",
	"vscode": "VS Code", "vscodefork": "IDE", "positron": "Positron", "antigravity": "Antigravity",
	"sublimetext": "Sublime Text", "jetbrains": "JetBrains IDE", "intellijidea": "IntelliJ IDEA",
	"webstorm": "WebStorm", "pycharm": "PyCharm", "goland": "GoLand", "androidstudio": "Android Studio",
	"clion": "CLion", "rustrover": "RustRover", "datagrip": "DataGrip", "phpstorm": "PhpStorm",
	"zed": "Zed", "xcode": "XCode",
}

func ideInfo(name string) *idewire.IDEInfo {
	return &idewire.IDEInfo{Name: name, DisplayName: ideDefs[name]}
}

// detectIDE is gemini-cli's detectIde without a file's ideInfo: an IDE
// exists only when TERM_PROGRAM is vscode, sublime or Zed, ZED_SESSION_ID
// or XCODE_VERSION_ACTUAL is set, or TERMINAL_EMULATOR mentions JetBrains;
// the other markers then name it, and the IDE's command refines VS Code
// and JetBrains. nil when none.
func detectIDE(getenv func(string) string, command string) *idewire.IDEInfo {
	tp := getenv("TERM_PROGRAM")
	jetbrains := strings.Contains(strings.ToLower(getenv("TERMINAL_EMULATOR")), "jetbrains")
	if tp != "vscode" && tp != "sublime" && tp != "Zed" && getenv("ZED_SESSION_ID") == "" && getenv("XCODE_VERSION_ACTUAL") == "" && !jetbrains {
		return nil
	}
	name := "vscode"
	switch {
	case getenv("ANTIGRAVITY_CLI_ALIAS") != "":
		name = "antigravity"
	case getenv("__COG_BASHRC_SOURCED") != "":
		name = "devin"
	case getenv("REPLIT_USER") != "":
		name = "replit"
	case getenv("CURSOR_TRACE_ID") != "":
		name = "cursor"
	case getenv("CODESPACES") != "":
		name = "codespaces"
	case getenv("EDITOR_IN_CLOUD_SHELL") != "" || getenv("CLOUD_SHELL") != "":
		name = "cloudshell"
	case getenv("TERM_PRODUCT") == "Trae":
		name = "trae"
	case getenv("MONOSPACE_ENV") != "":
		name = "firebasestudio"
	case getenv("POSITRON") == "1":
		name = "positron"
	case tp == "sublime":
		name = "sublimetext"
	case getenv("ZED_SESSION_ID") != "" || tp == "Zed":
		name = "zed"
	case getenv("XCODE_VERSION_ACTUAL") != "":
		name = "xcode"
	case jetbrains:
		name = "jetbrains"
	}
	lower := strings.ToLower(command)
	if jetbrains {
		if name == "jetbrains" && command != "" {
			for _, pr := range [][2]string{{"idea", "intellijidea"}, {"webstorm", "webstorm"}, {"pycharm", "pycharm"}, {"goland", "goland"},
				{"studio", "androidstudio"}, {"clion", "clion"}, {"rustrover", "rustrover"}, {"datagrip", "datagrip"}, {"phpstorm", "phpstorm"}} {
				if strings.Contains(lower, pr[0]) {
					return ideInfo(pr[1])
				}
			}
		}
		return ideInfo(name)
	}
	if name == "vscode" && command != "" && !strings.Contains(lower, "code") {
		return ideInfo("vscodefork")
	}
	return ideInfo(name)
}

// ProcFS reads processes from a proc file system mounted at root
// (/proc on Linux): the parent from <pid>/stat, the command line from
// <pid>/cmdline (the name in stat for a process without one, as ps shows
// kernel threads).
func ProcFS(root string) ProcessLookup {
	return func(pid int) (Process, error) {
		base := filepath.Join(root, strconv.Itoa(pid))
		stat, err := os.ReadFile(filepath.Join(base, "stat"))
		if err != nil {
			return Process{}, fmt.Errorf("ide: reading process %d: %w", pid, err)
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			return Process{}, fmt.Errorf("ide: process %d: malformed stat", pid)
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 {
			return Process{}, fmt.Errorf("ide: process %d: malformed stat", pid)
		}
		ppid, err := strconv.Atoi(fields[1])
		if err != nil {
			return Process{}, fmt.Errorf("ide: process %d: malformed stat: %w", pid, err)
		}
		p := Process{PID: pid, PPID: ppid}
		cmdline, _ := os.ReadFile(filepath.Join(base, "cmdline"))
		p.Command = strings.TrimSpace(strings.Join(strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"), " "))
		if p.Command == "" {
			p.Command = "[" + s[open+1:end] + "]"
		}
		return p, nil
	}
}
