package termtest

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// helperEnv makes the test binary run one of the programs below instead of
// its tests.
const helperEnv = "TERMTEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "stream":
		os.Exit(streamProgram())
	case "redraw":
		os.Exit(redrawProgram())
	case "orphan":
		os.Exit(orphanProgram())
	default:
		fmt.Fprintf(os.Stderr, "unknown helper %q\n", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

// helperCmd runs this test binary as the helper program name, with TERM set
// as a terminal emulator would and extra variables.
func helperCmd(name string, extra ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + name, "TERM=xterm-256color"}, extra...)...)
	return cmd
}

// streamLines is how many lines the stream program prints.
const streamLines = 200

// streamModel is an inline (not alt-screen) bubbletea program that prints
// lines above itself with tea.Println while its one-row view counts them,
// as a chat's answer streams into the scrollback under a live status line.
type streamModel struct {
	n     int
	pause time.Duration
	// stay keeps the program running after the last line, until Ctrl-C.
	stay bool
	// input is what has been typed, shown after the count.
	input string
}

type tickMsg struct{}

func (m streamModel) tick() tea.Cmd {
	return func() tea.Msg {
		time.Sleep(m.pause)
		return tickMsg{}
	}
}

func (m streamModel) Init() tea.Cmd { return m.tick() }

func (m streamModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tickMsg:
		if m.n == streamLines {
			if m.stay {
				return m, nil
			}
			return m, tea.Quit
		}
		m.n++
		return m, tea.Sequence(tea.Println(fmt.Sprintf("line %03d: the quick brown fox jumps over the lazy dog", m.n)), m.tick())
	case tea.KeyPressMsg:
		if msg.String() == "ctrl+c" {
			return m, tea.Quit
		}
		m.input += msg.Text
	}
	return m, nil
}

func (m streamModel) View() tea.View {
	return tea.NewView(fmt.Sprintf("streaming %d/%d > %s", m.n, streamLines, m.input))
}

// streamProgram runs streamModel, after STREAM_HEADER lines of text as a
// shell would have left above it, pausing STREAM_PAUSE between lines, and
// running on after them until Ctrl-C when STREAM_STAY is set.
func streamProgram() int {
	header, _ := strconv.Atoi(os.Getenv("STREAM_HEADER"))
	for i := range header {
		fmt.Printf("$ header %d\r\n", i+1)
	}
	pause, _ := time.ParseDuration(os.Getenv("STREAM_PAUSE"))
	m := streamModel{pause: pause, stay: os.Getenv("STREAM_STAY") != ""}
	if _, err := tea.NewProgram(m).Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// redrawProgram draws as renderers that redraw a dynamic region taller than
// they own do: it prints 30 numbered lines, then, as if they were all its
// live region, moves up over them, erasing each line, and writes them again.
func redrawProgram() int {
	for i := range 30 {
		fmt.Printf("line %02d\r\n", i+1)
	}
	fmt.Print("ready\r\n")
	for range 29 {
		fmt.Print("\x1b[2K\x1b[1A")
	}
	fmt.Print("\x1b[2K\r")
	for i := range 30 {
		fmt.Printf("LINE %02d\r\n", i+1)
	}
	fmt.Print("done\r\n")
	return 0
}

// helperTB is the little of testing.TB that Start needs, for a helper
// process without a test: failures end the process.
type helperTB struct {
	testing.TB
	cleanups []func()
}

func (*helperTB) Helper() {}

func (h *helperTB) Cleanup(f func()) { h.cleanups = append(h.cleanups, f) }

func (*helperTB) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func (h *helperTB) Fatal(args ...any) { h.Fatalf("%s", fmt.Sprint(args...)) }

func (h *helperTB) Skipf(format string, args ...any) { h.Fatalf(format, args...) }

// orphanProgram starts a tmux terminal running sleep, prints the server's
// and the command's pids, and waits to be killed: its cleanups never run.
func orphanProgram() int {
	tm := Start(&helperTB{}, Options{Command: []string{"sleep", "1000"}, Env: []string{"PATH=" + os.Getenv("PATH")}})
	fmt.Printf("%d %d\n", tm.server, tm.PID())
	select {}
}
