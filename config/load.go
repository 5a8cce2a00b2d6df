package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// LoadOptions tell Load where to look. The zero value loads the settings of
// the current directory for the current user from the real environment.
type LoadOptions struct {
	// Workspace is the workspace directory; default the current directory.
	Workspace string
	// UserHome is the user's home directory; default os.UserHomeDir(). The
	// agentry home is <UserHome>/.agentry; gemini-cli's is <UserHome>/.gemini.
	UserHome string
	// LookupEnv reads the environment; default os.LookupEnv. Tests inject a
	// map so that they do not depend on, or change, the process environment.
	LookupEnv func(string) (string, bool)
	// Environ lists the environment as KEY=VALUE, to find misspelt AGENTRY_*
	// variables; default os.Environ when LookupEnv is nil too (with an
	// injected LookupEnv and no Environ, nothing is checked).
	Environ func() []string
	// Flags are the parsed command-line flags; may be nil.
	Flags *pflag.FlagSet
	// FlagKeys maps flag names to settings keys, e.g. "model" ->
	// "model.name". Only flags set on the command line override. A flag
	// for context.includeDirectories adds to the merged list instead of
	// replacing it; one for tools.allowed replaces it and sets
	// Settings.AllowedToolsFlag; one for mcp.allowed replaces it and
	// clears mcp.excluded, as gemini-cli's --allowed-mcp-server-names
	// does. security.* keys cannot be mapped.
	FlagKeys map[string]string
	// TrustWorkspace is --trust-workspace: trust the workspace for this run.
	TrustWorkspace bool
}

