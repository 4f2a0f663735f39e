package sweep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The runner's tests need no TensorFlow: the test binary itself plays the
// worker (TestMain below), speaking the same protocol, and crashes, hangs or
// dies where the test tells it to.

func TestMain(m *testing.M) {
	if os.Getenv("SWEEP_FAKE_WORKER") == "1" {
		fakeWorker()
		return
	}
	os.Exit(m.Run())
}

// fakeWorker reads {"cases": [...]} and "runs" them. Environment:
//
//	SWEEP_FAKE_CRASH        ids that abort the process whenever they run
//	SWEEP_FAKE_HANG         ids that never finish
//	SWEEP_FAKE_CRASH_AFTER  "a>b": b aborts, but only in a process that ran a
//	SWEEP_FAKE_DIE_BETWEEN  an id after whose result the process exits 3,
//	                        unless it was the last case
//	SWEEP_FAKE_CRASH_AFTER_FAILURE  an id whose first call fails and second
//	                        aborts
//	SWEEP_FAKE_NOT_READY    "1": exit 2 before saying ready
//	SWEEP_FAKE_STARTS       a file that gets one line per process
func fakeWorker() {
	if f := os.Getenv("SWEEP_FAKE_STARTS"); f != "" {
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(fh, "start")
			fh.Close()
		}
	}
	if os.Getenv("SWEEP_FAKE_NOT_READY") == "1" {
		fmt.Fprintln(os.Stderr, "fake: cannot load the library")
		os.Exit(2)
	}
	var in struct{ Cases []string }
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		os.Exit(4)
	}
	set := func(name string) map[string]bool {
		m := map[string]bool{}
		for _, s := range strings.Split(os.Getenv(name), ",") {
			if s != "" {
				m[s] = true
			}
		}
		return m
	}
	crash, hang := set("SWEEP_FAKE_CRASH"), set("SWEEP_FAKE_HANG")
	after, victim, _ := strings.Cut(os.Getenv("SWEEP_FAKE_CRASH_AFTER"), ">")
	w := bufio.NewWriter(os.Stdout)
	say := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "%s%s\n", prefix, b)
		w.Flush()
	}
	fmt.Fprintln(w, "some TensorFlow chatter that is not protocol")
	say(map[string]string{"kind": "ready"})
	ran := map[string]bool{}
	for i, id := range in.Cases {
		say(map[string]string{"kind": "start", "id": id})
		if id == os.Getenv("SWEEP_FAKE_CRASH_AFTER_FAILURE") {
			say(map[string]string{"kind": "variant", "id": id, "name": "first"})
			say(map[string]string{"kind": "variant-done", "id": id, "name": "first", "status": "device-error", "detail": "result 1 is nil"})
			say(map[string]string{"kind": "variant", "id": id, "name": "second"})
			os.Exit(134)
		}
		say(map[string]string{"kind": "variant", "id": id, "name": "only"})
		if crash[id] || (id == victim && ran[after]) {
			fmt.Fprintln(os.Stderr, "F0000 00:00:1796056390.481413   24101 fake.cc:228] check failed in", id)
			fmt.Fprintln(os.Stderr, "*** Check failure stack trace: ***")
			fmt.Fprintln(os.Stderr, "    @     0x7f1ae28ce564  absl::LogMessage::SendToLog()")
			os.Exit(134)
		}
		if hang[id] {
			time.Sleep(time.Hour)
		}
		ran[id] = true
		say(map[string]any{"kind": "result", "id": id, "status": "verified", "check": "vs CPU", "max_abs": 0.5, "max_rel": "+Inf",
			"variants": []map[string]any{{"name": "only", "status": "verified", "max_abs": 0.5, "max_rel": "+Inf"}}})
		if id == os.Getenv("SWEEP_FAKE_DIE_BETWEEN") && i < len(in.Cases)-1 {
			os.Exit(3)
		}
	}
	say(map[string]string{"kind": "done"})
}

