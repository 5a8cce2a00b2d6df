package e2e

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeadCollectorWarnsOnce: telemetry on, and nothing listens at the
// collector's address. The run succeeds, and stderr has one warning that
// names the collector (the exit waits for a bounded flush, not for the
// exporters' retries; the bound itself is checked in the telemetry
// package, against the deadline the exporter is given).
func TestDeadCollectorWarnsOnce(t *testing.T) {
	for _, protocol := range []string{"grpc", "http"} {
		t.Run(protocol, func(t *testing.T) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			endpoint := "http://" + lis.Addr().String()
			lis.Close()
			e := newEnv(t)
			e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"),
				`{"telemetry": {"enabled": true, "otlpEndpoint": "`+endpoint+`", "otlpProtocol": "`+protocol+`"}}`)
			r := e.run("", "run", "-m", "replay:"+quickstart(), "--yolo", "-p", "Create a hello script and run it")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			var warnings []string
			for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
				if strings.Contains(l, "telemetry") {
					warnings = append(warnings, l)
				}
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "the collector at "+endpoint+" could not be reached") {
				t.Errorf("want one warning that the collector at %s could not be reached; stderr:\n%s", endpoint, r.stderr)
			}
		})
	}
}
