// Package envredact decides which of agentry's environment variables the
// processes it starts see: shell commands, hooks and MCP stdio servers run
// commands a model may have chosen or a repository may have supplied, and
// anything in their environment can leave the machine with them.
//
// The rules are gemini-cli's security.environmentVariableRedaction
// (packages/core/src/services/environmentSanitization.ts) with these
// differences: agentry's own secrets are never passed, whatever the
// settings say; a name the user allows is passed even when its value looks
// like a secret (gemini-cli still withholds it, which leaves no way to pass
// a GitHub token on purpose); a blocked name is withheld even with
// redaction off; a few names that hold paths to sockets and files rather
// than secrets (SSH_AUTH_SOCK, SSL_CERT_FILE, …) are always passed; and
// gemini-cli's stricter mode inside GitHub Actions is not reproduced.
package envredact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Config is the security.environmentVariableRedaction setting.
type Config struct {
	// Enabled applies the name and value rules. Off, every variable is
	// passed except agentry's own secrets and the Blocked names.
	Enabled bool
	// Allowed names are always passed (agentry's own secrets excepted).
	Allowed []string
	// Blocked names are never passed.
	Blocked []string
}

// Default is the redaction applied when the settings say nothing: enabled.
// A model-chosen command could otherwise send the model's API key, or any
// other credential in the environment, anywhere; a user who needs one of
// them in shell commands allows it by name.
func Default() Config { return Config{Enabled: true} }

// Environ returns the variables of environ (KEY=VALUE, as os.Environ gives
// them) that a child process may see under c, in their order.
func (c Config) Environ(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !c.Redacted(name, value) {
			out = append(out, kv)
		}
	}
	return out
}

// Redacted reports whether the variable name=value is withheld under c.
// Names compare without regard to case, as in gemini-cli.
func (c Config) Redacted(name, value string) bool {
	upper := strings.ToUpper(name)
	switch {
	case Own(upper):
		return true
	case containsFold(c.Allowed, upper):
		return false
	case containsFold(c.Blocked, upper):
		return true
	case !c.Enabled:
		return false
	}
	if secretValue().MatchString(value) {
		return true
	}
	switch {
	case strings.HasPrefix(upper, "GIT_CONFIG_"), strings.HasPrefix(upper, "GEMINI_CLI_"):
		return false
	case slices.Contains(alwaysAllowed(), upper):
		return false
	case slices.Contains(neverAllowed(), upper):
		return true
	}
	return secretName().MatchString(upper)
}

// Own reports whether name is one of agentry's own secrets, which no
// child ever sees: the A2A server's bearer token, the session store's
// connection string (it may hold a password), and any other AGENTRY_*
// variable whose name says it holds a secret.
func Own(name string) bool {
	upper := strings.ToUpper(name)
	if !strings.HasPrefix(upper, "AGENTRY_") {
		return false
	}
	return upper == "AGENTRY_A2A_TOKEN" || upper == "AGENTRY_SESSION_POSTGRESDSN" ||
		strings.Contains(upper, "DSN") || secretName().MatchString(upper)
}

func containsFold(list []string, upper string) bool {
	for _, s := range list {
		if strings.EqualFold(strings.TrimSpace(s), upper) {
			return true
		}
	}
	return false
}

// alwaysAllowed are gemini-cli's ALWAYS_ALLOWED_ENVIRONMENT_VARIABLES and
// agentry's additions: variables that point at sockets and files (an SSH
// agent for git over SSH, certificate bundles for TLS), which name
// patterns like AUTH and CERT would otherwise withhold though they hold no
// secret and any process of the user can find them anyway.
func alwaysAllowed() []string {
	return []string{
		"PATH", "SYSTEMROOT", "COMSPEC", "PATHEXT", "WINDIR", "TEMP", "TMP", "USERPROFILE", "SYSTEMDRIVE",
		"HOME", "LANG", "SHELL", "TMPDIR", "USER", "LOGNAME", "TERM", "COLORTERM",
		"ADDITIONAL_CONTEXT", "AVAILABLE_LABELS", "BRANCH_NAME", "DESCRIPTION", "EVENT_NAME", "GITHUB_ENV",
		"IS_PULL_REQUEST", "ISSUES_TO_TRIAGE", "ISSUE_BODY", "ISSUE_NUMBER", "ISSUE_TITLE",
		"PULL_REQUEST_NUMBER", "REPOSITORY", "TITLE", "TRIGGERING_ACTOR",
		// agentry's additions.
		"SSH_AUTH_SOCK", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "DOCKER_CERT_PATH",
	}
}

// neverAllowed are gemini-cli's NEVER_ALLOWED_ENVIRONMENT_VARIABLES.
func neverAllowed() []string {
	return []string{
		"CLIENT_ID", "DB_URI", "CONNECTION_STRING", "AWS_DEFAULT_REGION", "AZURE_CLIENT_ID", "AZURE_TENANT_ID",
		"SLACK_WEBHOOK_URL", "TWILIO_ACCOUNT_SID", "DATABASE_URL", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_ACCOUNT",
		"FIREBASE_PROJECT_ID",
	}
}

// secretName is gemini-cli's NEVER_ALLOWED_NAME_PATTERNS. It and
// secretValue are compiled on first use: a run that starts no process
// need not compile them.
var secretName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)TOKEN|SECRET|PASSWORD|PASSWD|KEY|AUTH|CREDENTIAL|CREDS|PRIVATE|CERT`)
})

// secretValue is gemini-cli's NEVER_ALLOWED_VALUE_PATTERNS. RE2 matches
// in linear time, so the length bounds gemini-cli puts on repetitions
// against catastrophic backtracking are not needed.
var secretValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)` + strings.Join([]string{
		`-----BEGIN (RSA|OPENSSH|EC|PGP) PRIVATE KEY-----`,
		`-----BEGIN CERTIFICATE-----`,
		`(https?|ftp|smtp)://[^:\s]+:[^@\s]+@`,               // credentials in a URL
		`(ghp|gho|ghu|ghs|ghr|github_pat)_[a-zA-Z0-9_]{36,}`, // GitHub tokens
		`AIzaSy[a-zA-Z0-9_\\-]{33}`,                          // Google API keys
		`AKIA[A-Z0-9]{16}`,                                   // AWS access key ids
		`eyJ[a-zA-Z0-9_-]*\.[a-zA-Z0-9_-]*\.[a-zA-Z0-9_-]*`,  // JWTs
		`(s|r)k_(live|test)_[0-9a-zA-Z]{24}`,                 // Stripe keys
		`xox[abpr]-[a-zA-Z0-9-]+`,                            // Slack tokens
	}, "|"))
})