func fakeRunner(t *testing.T, env ...string) (*runner, *bytes.Buffer, func() int) {
	t.Helper()
	starts := t.TempDir() + "/starts"
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	r := &runner{
		start: func(ctx context.Context) *exec.Cmd {
			cmd := exec.CommandContext(ctx, exe)
			cmd.Env = append(os.Environ(), append([]string{"SWEEP_FAKE_WORKER=1", "SWEEP_FAKE_STARTS=" + starts}, env...)...)
			return cmd
		},
		timeout: 20 * time.Second,
		log:     &log,
	}
	count := func() int {
		b, _ := os.ReadFile(starts)
		return strings.Count(string(b), "start")
	}
	return r, &log, count
}

func ids(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("Op%02d:T=float32", i))
	}
	return out
}

func statuses(r *runner) map[Status][]string {
	m := map[Status][]string{}
	for _, id := range ids(100) {
		if res, ok := r.results[id]; ok {
			m[res.Status] = append(m[res.Status], id)
		}
	}
	return m
}

func TestRunnerAllPass(t *testing.T) {
	r, _, starts := fakeRunner(t)
	if err := r.runAll(ids(12), 1); err != nil {
		t.Fatal(err)
	}
	if got := len(statuses(r)[Verified]); got != 12 {
		t.Fatalf("verified %d of 12: %v", got, statuses(r))
	}
	if starts() != 1 {
		t.Errorf("%d workers for a clean batch, want 1", starts())
	}
	res := r.results["Op03:T=float32"]
	if res.MaxAbs.ptr() == nil || *res.MaxAbs.ptr() != 0.5 || res.MaxRel.ptr() == nil || *res.MaxRel.ptr() < 1e308 {
		t.Errorf("errors not carried: %+v", res)
	}
	if len(res.Variants) != 1 || res.Variants[0].Name != "only" {
		t.Errorf("variants not carried: %+v", res.Variants)
	}
}

// One case aborts its process: it is named, the rest all run, and it takes
// a bounded number of workers (the first, the crasher alone, the rest).
func TestRunnerIsolatesCrash(t *testing.T) {
	r, log, starts := fakeRunner(t, "SWEEP_FAKE_CRASH=Op07:T=float32")
	if err := r.runAll(ids(20), 1); err != nil {
		t.Fatal(err)
	}
	st := statuses(r)
	if len(st[Crash]) != 1 || st[Crash][0] != "Op07:T=float32" {
		t.Fatalf("crash = %v, want [Op07:T=float32]; all %v", st[Crash], st)
	}
	if len(st[Verified]) != 19 {
		t.Fatalf("verified %d, want 19", len(st[Verified]))
	}
	d := r.results["Op07:T=float32"].Detail
	for _, want := range []string{"status 134", `variant "only"`, "fake.cc:228] check failed in Op07"} {
		if !strings.Contains(d, want) {
			t.Errorf("detail %q does not mention %q", d, want)
		}
	}
	if strings.Contains(d, "SendToLog") {
		t.Errorf("detail %q carries the stack trace rather than the fatal line", d)
	}
	if n := starts(); n != 3 {
		t.Errorf("%d workers, want 3 (batch, crasher alone, the rest)", n)
	}
	if !strings.Contains(log.String(), "Op07") {
		t.Errorf("log does not name the crasher:\n%s", log)
	}
}

func TestRunnerTwoCrashersTwoJobs(t *testing.T) {
	r, _, _ := fakeRunner(t, "SWEEP_FAKE_CRASH=Op02:T=float32,Op15:T=float32")
	if err := r.runAll(ids(20), 2); err != nil {
		t.Fatal(err)
	}
	st := statuses(r)
	if strings.Join(st[Crash], " ") != "Op02:T=float32 Op15:T=float32" || len(st[Verified]) != 18 {
		t.Fatalf("statuses %v", st)
	}
}

func TestRunnerLastCaseCrashes(t *testing.T) {
	r, _, _ := fakeRunner(t, "SWEEP_FAKE_CRASH=Op04:T=float32")
	if err := r.runAll(ids(5), 1); err != nil {
		t.Fatal(err)
	}
	if st := statuses(r); len(st[Crash]) != 1 || len(st[Verified]) != 4 {
		t.Fatalf("statuses %v", st)
	}
}

