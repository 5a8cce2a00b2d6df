//go:build unix && !linux

package ide

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// defaultProcesses asks ps(1), as gemini-cli does, on Unix systems without
// a /proc that holds command lines (macOS, the BSDs).
func defaultProcesses() ProcessLookup {
	return func(pid int) (Process, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "ps", "-o", "ppid=,command=", "-p", strconv.Itoa(pid)).Output()
		if err != nil {
			return Process{}, fmt.Errorf("ide: ps for process %d: %w", pid, err)
		}
		line := strings.TrimSpace(string(out))
		ppidText, command, _ := strings.Cut(line, " ")
		ppid, err := strconv.Atoi(ppidText)
		if err != nil {
			return Process{}, fmt.Errorf("ide: ps for process %d: %q", pid, line)
		}
		return Process{PID: pid, PPID: ppid, Command: strings.TrimSpace(command)}, nil
	}
}