// Load builds the settings from, in increasing precedence, Defaults(),
// gemini-cli's ~/.gemini/settings.json (the keys agentry shares with it),
// <UserHome>/.agentry/settings.json, the workspace's .gemini/settings.json
// (shared keys) and .agentry/settings.json (only in a trusted workspace),
// GEMINI_MODEL and AGENTRY_* variables, and flags. Invalid settings yield
// an *Error matching ErrInvalid; an untrusted workspace asking for more
// permissions yields an *UntrustedWorkspaceError matching
// ErrUntrustedWorkspace.
//
// gemini-cli refuses every headless run in an untrusted folder. agentry
// instead ignores the untrusted workspace's settings and .env files and
// fails only when those settings would have raised permissions or
// redirected credentials: running in a fresh clone with the user's own
// settings is safe, and failing there would teach users to trust every
// folder reflexively, which defeats the purpose of trust.
func Load(opts LoadOptions) (*Settings, error) {
	lookup, environ := opts.LookupEnv, opts.Environ
	if lookup == nil {
		lookup = os.LookupEnv
		if environ == nil {
			environ = os.Environ
		}
	}
	workspace, err := resolveWorkspace(opts.Workspace)
	if err != nil {
		return nil, err
	}
	userHome := opts.UserHome
	if userHome == "" {
		if userHome, err = os.UserHomeDir(); err != nil {
			return nil, fmt.Errorf("config: finding the home directory: %w", err)
		}
	}
	if userHome, err = filepath.Abs(userHome); err != nil {
		return nil, fmt.Errorf("config: home directory: %w", err)
	}
	st := Defaults()
	st.Workspace = workspace
	st.Home = filepath.Join(userHome, ".agentry")
	userPath := st.UserSettingsPath()
	sch := newSchema()
	if environ != nil {
		if err := sch.checkEnvNames(environ()); err != nil {
			return nil, err
		}
	}
	origins := map[string]origin{}
	structured := map[string]any{} // kindJSON values, kept out of viper

	v := viper.New()
	for key, val := range sch.flatten(&st) {
		v.SetDefault(key, val)
	}

	// gemini-cli's user settings, under agentry's own.
	geminiUserPath := geminiSettingsPath(userHome)
	if err := sch.mergeGemini(v, geminiUserPath, structured, origins, &st.Warnings); err != nil {
		return nil, err
	}

	// User settings.
	var userValues map[string]any
	if raw, err := readSettingsFile("", userPath); err != nil {
		return nil, err
	} else if raw != nil {
		if userValues, err = sch.validateFile(userPath, raw); err != nil {
			return nil, err
		}
		if err := merge(v, sch.splitJSON(userValues, structured), fileOrigin(userPath), origins); err != nil {
			return nil, fmt.Errorf("config: merging %s: %w", userPath, err)
		}
	}

	// Trust, decided before the workspace is read.
	var trustWarnings []string
	st.TrustSource, trustWarnings, err = decideTrust(opts, lookup, userValues, userHome, workspace)
	if err != nil {
		return nil, err
	}
	st.Trusted = st.TrustSource != ""
	st.Warnings = append(st.Warnings, trustWarnings...)

	// Workspace settings: gemini-cli's file, then agentry's. When the
	// workspace is the home directory, its settings files are the user's,
	// already read.
	if err := sch.mergeWorkspace(v, &st, geminiSettingsPath(workspace), geminiUserPath, userPath, structured, origins); err != nil {
		return nil, err
	}
	if err := sch.mergeWorkspace(v, &st, filepath.Join(workspace, ".agentry", "settings.json"), userPath, userPath, structured, origins); err != nil {
		return nil, err
	}

	// The .env files allowed for this workspace, read once: credentials
	// and GEMINI_MODEL come from them when the real environment lacks them.
	fileEnv, err := readEnvFiles(envFiles(workspace, userHome, st.Home, st.Trusted), envFileKeys())
	if err != nil {
		return nil, err
	}
	withFiles := func(name string) (string, bool) {
		if v, ok := lookup(name); ok && v != "" {
			return v, true
		}
		v, ok := fileEnv[name]
		return v, ok
	}

	// Environment, as a config layer above the files. AutomaticEnv is not
	// used: it reads os.Getenv, and variables must come only through
	// lookup. GEMINI_MODEL may also come from a .env file, as in gemini-cli.
	envValues, envOrigins, err := sch.readEnv(func(name string) (string, bool) {
		if name == geminiModelEnv {
			return withFiles(name)
		}
		return lookup(name)
	})
	if err != nil {
		return nil, err
	}
	if err := merge(v, sch.splitJSON(envValues, structured), func(key string) origin { return envOrigins[key] }, origins); err != nil {
		return nil, fmt.Errorf("config: merging environment: %w", err)
	}

	// Flags, bound so that viper prefers them to every other layer.
	extra, err := sch.bindFlags(v, opts.Flags, opts.FlagKeys, origins)
	if err != nil {
		return nil, err
	}

	var out Settings
	if err := v.Unmarshal(&out, func(c *mapstructure.DecoderConfig) { c.TagName = "json" }); err != nil {
		return nil, fmt.Errorf("config: decoding settings: %w", err)
	}
	sch.setJSON(&out, structured)
	out.Workspace, out.Home = st.Workspace, st.Home
	out.Trusted, out.TrustSource = st.Trusted, st.TrustSource
	out.Warnings = st.Warnings
	if f, ok := extra["tools.allowed"]; ok {
		// gemini-cli's --allowed-tools replaces tools.allowed.
		out.Tools.Allowed, out.AllowedToolsFlag = union([]string{}, f.values), true
	}
	if opts.Flags != nil {
		for name, key := range opts.FlagKeys {
			if key == "mcp.allowed" && opts.Flags.Changed(name) {
				// gemini-cli's --allowed-mcp-server-names replaces
				// mcp.allowed and leaves no server excluded.
				out.MCP.Excluded = nil
			}
		}
	}
	if dir, ok := lookup(AdminPolicyDirEnv); ok && dir != "" {
		out.adminPolicyDir = expandHome(dir, userHome)
	}
	out.PolicyPaths = absPaths(out.PolicyPaths, userHome)
	out.AdminPolicyPaths = absPaths(out.AdminPolicyPaths, userHome)

	const dirsKey = "context.includeDirectories"
	if out.Context.IncludeDirectories, err = resolveIncludeDirs(out.Context.IncludeDirectories, workspace, userHome, origins[dirsKey]); err != nil {
		return nil, err
	}
	if f, ok := extra[dirsKey]; ok {
		flagDirs, err := resolveIncludeDirs(f.values, workspace, userHome, f.origin)
		if err != nil {
			return nil, err
		}
		out.Context.IncludeDirectories = union(out.Context.IncludeDirectories, flagDirs)
	}

	if !out.Trusted {
		out.Warnings = append(out.Warnings, ignoredEnvFiles(workspace)...)
		if w := skippedContextFiles(append([]string{workspace}, out.Context.IncludeDirectories...), out.Context.FileName, userPath); w != "" {
			out.Warnings = append(out.Warnings, w)
		}
	}
	var keyWarning string
	if out.Credentials, keyWarning = credentialsFrom(withFiles); keyWarning != "" {
		out.Warnings = append(out.Warnings, keyWarning)
	}
	return &out, nil
}

// absPaths makes policy paths absolute, as gemini-cli's resolvePath does:
// ~ is the home directory, a relative path is relative to the current
// directory.
func absPaths(paths []string, userHome string) []string {
	if len(paths) == 0 {
		return paths
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		p = expandHome(p, userHome)
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		out = append(out, p)
	}
	return out
}

