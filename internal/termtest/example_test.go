package termtest_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/termtest"
)

// An end-to-end test drives a program on a terminal of its own: agentry's
// interactive session, its binary built as package e2e's TestMain builds
// it, with the fake Gemini server streaming an answer.
func ExampleStart() {
	testAnswer := func(t *testing.T, binary string) {
		srv := fakegemini.New(t)
		srv.Enqueue(termtest.WordStep(200, 50, time.Millisecond))
		tm := termtest.Start(t, termtest.Options{
			Command: []string{binary, "-m", "gemini-2.5-flash"},
			Env: []string{
				"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
				"GEMINI_API_KEY=" + fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL=" + srv.URL,
			},
			Dir:  t.TempDir(),
			Cols: 120, Rows: 40,
		})
		tm.WaitText("Type your message")
		tm.Type("count to 200")
		tm.Keys("Enter")
		tm.WaitText("w0199")
		tm.Keys("C-d") // exit, on the empty prompt
		if e := tm.WaitExit(); e.Code != 0 {
			t.Errorf("exit %+v", e)
		}
	}
	_ = testAnswer
}

// Analyze counts what would make a terminal flicker.
func ExampleAnalyze() {
	out := "line 1\r\nline 2\r\nview" + // two lines and a one-row live region
		"\r\x1b[Kview 2" + // the live region redrawn: fine
		"\x1b[2A\rLINE 1" + // back over a line already written: flagged
		"\x1b[2J" // a clear-screen
	r := termtest.Analyze(termtest.RecordingOf(20, 5, []byte(out)), termtest.AnalyzeOptions{LiveRows: 1})
	fmt.Println("clear-screens:", r.ClearScreens, "erase-lines:", r.EraseLines, "above live region:", r.AboveLive)
	fmt.Println(r.Events[0])
	// Output:
	// clear-screens: 1 erase-lines: 1 above live region: 2
	// above-live at byte 35 (0s), row 1 col 1: "L"
}
