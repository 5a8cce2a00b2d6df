package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

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

// envFiles lists the .env files to read, most specific first. The
// workspace ones are read only in a trusted workspace, and only in the
// workspace itself: gemini-cli walks up to the file system root, but a
// parent directory is outside what the user trusted.
func envFiles(workspace, userHome, home string, trusted bool) []string {
	var files []string
	if trusted {
		files = append(files, filepath.Join(workspace, ".agentry", ".env"), filepath.Join(workspace, ".env"))
	}
	return append(files, filepath.Join(home, ".env"), filepath.Join(userHome, ".env"))
}

// readEnvFile parses a .env file with gotenv. A missing file yields nil,
// nil. gotenv.StrictParse only parses: unlike gotenv.Load it never sets
// process variables. It does expand $VAR references, reading the process
// environment for them; that is read-only and only affects files the user
// trusts.
func readEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if missing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read .env file", Err: err}
	}
	defer f.Close()
	env, err := gotenv.StrictParse(f)
	if err != nil {
		return nil, &Error{File: path, Msg: "invalid .env file", Err: err}
	}
	return env, nil
}

// loadCredentials gathers the credentials: each key from the real
// environment if set there, else from the first .env file that sets it.
// Nothing is written to the process environment, so a .env value cannot
// leak into the commands agentry runs.
func loadCredentials(lookup func(string) (string, bool), files []string) (Credentials, error) {
	vals := map[string]string{}
	var pending []string
	for _, k := range credentialKeys() {
		if v, ok := lookup(k); ok && v != "" {
			vals[k] = v
		} else {
			pending = append(pending, k)
		}
	}
	for _, file := range files {
		if len(pending) == 0 {
			break
		}
		env, err := readEnvFile(file)
		if err != nil {
			return Credentials{}, err
		}
		var rest []string
		for _, k := range pending {
			if v := env[k]; v != "" {
				vals[k] = v
			} else {
				rest = append(rest, k)
			}
		}
		pending = rest
	}
	key := vals["GEMINI_API_KEY"]
	if key == "" {
		key = vals["GOOGLE_API_KEY"]
	}
	vertex := strings.TrimSpace(vals["GOOGLE_GENAI_USE_VERTEXAI"])
	return Credentials{
		GeminiAPIKey:   key,
		UseVertexAI:    strings.EqualFold(vertex, "true") || vertex == "1",
		GoogleProject:  vals["GOOGLE_CLOUD_PROJECT"],
		GoogleLocation: vals["GOOGLE_CLOUD_LOCATION"],
		GeminiBaseURL:  vals["GOOGLE_GEMINI_BASE_URL"],
		OpenAIAPIKey:   vals["OPENAI_API_KEY"],
		OpenAIBaseURL:  vals["OPENAI_BASE_URL"],
	}, nil
}

// ignoredEnvFiles returns warnings for the workspace .env files of an
// untrusted workspace that hold credentials, so that a user wondering why
// the key in ./.env is not used learns the reason. The files are parsed
// but none of their values is used.
func ignoredEnvFiles(workspace string) []string {
	var warnings []string
	for _, file := range []string{filepath.Join(workspace, ".agentry", ".env"), filepath.Join(workspace, ".env")} {
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
			warnings = append(warnings, fmt.Sprintf("%s ignored (it sets %s): the workspace is not trusted", file, strings.Join(keys, ", ")))
		}
	}
	return warnings
}
