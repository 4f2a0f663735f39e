package sweep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// prefix marks the worker's protocol lines on its stdout; everything else
// there is TensorFlow's chatter or, when verbose, text for a person.
const prefix = "SWEEP "

// The worker's protocol, one JSON object per line:
//
//	{"kind":"ready"}                       the library loaded, cases follow
//	{"kind":"start","id":ID}               before a case
//	{"kind":"variant","id":ID,"name":N}    before each call within it
//	{"kind":"variant-done","id":ID,"name":N,"status":S,"detail":D}
//	                                       after each call
//	{"kind":"result","id":ID,...}          after it (see result)
//	{"kind":"done"}                        all cases ran
//
// The "start" and "variant" lines are flushed before the case runs, so when
// the process dies the runner knows which case, and which call, it died in.

// num is a float that may be missing (null) or written as a string, which is
// how the worker spells infinities and NaN (JSON has neither).
type num struct {
	v  float64
	ok bool
}

func (n *num) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		*n = num{}
		return nil
	}
	if unq, err := strconv.Unquote(s); err == nil {
		s = unq
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	*n = num{v, true}
	return nil
}

func (n num) ptr() *float64 {
	if !n.ok {
		return nil
	}
	v := n.v
	return &v
}

type wireVariant struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Check  string `json:"check"`
	Detail string `json:"detail"`
	MaxAbs num    `json:"max_abs"`
	MaxRel num    `json:"max_rel"`
}

// result is one case's outcome as the worker reports it, or as the runner
// makes it up for a case that killed its worker.
type result struct {
	ID       string
	Status   Status
	Check    string
	Detail   string
	MaxAbs   num
	MaxRel   num
	Variants []Variant
}

