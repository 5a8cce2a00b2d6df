package protocol_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/protocol/devtool"
)

// TestReadmeCurl runs the curl examples of the README's `agentry serve`
// section, as written, against a server: the card, SendMessage, GetTask,
// ListTasks, the REST task and CancelTask each answer without an error,
// and say what the README says they do. The README cannot drift from
// what the server accepts.
func TestReadmeCurl(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := curlBlock(t, string(readme))

	h := newHarness(t, []string{
		callTurn("I'll create it.", "write_file", map[string]any{"file_path": "hello.txt", "content": "hello\n"}),
		textTurn("never"),
	})
	// A client sends the extension header only if the card requires it;
	// the README's requests carry none.
	var card struct {
		Capabilities struct {
			Extensions []struct {
				URI      string `json:"uri"`
				Required bool   `json:"required"`
			} `json:"extensions"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(h.cardJSON(), &card); err != nil {
		t.Fatal(err)
	}
	extension := ""
	for _, x := range card.Capabilities.Extensions {
		if x.URI == devtool.URI && x.Required {
			extension = x.URI
		}
	}

	vars := map[string]string{}
	seen := map[string]bool{}
	for _, line := range lines {
		name, rest, assign := cutAssignment(line)
		if assign && !strings.HasPrefix(rest, "$(") {
			vars[name] = rest
			continue
		}
		// The server is the test's: its URL and token replace the README's.
		vars["URL"], vars["TOKEN"] = h.url, testToken
		cmd, jqPath := line, ""
		if assign {
			inner := strings.TrimSuffix(strings.TrimPrefix(rest, "$("), ")")
			var ok bool
			cmd, jqPath, ok = strings.Cut(inner, "| jq -r ")
			if !ok {
				t.Fatalf("README: a command substitution other than `curl … | jq -r PATH`: %s", line)
			}
			jqPath = strings.TrimSpace(jqPath)
		}
		words, err := shellWords(cmd, vars)
		if err != nil {
			t.Fatalf("README line %q: %v", line, err)
		}
		req := curlRequest(t, words, extension)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		what := readmeWhat(req, words)
		seen[what] = true
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("README %s: HTTP %d %s", what, resp.StatusCode, body)
		}
		var out map[string]any
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("README %s: %v\n%s", what, err, body)
		}
		if out["error"] != nil {
			t.Fatalf("README %s: %s", what, body)
		}
		checkReadmeAnswer(t, what, out, vars["TASK"])
		if jqPath != "" {
			v, ok := jsonPath(out, jqPath)
			if !ok || v == "" {
				t.Fatalf("README %s: jq %s finds nothing in %s", what, jqPath, body)
			}
			vars[name] = v
		}
	}
	for _, want := range []string{"card", "SendMessage", "GetTask", "ListTasks", "REST GET task", "CancelTask"} {
		if !seen[want] {
			t.Errorf("the README's curl examples have no %s", want)
		}
	}
}

// curlBlock returns the commands of the first sh block with curl after
// the `agentry serve` heading, continuation lines joined.
func curlBlock(t *testing.T, readme string) []string {
	t.Helper()
	_, serve, ok := strings.Cut(readme, "## `agentry serve`")
	if !ok {
		t.Fatal("README has no `agentry serve` section")
	}
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(serve, -1) {
		if !strings.Contains(block[1], "curl ") {
			continue
		}
		var lines []string
		for _, l := range strings.Split(strings.ReplaceAll(block[1], "\\\n", " "), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		return lines
	}
	t.Fatal("README's `agentry serve` section has no curl example")
	return nil
}

// cutAssignment splits NAME=value.
func cutAssignment(line string) (name, value string, ok bool) {
	m := regexp.MustCompile(`^([A-Z_]+)=(.*)$`).FindStringSubmatch(line)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// shellWords splits a command as sh does, for the subset the README
// uses: single and double quotes, $NAME expansion outside single quotes.
func shellWords(s string, vars map[string]string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '$':
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z') {
				j++
			}
			name := s[i+1 : j]
			v, ok := vars[name]
			if name == "" || !ok {
				return nil, fmt.Errorf("$%s is not set", name)
			}
			cur.WriteString(v)
			inWord = true
			i = j - 1
		case quote == '"':
			if c == '"' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote = c
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// curlRequest builds the request a curl command line makes.
func curlRequest(t *testing.T, words []string, extension string) *http.Request {
	t.Helper()
	if len(words) == 0 || words[0] != "curl" {
		t.Fatalf("README: not a curl command: %q", words)
	}
	method, target, data := "", "", ""
	var headers [][2]string
	for i := 1; i < len(words); i++ {
		switch w := words[i]; w {
		case "-s", "-S", "-sS":
		case "-X", "-H", "-d", "--data":
			if i+1 == len(words) {
				t.Fatalf("README: %s without a value", w)
			}
			i++
			switch w {
			case "-X":
				method = words[i]
			case "-H":
				k, v, _ := strings.Cut(words[i], ":")
				headers = append(headers, [2]string{k, strings.TrimSpace(v)})
			default:
				data = words[i]
			}
		default:
			if strings.HasPrefix(w, "-") || target != "" {
				t.Fatalf("README: curl option the test does not know: %q", w)
			}
			target = w
		}
	}
	if method == "" {
		method = http.MethodGet
		if data != "" {
			method = http.MethodPost
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), method, target, strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, hv := range headers {
		req.Header.Add(hv[0], hv[1])
	}
	if data != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded") // curl's default
	}
	if extension != "" && req.Header.Get("Authorization") != "" {
		req.Header.Set("A2A-Extensions", extension)
	}
	return req
}

// readmeWhat names what a README request does.
func readmeWhat(req *http.Request, words []string) string {
	switch {
	case strings.HasSuffix(req.URL.Path, "/.well-known/agent-card.json"):
		return "card"
	case strings.HasPrefix(req.URL.Path, "/rest/tasks/") && req.Method == http.MethodGet:
		return "REST GET task"
	}
	for i, w := range words {
		if (w == "-d" || w == "--data") && i+1 < len(words) {
			var env struct {
				Method string `json:"method"`
			}
			if json.Unmarshal([]byte(words[i+1]), &env) == nil && env.Method != "" {
				return env.Method
			}
		}
	}
	return req.Method + " " + req.URL.Path
}

// checkReadmeAnswer checks that an answer says what the README says.
func checkReadmeAnswer(t *testing.T, what string, out map[string]any, task string) {
	t.Helper()
	get := func(path string) string { v, _ := jsonPath(out, path); return v }
	switch what {
	case "card":
		if out["name"] != "agentry" {
			t.Errorf("README card: %v", out)
		}
	case "SendMessage":
		if s := get(".result.task.status.state"); s != "TASK_STATE_INPUT_REQUIRED" {
			t.Errorf("README SendMessage: the task is %s, the README says it waits for the client (input required)", s)
		}
	case "GetTask":
		h, _ := out["result"].(map[string]any)["history"].([]any)
		if get(".result.id") != task || get(".result.status.state") != "TASK_STATE_INPUT_REQUIRED" || len(h) > 2 {
			t.Errorf("README GetTask: %v", out)
		}
	case "ListTasks":
		tasks, _ := out["result"].(map[string]any)["tasks"].([]any)
		if len(tasks) != 1 || tasks[0].(map[string]any)["id"] != task {
			t.Errorf("README ListTasks: %v", out)
		}
	case "REST GET task":
		if get(".id") != task {
			t.Errorf("README REST task: %v", out)
		}
	case "CancelTask":
		if get(".result.status.state") != "TASK_STATE_CANCELED" {
			t.Errorf("README CancelTask: %v", out)
		}
	}
}

// jsonPath follows jq's .a.b.c through decoded JSON to a string.
func jsonPath(v any, path string) (string, bool) {
	for _, k := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		v = m[k]
	}
	s, ok := v.(string)
	return s, ok
}