// mergeGemini merges one of gemini-cli's settings files as a layer (see
// geminiLayer). A file that cannot be read or parsed is skipped with a
// warning: it is gemini-cli's, and gemini-cli reports it in its own terms.
func (s *schema) mergeGemini(v *viper.Viper, path string, structured map[string]any, origins map[string]origin, warnings *[]string) error {
	raw, err := readSettingsFile("", path)
	if err != nil {
		*warnings = append(*warnings, fmt.Sprintf("%v (gemini-cli's file, ignored)", err))
		return nil
	}
	if raw == nil {
		return nil
	}
	values, warning := s.geminiLayer(path, raw, true)
	if warning != "" {
		*warnings = append(*warnings, warning)
	}
	if err := merge(v, s.splitJSON(values, structured), fileOrigin(path), origins); err != nil {
		return fmt.Errorf("config: merging %s: %w", path, err)
	}
	return nil
}

// mergeWorkspace merges one workspace settings file, agentry's or
// gemini-cli's, when the workspace is trusted. An untrusted file is never
// merged, so only its escalations matter; even an unparsable one is merely
// ignored. userPath is the same file's user-level counterpart, which is the
// file itself when the workspace is the home directory.
func (s *schema) mergeWorkspace(v *viper.Viper, st *Settings, path, userCounterpart, userPath string, structured map[string]any, origins map[string]origin) error {
	if resolvePath(path) == resolvePath(userCounterpart) {
		return nil
	}
	gemini := filepath.Base(filepath.Dir(path)) == geminiDir
	raw, err := readSettingsFile(st.Workspace, path)
	switch {
	case raw == nil && err == nil:
		return nil
	case !st.Trusted:
		// gemini-cli's file may hold its own security keys, which agentry
		// never reads from a workspace; they are no escalation.
		if keys := escalations(raw, !gemini); len(keys) > 0 {
			return &UntrustedWorkspaceError{File: path, Workspace: st.Workspace, Keys: keys, UserSettings: userPath}
		}
		st.Warnings = append(st.Warnings, fmt.Sprintf(
			"%s ignored: the workspace is not trusted (trust it with --trust-workspace, AGENTRY_TRUST_WORKSPACE=true, or security.trustedFolders in %s)",
			path, userPath))
		return nil
	case err != nil && gemini:
		st.Warnings = append(st.Warnings, fmt.Sprintf("%v (gemini-cli's file, ignored)", err))
		return nil
	case err != nil:
		return err
	case gemini:
		values, warning := s.geminiLayer(path, raw, false)
		if warning != "" {
			st.Warnings = append(st.Warnings, warning)
		}
		if err := merge(v, s.splitJSON(values, structured), fileOrigin(path), origins); err != nil {
			return fmt.Errorf("config: merging %s: %w", path, err)
		}
		return nil
	}
	if err := errWorkspaceSecurity(path, userPath, raw); err != nil {
		return err
	}
	values, err := s.validateFile(path, raw)
	if err != nil {
		return err
	}
	if err := merge(v, s.splitJSON(values, structured), fileOrigin(path), origins); err != nil {
		return fmt.Errorf("config: merging %s: %w", path, err)
	}
	return nil
}

// merge adds one layer of values to v, above the layers merged before it,
// and records where each value came from.
func merge(v *viper.Viper, values map[string]any, o func(key string) origin, origins map[string]origin) error {
	for key := range values {
		origins[key] = o(key)
	}
	return v.MergeConfigMap(nest(values))
}

// fileOrigin locates every value of a layer in one file.
func fileOrigin(file string) func(string) origin {
	return func(string) origin { return origin{file: file} }
}

// resolveIncludeDirs makes the include directories absolute (relative ones
// are relative to the workspace) and checks that each is a directory, so
// that a typo fails at start-up rather than in the middle of a tool call.
func resolveIncludeDirs(dirs []string, workspace, userHome string, o origin) ([]string, error) {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		p := expandHome(d, userHome)
		if !filepath.IsAbs(p) {
			p = filepath.Join(workspace, p)
		}
		real, err := filepath.EvalSymlinks(p)
		var fi os.FileInfo
		if err == nil {
			fi, err = os.Stat(real)
		}
		entry := fmt.Sprintf("%q entry %q", "context.includeDirectories", d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, o.error("context.includeDirectories", fmt.Sprintf("%s: directory %s does not exist", entry, p))
		case err != nil:
			e := o.error("context.includeDirectories", fmt.Sprintf("%s: cannot use %s", entry, p))
			e.Err = err
			return nil, e
		case !fi.IsDir():
			return nil, o.error("context.includeDirectories", fmt.Sprintf("%s: %s is not a directory", entry, p))
		}
		out = append(out, real)
	}
	return out, nil
}
