package config_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/config"
)

// TestCredentials checks where each credential comes from: the real
// environment first, then the .env files in order, with GEMINI_API_KEY
// preferred to GOOGLE_API_KEY.
func TestCredentials(t *testing.T) {
	t.Parallel()
	type files struct{ wsAgentry, ws, home, userHome string }
	tests := []struct {
		name    string
		env     env
		files   files
		trusted bool
		want    config.Credentials
		model   string
		mode    string
	}{
		{name: "none"},
		{
			name: "real env over .env", env: env{"GEMINI_API_KEY": "real"},
			files: files{userHome: "GEMINI_API_KEY=file\nOPENAI_API_KEY=file\n"},
			want:  config.Credentials{GeminiAPIKey: "real", OpenAIAPIKey: "file"},
		},
		{
			name: "empty real variable falls through", env: env{"GEMINI_API_KEY": ""},
			files: files{home: "GEMINI_API_KEY=file\n"},
			want:  config.Credentials{GeminiAPIKey: "file"},
		},
		{
			name: "GEMINI over GOOGLE", env: env{"GOOGLE_API_KEY": "google", "GEMINI_API_KEY": "gemini"},
			want: config.Credentials{GeminiAPIKey: "gemini"},
		},
		{
			name: "GOOGLE alone", env: env{"GOOGLE_API_KEY": "google"},
			want: config.Credentials{GeminiAPIKey: "google"},
		},
		{
			name: "GEMINI from .env over GOOGLE from env", env: env{"GOOGLE_API_KEY": "google"},
			files: files{home: "GEMINI_API_KEY=gemini\n"},
			want:  config.Credentials{GeminiAPIKey: "gemini"},
		},
		{
			name: "trusted .env order", trusted: true,
			files: files{
				wsAgentry: "GEMINI_API_KEY=wsAgentry\n",
				ws:        "GEMINI_API_KEY=ws\nOPENAI_API_KEY=ws\n",
				home:      "GEMINI_API_KEY=home\nOPENAI_API_KEY=home\nGOOGLE_CLOUD_PROJECT=home\n",
				userHome:  "GEMINI_API_KEY=userHome\nOPENAI_API_KEY=userHome\nGOOGLE_CLOUD_PROJECT=userHome\nGOOGLE_CLOUD_LOCATION=userHome\n",
			},
			want: config.Credentials{GeminiAPIKey: "wsAgentry", OpenAIAPIKey: "ws", GoogleProject: "home", GoogleLocation: "userHome"},
		},
		{
			name: "untrusted workspace .env skipped",
			files: files{
				wsAgentry: "GEMINI_API_KEY=wsAgentry\n",
				ws:        "GEMINI_API_KEY=ws\nOPENAI_BASE_URL=http://evil\n",
				userHome:  "GEMINI_API_KEY=userHome\n",
			},
			want: config.Credentials{GeminiAPIKey: "userHome"},
		},
		{
			name: "only allow-listed keys", trusted: true,
			files: files{
				ws:   "AGENTRY_APPROVAL_MODE=yolo\nAGENTRY_MODEL=evil\nAGENTRY_TOOLS_ALLOWED=run_shell_command\nPATH=/evil\n",
				home: "AGENTRY_GENERAL_DEFAULTAPPROVALMODE=yolo\n",
			},
			model: config.DefaultModel, mode: config.ApprovalDefault,
		},
		{
			name: "every key, with export and quotes", trusted: true,
			files: files{ws: strings.Join([]string{
				`export GOOGLE_API_KEY="g key"`,
				`GOOGLE_GENAI_USE_VERTEXAI=true`,
				`GOOGLE_CLOUD_PROJECT='proj'`,
				`GOOGLE_CLOUD_LOCATION=us-central1 # comment`,
				`GOOGLE_GEMINI_BASE_URL=http://gemini`,
				`OPENAI_API_KEY=sk-1`,
				`OPENAI_BASE_URL=http://openai/v1`,
			}, "\n")},
			want: config.Credentials{
				GeminiAPIKey: "g key", UseVertexAI: true, GoogleProject: "proj", GoogleLocation: "us-central1",
				GeminiBaseURL: "http://gemini", OpenAIAPIKey: "sk-1", OpenAIBaseURL: "http://openai/v1",
			},
		},
		{name: "vertex 1", env: env{"GOOGLE_GENAI_USE_VERTEXAI": "1"}, want: config.Credentials{UseVertexAI: true}},
		{name: "vertex TRUE", env: env{"GOOGLE_GENAI_USE_VERTEXAI": "TRUE"}, want: config.Credentials{UseVertexAI: true}},
		{name: "vertex false", env: env{"GOOGLE_GENAI_USE_VERTEXAI": "false"}, want: config.Credentials{}},
		{name: "vertex yes is not true", env: env{"GOOGLE_GENAI_USE_VERTEXAI": "yes"}, want: config.Credentials{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			for path, content := range map[string]string{
				filepath.Join(f.ws, ".agentry", ".env"): tt.files.wsAgentry,
				filepath.Join(f.ws, ".env"):             tt.files.ws,
				filepath.Join(f.home, ".env"):           tt.files.home,
				filepath.Join(f.userHome, ".env"):       tt.files.userHome,
			} {
				if content != "" {
					write(t, path, content)
				}
			}
			opts := f.options(t, tt.env)
			opts.TrustWorkspace = tt.trusted
			s, err := config.Load(opts)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if s.Credentials != tt.want {
				t.Errorf("credentials = %+v\nwant %+v", s.Credentials, tt.want)
			}
			if tt.model != "" && (s.Model.Name != tt.model || s.General.DefaultApprovalMode != tt.mode || len(s.Tools.Allowed) != 0) {
				t.Errorf(".env changed settings: %+v", s)
			}
		})
	}
}

// TestInvalidEnvFile checks that a .env file gotenv cannot parse is an
// error naming the file.
func TestInvalidEnvFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	path := filepath.Join(f.userHome, ".env")
	write(t, path, "GEMINI_API_KEY=k\nthis is not a variable\n")
	_, err := config.Load(f.options(t, nil))
	if !errors.Is(err, config.ErrInvalid) || !strings.HasPrefix(err.Error(), path+": invalid .env file: ") {
		t.Fatalf("Load error = %v", err)
	}
}