func (r *result) UnmarshalJSON(b []byte) error {
	var w struct {
		ID       string        `json:"id"`
		Status   Status        `json:"status"`
		Check    string        `json:"check"`
		Detail   string        `json:"detail"`
		MaxAbs   num           `json:"max_abs"`
		MaxRel   num           `json:"max_rel"`
		Variants []wireVariant `json:"variants"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = result{ID: w.ID, Status: w.Status, Check: w.Check, Detail: w.Detail, MaxAbs: w.MaxAbs, MaxRel: w.MaxRel}
	for _, v := range w.Variants {
		r.Variants = append(r.Variants, Variant{Name: v.Name, Status: v.Status, Check: v.Check, Detail: v.Detail,
			MaxAbs: v.MaxAbs.ptr(), MaxRel: v.MaxRel.ptr()})
	}
	return nil
}

// runner runs cases in worker processes and survives their deaths.
type runner struct {
	// start makes a worker command in --run mode; the runner gives it the
	// case ids on stdin. The context kills it.
	start   func(ctx context.Context) *exec.Cmd
	timeout time.Duration // without a line from the worker, it is hung
	log     io.Writer     // progress and deaths
	echo    io.Writer     // the workers' other output; nil drops it

	mu        sync.Mutex
	results   map[string]result
	problems  []string
	processes int // workers started, for tests and the log
}

// batch is what one worker process did.
type batch struct {
	results  map[string]result
	ready    bool     // it loaded the library and began
	done     bool     // it said every case ran
	inflight string   // the case it had started and not finished
	variant  string   // the call within it
	earlier  []string // calls of the in-flight case that failed before it
	died     string   // how it ended, when it did not finish: "" if it did
	hung     bool     // killed for making no progress
	stderr   string   // the end of its stderr
}

// runAll runs ids in jobs groups at once and keeps every result in
// r.results. An error means workers cannot run at all (the library does not
// load, say); a worker that dies running a case is not an error.
func (r *runner) runAll(ids []string, jobs int) error {
	r.results = map[string]result{}
	if len(ids) == 0 {
		return nil
	}
	// Workers' stderr is copied by exec's goroutines while the runner
	// writes progress: one lock for both, so lines do not interleave.
	if r.log != nil {
		s := &syncWriter{w: r.log}
		if r.echo == r.log {
			r.echo = s
		}
		r.log = s
	}
	if r.echo != nil {
		if _, ok := r.echo.(*syncWriter); !ok {
			r.echo = &syncWriter{w: r.echo}
		}
	}
	jobs = max(1, min(jobs, len(ids)))
	errs := make(chan error, jobs)
	per := (len(ids) + jobs - 1) / jobs
	n := 0
	for i := 0; i < len(ids); i += per {
		chunk := ids[i:min(i+per, len(ids))]
		n++
		go func() { errs <- r.run(chunk) }()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// run runs ids in one worker. When the worker dies, the case it was running
// is tried alone: if that kills a worker too, the case is named the crasher;
// if not, it needed the cases before it, and is marked so. The cases after it
// then run in a new worker, and so on. When the worker died between cases
// (no case was running), the unfinished cases are halved and each half run
// the same way, which isolates a crasher by bisection.
func (r *runner) run(ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	b, err := r.runBatch(ids)
	if err != nil {
		return err
	}
	r.record(b.results)
	if b.died == "" {
		return nil
	}
	var unfinished []string
	for _, id := range ids {
		if _, ok := b.results[id]; !ok {
			unfinished = append(unfinished, id)
		}
	}
	where := "between cases"
	if b.inflight != "" {
		where = "running " + b.inflight
	}
	r.logf("sweep: a worker %s %s, with %d of its %d cases unfinished", b.died, where, len(unfinished), len(ids))
	switch {
	case len(unfinished) == 0:
		r.problem(fmt.Sprintf("a worker %s after finishing all its cases (%s ... %s)", b.died, ids[0], ids[len(ids)-1]))
		return nil
	case len(ids) == 1:
		// It ran alone: nothing else can be to blame.
		r.fail(ids[0], b)
		return nil
	case b.inflight != "":
		alone, err := r.runBatch([]string{b.inflight})
		if err != nil {
			return err
		}
		if alone.died != "" {
			r.fail(b.inflight, alone)
		} else {
			res := alone.results[b.inflight]
			res.Detail = fmt.Sprintf("a worker %s while running it after other cases, but alone it ran (%s%s)",
				b.died, res.Status, prefixed(": ", res.Detail))
			res.Status = CrashInBatch
			r.record(map[string]result{b.inflight: res})
		}
		return r.run(without(unfinished, b.inflight))
	default:
		// Nothing was running, so no case can be named; the death itself is
		// kept, since a process that dies between cases is a bug too (a
		// kernel that corrupts memory the next allocation trips over).
		last := "no case"
		for _, id := range ids {
			if _, ok := b.results[id]; ok {
				last = id
			} else {
				break
			}
		}
		r.problem(fmt.Sprintf("a worker %s between cases, after %s; the %d cases after it ran again in halves", b.died, last, len(unfinished)))
		h := len(unfinished) / 2
		if err := r.run(unfinished[:h]); err != nil {
			return err
		}
		return r.run(unfinished[h:])
	}
}

// fail records id as the case that kills its worker.
func (r *runner) fail(id string, b *batch) {
	st := Crash
	if b.hung {
		st = Hang
	}
	detail := "the worker " + b.died
	if b.inflight == id && b.variant != "" {
		detail += fmt.Sprintf(" in variant %q", b.variant)
	}
	if b.inflight == id && len(b.earlier) > 0 {
		// Often the cause: a call that failed and left the device broken.
		detail += ", after " + strings.Join(b.earlier, "; ")
	}
	if s := crashLines(b.stderr); s != "" {
		detail += " | stderr: " + s
	}
	r.logf("sweep: %s: %s", id, detail)
	r.record(map[string]result{id: {ID: id, Status: st, Check: "-", Detail: detail}})
}

// runBatch runs one worker over ids. It returns an error only when the worker
// died before it was ready: then no case can run.
func (r *runner) runBatch(ids []string) (*batch, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := r.start(ctx)
	in, err := json.Marshal(map[string][]string{"cases": ids})
	if err != nil {
		return nil, err
	}
	cmd.Stdin = bytes.NewReader(in)
	stderr := &tailWriter{max: 16 << 10, echo: r.echo}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// A grandchild holding the pipes must not keep Wait from returning.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("sweep: starting the worker: %w", err)
	}
	r.mu.Lock()
	r.processes++
	r.mu.Unlock()

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20) // a verbose case prints whole tensors
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()

	b := &batch{results: map[string]result{}}
	timer := time.NewTimer(r.timeout)
	defer timer.Stop()
	for open := true; open; {
		select {
		case line, ok := <-lines:
			if !ok {
				open = false
				break
			}
			timer.Reset(r.timeout)
			r.handle(b, line)
		case <-timer.C:
			// No word from the worker for too long: kill it, and keep
			// reading until its stdout closes.
			b.hung = true
			cancel()
		}
	}
	werr := cmd.Wait()
	b.stderr = stderr.String()
	switch {
	case b.hung:
		b.died = fmt.Sprintf("made no progress for %s and was killed", r.timeout)
	case werr != nil:
		b.died = describeExit(werr)
	case !b.done:
		b.died = "exited before saying it had finished"
	}
	if b.died != "" && !b.ready {
		return nil, fmt.Errorf("sweep: the worker %s before running any case:\n%s", b.died, tail(b.stderr, 4000))
	}
	return b, nil
}

func (r *runner) handle(b *batch, line string) {
	rest, ok := strings.CutPrefix(line, prefix)
	if !ok {
		if r.echo != nil {
			fmt.Fprintln(r.echo, line)
		}
		return
	}
	var m struct {
		Kind   string `json:"kind"`
		ID     string `json:"id"`
		Name   string `json:"name"`
		Status Status `json:"status"`
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal([]byte(rest), &m); err != nil {
		r.logf("sweep: unreadable worker line %q: %v", tail(rest, 200), err)
		return
	}
	switch m.Kind {
	case "ready":
		b.ready = true
	case "start":
		b.inflight, b.variant, b.earlier = m.ID, "", nil
	case "variant":
		b.variant = m.Name
	case "variant-done":
		if m.Status != Verified {
			b.earlier = append(b.earlier, fmt.Sprintf("%q: %s: %s", m.Name, m.Status, m.Detail))
		}
	case "result":
		var res result
		if err := json.Unmarshal([]byte(rest), &res); err != nil {
			r.logf("sweep: unreadable result for %s: %v", m.ID, err)
			return
		}
		b.results[res.ID] = res
		b.inflight, b.variant = "", ""
	case "done":
		b.done = true
	}
}

func (r *runner) record(results map[string]result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, res := range results {
		r.results[id] = res
	}
}

func (r *runner) problem(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, s)
}

func (r *runner) logf(format string, args ...any) {
	if r.log != nil {
		fmt.Fprintf(r.log, format+"\n", args...)
	}
}

// describeExit says how a worker ended: "was killed by signal: aborted",
// "exited with status 1".
func describeExit(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		s := ee.ProcessState.String()
		if strings.HasPrefix(s, "signal: ") {
			return "was killed by " + s
		}
		return "exited with " + strings.TrimPrefix(s, "exit ")
	}
	return "failed: " + err.Error()
}

func without(ids []string, drop string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if id != drop {
			out = append(out, id)
		}
	}
	return out
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// fatalLine matches what a dying process says about why: absl's FATAL and
// ERROR lines (TensorFlow's CHECK failures), Go's panics and fatal errors,
// Python's fatal errors.
var fatalLine = regexp.MustCompile(`^(F\d{4} |E\d{4} |panic: |fatal error: |Fatal Python error|SIGSEGV|SIGABRT)`)

// crashLines picks, from a dead worker's stderr, the lines that say why it
// died, or else its last lines.
func crashLines(stderr string) string {
	var picked []string
	for _, l := range strings.Split(stderr, "\n") {
		if fatalLine.MatchString(strings.TrimSpace(l)) {
			picked = append(picked, strings.TrimSpace(l))
		}
	}
	if len(picked) == 0 {
		return lastLines(stderr, 6)
	}
	if len(picked) > 3 {
		picked = picked[len(picked)-3:]
	}
	return strings.Join(picked, " / ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, " / "))
}

// tailWriter keeps the last max bytes written to it, and copies them to echo.
type tailWriter struct {
	mu   sync.Mutex
	buf  []byte
	max  int
	echo io.Writer
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.echo != nil {
		t.echo.Write(p)
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// syncWriter serialises writes from several goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