// A case that only crashes after another one ran: alone it passes, so it is
// marked as crashing in a batch, not as a crasher, and the rest still run.
func TestRunnerCrashNeedsContext(t *testing.T) {
	r, _, _ := fakeRunner(t, "SWEEP_FAKE_CRASH_AFTER=Op01:T=float32>Op05:T=float32")
	if err := r.runAll(ids(10), 1); err != nil {
		t.Fatal(err)
	}
	st := statuses(r)
	if len(st[CrashInBatch]) != 1 || st[CrashInBatch][0] != "Op05:T=float32" || len(st[Verified]) != 9 {
		t.Fatalf("statuses %v", st)
	}
	if d := r.results["Op05:T=float32"].Detail; !strings.Contains(d, "alone it ran (verified") {
		t.Errorf("detail %q", d)
	}
}

// A worker that dies between cases names no case: the unfinished ones are
// halved until each half runs, and the death is kept as a problem.
func TestRunnerBisectsDeathBetweenCases(t *testing.T) {
	r, log, starts := fakeRunner(t, "SWEEP_FAKE_DIE_BETWEEN=Op03:T=float32")
	if err := r.runAll(ids(12), 1); err != nil {
		t.Fatal(err)
	}
	if st := statuses(r); len(st[Verified]) != 12 {
		t.Fatalf("statuses %v", st)
	}
	if starts() != 3 {
		t.Errorf("%d workers, want 3 (batch, two halves)", starts())
	}
	if !strings.Contains(log.String(), "between cases") {
		t.Errorf("log:\n%s", log)
	}
	if len(r.problems) != 1 || !strings.Contains(r.problems[0], "exited with status 3 between cases, after Op03:T=float32") {
		t.Errorf("problems %q", r.problems)
	}
}

func TestRunnerHang(t *testing.T) {
	r, _, _ := fakeRunner(t, "SWEEP_FAKE_HANG=Op02:T=float32")
	r.timeout = 2 * time.Second
	if err := r.runAll(ids(4), 1); err != nil {
		t.Fatal(err)
	}
	st := statuses(r)
	if len(st[Hang]) != 1 || st[Hang][0] != "Op02:T=float32" || len(st[Verified]) != 3 {
		t.Fatalf("statuses %v", st)
	}
}

func TestRunnerWorkerThatCannotStart(t *testing.T) {
	r, _, starts := fakeRunner(t, "SWEEP_FAKE_NOT_READY=1")
	err := r.runAll(ids(8), 1)
	if err == nil || !strings.Contains(err.Error(), "cannot load the library") {
		t.Fatalf("err = %v, want the worker's stderr", err)
	}
	if starts() != 1 {
		t.Errorf("%d workers: a worker that cannot start must not be bisected", starts())
	}
}

func TestRunnerEchoesChatterWhenVerbose(t *testing.T) {
	r, log, _ := fakeRunner(t)
	r.echo = log
	if err := r.runAll(ids(2), 1); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "some TensorFlow chatter") {
		t.Errorf("verbose output lacks the worker's own lines:\n%s", log)
	}
}

// A crash after an earlier call of the same case failed: the failure is
// named with the crash, since it is often the cause.
func TestRunnerCrashNamesEarlierFailure(t *testing.T) {
	r, _, _ := fakeRunner(t, "SWEEP_FAKE_CRASH_AFTER_FAILURE=Op01:T=float32")
	if err := r.runAll(ids(3), 1); err != nil {
		t.Fatal(err)
	}
	res := r.results["Op01:T=float32"]
	want := `in variant "second", after "first": device-error: result 1 is nil`
	if res.Status != Crash || !strings.Contains(res.Detail, want) {
		t.Fatalf("%s: %q, want it to contain %q", res.Status, res.Detail, want)
	}
	if got := oneLine(res.Detail); !strings.Contains(got, "result 1 is nil") {
		t.Errorf("the markdown line %q loses the earlier failure", got)
	}
}
