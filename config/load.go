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
	// agentry home is <UserHome>/.agentry.
	UserHome string
	// LookupEnv reads the environment; default os.LookupEnv. Tests inject a
	// map so that they do not depend on, or change, the process environment.
	LookupEnv func(string) (string, bool)
	// Flags are the parsed command-line flags; may be nil.
	Flags *pflag.FlagSet
	// FlagKeys maps flag names to settings keys, e.g. "model" ->
	// "model.name". Only flags set on the command line override. A flag
	// for tools.allowed adds to the merged list instead of replacing it.
	// security.* keys cannot be mapped.
	FlagKeys map[string]string
	// TrustWorkspace is --trust-workspace: trust the workspace for this run.
	TrustWorkspace bool
}

// Load builds the settings from, in increasing precedence, Defaults(),
// <UserHome>/.agentry/settings.json, <workspace>/.agentry/settings.json
// (only in a trusted workspace), AGENTRY_* variables and flags. Invalid
// settings yield an *Error matching ErrInvalid; an untrusted workspace
// asking for more permissions yields an *UntrustedWorkspaceError matching
// ErrUntrustedWorkspace.
//
// gemini-cli refuses every headless run in an untrusted folder. agentry
// instead ignores the untrusted workspace's settings and .env files and
// fails only when those settings would have raised permissions or
// redirected credentials: running in a fresh clone with the user's own
// settings is safe, and failing there would teach users to trust every
// folder reflexively, which defeats the purpose of trust.
func Load(opts LoadOptions) (*Settings, error) {
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
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
	origins := map[string]origin{}
	structured := map[string]any{} // kindJSON values, kept out of viper

	v := viper.New()
	for key, val := range sch.flatten(&st) {
		v.SetDefault(key, val)
	}

	// User settings.
	var userValues map[string]any
	if raw, err := readSettingsFile(userPath); err != nil {
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
	st.TrustSource, err = decideTrust(opts, lookup, userValues, userHome, workspace)
	if err != nil {
		return nil, err
	}
	st.Trusted = st.TrustSource != ""

	// Workspace settings. When the workspace is the home directory, its
	// settings file is the user's, already read.
	wsPath := filepath.Join(workspace, ".agentry", "settings.json")
	if resolvePath(wsPath) != resolvePath(userPath) {
		raw, err := readSettingsFile(wsPath)
		switch {
		case raw == nil && err == nil:
		case !st.Trusted:
			// An untrusted file is never merged, so only its escalations
			// matter; even an unparsable one is merely ignored.
			if keys := escalations(raw); len(keys) > 0 {
				return nil, &UntrustedWorkspaceError{File: wsPath, Workspace: workspace, Keys: keys, UserSettings: userPath}
			}
			st.Warnings = append(st.Warnings, fmt.Sprintf(
				"%s ignored: the workspace is not trusted (trust it with --trust-workspace, AGENTRY_TRUST_WORKSPACE=true, or security.trustedFolders in %s)",
				wsPath, userPath))
		case err != nil:
			return nil, err
		default:
			if err := errWorkspaceSecurity(wsPath, userPath, raw); err != nil {
				return nil, err
			}
			values, err := sch.validateFile(wsPath, raw)
			if err != nil {
				return nil, err
			}
			if err := merge(v, sch.splitJSON(values, structured), fileOrigin(wsPath), origins); err != nil {
				return nil, fmt.Errorf("config: merging %s: %w", wsPath, err)
			}
		}
	}

	// Environment, as a config layer above the files. AutomaticEnv is not
	// used: it reads os.Getenv, and variables must come only through
	// lookup.
	envValues, envOrigins, err := sch.readEnv(lookup)
	if err != nil {
		return nil, err
	}
	if err := merge(v, sch.splitJSON(envValues, structured), func(key string) origin { return envOrigins[key] }, origins); err != nil {
		return nil, fmt.Errorf("config: merging environment: %w", err)
	}

	// Flags, bound so that viper prefers them to every other layer.
	extraAllowed, err := sch.bindFlags(v, opts.Flags, opts.FlagKeys, origins)
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
	out.Tools.Allowed = union(out.Tools.Allowed, extraAllowed)

	if out.Context.IncludeDirectories, err = resolveIncludeDirs(out.Context.IncludeDirectories, workspace, userHome, origins["context.includeDirectories"]); err != nil {
		return nil, err
	}

	if !out.Trusted {
		out.Warnings = append(out.Warnings, ignoredEnvFiles(workspace)...)
	}
	if out.Credentials, err = loadCredentials(lookup, envFiles(workspace, userHome, out.Home, out.Trusted)); err != nil {
		return nil, err
	}
	return &out, nil
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
