package tasks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/metalplug/metalplug/setup/macreport"
)

// goTestJSON runs `go test -json args` with env added, keeps the events in
// the file raw (CI uploads them beside the report), prints each top-level
// test's result as it ends, and parses the run. A failing go test is not an
// error here: the run says what failed. An error is go not running at all,
// or printing nothing.
func goTestJSON(logf Logf, raw string, env []string, args ...string) (*macreport.Run, error) {
	if err := os.MkdirAll(filepath.Dir(raw), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(raw)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out, stderr bytes.Buffer
	cmd := exec.Command("go", append([]string{"test", "-json"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = io.MultiWriter(f, &out, &progress{logf: logf})
	cmd.Stderr = &stderr // after the events in raw: two writers at once would cut lines
	runErr := cmd.Run()
	if _, err := f.Write(stderr.Bytes()); err != nil {
		return nil, err
	}
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		return nil, fmt.Errorf("go test %s: %w", strings.Join(args, " "), runErr)
	}
	if out.Len() == 0 && stderr.Len() == 0 {
		return nil, fmt.Errorf("go test %s printed nothing (%v)", strings.Join(args, " "), runErr)
	}
	// What go printed on stderr (a toolchain's complaint) is not JSON: the
	// parser keeps it as the run's own output.
	return macreport.ParseTestJSON(io.MultiReader(&out, &stderr))
}

// progress logs each top-level test's result and the package's, from the
// events as go test prints them: a run of the whole suite takes minutes.
type progress struct {
	logf Logf
	line []byte
}

func (p *progress) Write(b []byte) (int, error) {
	p.line = append(p.line, b...)
	for {
		i := bytes.IndexByte(p.line, '\n')
		if i < 0 {
			return len(b), nil
		}
		var e macreport.Event
		if json.Unmarshal(p.line[:i], &e) == nil && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") && !strings.Contains(e.Test, "/") {
			name := e.Test
			if name == "" {
				name = "the package"
			}
			p.logf("  %s %s (%.1fs)", e.Action, name, e.Elapsed)
		}
		p.line = p.line[i+1:]
	}
}
