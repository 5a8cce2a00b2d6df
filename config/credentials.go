package config

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/subosito/gotenv"
)

// credentialKeys are the only variables taken from .env files. AGENTRY_*
// is deliberately absent: a .env file must never be able to trust a
// workspace or raise the approval mode.
func credentialKeys() []string {
	return []string{
		"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI",
		"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GEMINI_BASE_URL",
		"OPENAI_API_KEY", "OPENAI_BASE_URL",
	}
}

// envFile is a .env file and, for a workspace's, the workspace it is
// confined to ("" for the user's own; see readLimited).
type envFile struct {
	path, root string
}

// envFiles lists the .env files to read, most specific first, with
// gemini-cli's .gemini/.env beside agentry's .agentry/.env. The workspace
// ones are read only in a trusted workspace, and only in the workspace
// itself: gemini-cli walks up to the file system root, but a parent
// directory is outside what the user trusted.
func envFiles(workspace, userHome, home string, trusted bool) []envFile {
	var files []envFile
	if trusted {
		files = append(files, workspaceEnvFiles(workspace)...)
	}
	return append(files,
		envFile{path: filepath.Join(home, ".env")},
		envFile{path: filepath.Join(userHome, geminiDir, ".env")},
		envFile{path: filepath.Join(userHome, ".env")})
}

// workspaceEnvFiles are a workspace's .env files, most specific first.
func workspaceEnvFiles(workspace string) []envFile {
	var out []envFile
	for _, p := range []string{filepath.Join(workspace, ".agentry", ".env"), filepath.Join(workspace, geminiDir, ".env"), filepath.Join(workspace, ".env")} {
		out = append(out, envFile{path: p, root: workspace})
	}
	return out
}

// readEnvFile parses a .env file with gotenv. A missing file yields nil,
// nil. gotenv.StrictParse only parses: unlike gotenv.Load it never sets
// process variables. It does expand $VAR references, reading the process
// environment for them; that is read-only and only affects files the user
// trusts.
func readEnvFile(file envFile) (map[string]string, error) {
	path := file.path
	data, err := readLimited(file.root, path, maxEnvBytes)
	if missing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, readError(path, ".env file", maxEnvBytes, err)
	}
	env, err := gotenv.StrictParse(bytes.NewReader(data))
	if err != nil && filepath.Base(filepath.Dir(path)) == geminiDir {
		// gemini-cli's file, which its dotenv parser reads leniently:
		// lines that are not assignments are skipped, not errors.
		env, err = gotenv.StrictParse(strings.NewReader(assignmentsOnly(string(data))))
	}
	if err != nil {
		return nil, &Error{File: path, Msg: "invalid .env file", Err: err}
	}
	return env, nil
}

// assignmentsOnly keeps the lines of a .env file that are blank, comments
// or assignments (NAME=…, export NAME=…, NAME: …), as dotenv reads them.
func assignmentsOnly(data string) string {
	var b strings.Builder
	for line := range strings.Lines(data) {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") || envAssignment().MatchString(t) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// envAssignment matches the start of a dotenv assignment; it is compiled
// on first use, when a .env file is read.
var envAssignment = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(export\s+)?[A-Za-z_][A-Za-z0-9_.-]*\s*(=|:\s)`)
})

// geminiModelEnv is gemini-cli's model variable: below --model, above
// every settings file, as in gemini-cli; below the AGENTRY_* variables.
const geminiModelEnv = "GEMINI_MODEL"

// envFileKeys are the variables taken from .env files: the credentials and
// GEMINI_MODEL, which gemini-cli users keep in ~/.gemini/.env.
func envFileKeys() []string {
	return append(credentialKeys(), geminiModelEnv)
}

// readEnvFiles returns, for each of keys, its value in the first file that
// sets it (non-empty). Nothing is written to the process environment, so a
// .env value cannot leak into the commands agentry runs.
func readEnvFiles(files []envFile, keys []string) (map[string]string, error) {
	vals := map[string]string{}
	for _, file := range files {
		env, err := readEnvFile(file)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if _, done := vals[k]; !done && env[k] != "" {
				vals[k] = env[k]
			}
		}
	}
	return vals, nil
}

// credentialsFrom gathers the credentials through lookup (the real
// environment, then the .env files). The API key is the one the Gemini
// backend sends: GEMINI_API_KEY, else GOOGLE_API_KEY, for the Gemini API;
// GOOGLE_API_KEY for Vertex AI, whose express mode takes a key in place of
// a project, as gemini-cli does. With both keys set, the warning names the
// one used.
func credentialsFrom(lookup func(string) (string, bool)) (Credentials, string) {
	get := func(k string) string { v, _ := lookup(k); return v }
	vertex := strings.TrimSpace(get("GOOGLE_GENAI_USE_VERTEXAI"))
	c := Credentials{
		UseVertexAI:    strings.EqualFold(vertex, "true") || vertex == "1",
		GoogleProject:  get("GOOGLE_CLOUD_PROJECT"),
		GoogleLocation: get("GOOGLE_CLOUD_LOCATION"),
		GeminiBaseURL:  get("GOOGLE_GEMINI_BASE_URL"),
		OpenAIAPIKey:   get("OPENAI_API_KEY"),
		OpenAIBaseURL:  get("OPENAI_BASE_URL"),
	}
	gemini, google := get("GEMINI_API_KEY"), get("GOOGLE_API_KEY")
	used := "GEMINI_API_KEY"
	switch {
	case c.UseVertexAI:
		c.GeminiAPIKey, used = google, "GOOGLE_API_KEY"
	case gemini != "":
		c.GeminiAPIKey = gemini
	default:
		c.GeminiAPIKey, used = google, "GOOGLE_API_KEY"
	}
	if gemini == "" || google == "" {
		return c, ""
	}
	what := "the Gemini API"
	if c.UseVertexAI {
		what = "Vertex AI (GOOGLE_GENAI_USE_VERTEXAI)"
	}
	return c, fmt.Sprintf("both GEMINI_API_KEY and GOOGLE_API_KEY are set; %s uses %s", what, used)
}

// ignoredEnvFiles returns warnings for the workspace .env files of an
// untrusted workspace that hold credentials, so that a user wondering why
// the key in ./.env is not used learns the reason. The files are parsed
// but none of their values is used.
func ignoredEnvFiles(workspace string) []string {
	var warnings []string
	for _, file := range workspaceEnvFiles(workspace) {
		env, err := readEnvFile(file)
		if err != nil || env == nil {
			continue
		}
		var keys []string
		for _, k := range credentialKeys() {
			if env[k] != "" {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			warnings = append(warnings, fmt.Sprintf("%s ignored (it sets %s): the workspace is not trusted", file.path, strings.Join(keys, ", ")))
		}
	}
	return warnings
}
