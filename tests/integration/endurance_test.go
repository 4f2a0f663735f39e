package integration

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
)

// The bounds a long run must keep after its warm-up (the first tenth of
// its steps, at least 500): resident memory grows by at most rssSlack (the
// Python interpreter's own churn, not the library's), the driver's memory
// in use by at most usedSlack, and neither its cached executables nor the
// frontend's compiles move at all.
const (
	rssSlack  = 64 << 20
	usedSlack = 16 << 20
)

type enduranceSample struct {
	Step     int     `json:"step"`
	Loss     float64 `json:"loss"`
	RSS      int64   `json:"rss"`
	Used     int64   `json:"used_bytes"`
	Cached   int     `json:"cached_executables"`
	Compiles int64   `json:"compiles"`
}

type enduranceRun struct {
	Samples []enduranceSample `json:"samples"`
	Finite  bool              `json:"finite"`
}

type enduranceThread struct {
	Frontend   string   `json:"frontend"`
	Seed       int      `json:"seed"`
	Loss       float64  `json:"loss"`
	Alone      float64  `json:"alone"`
	AskedWrong int      `json:"asked_wrong"`
	Raised     int      `json:"raised"`
	Errors     []string `json:"errors"`
}

// TestEndurance: a Keras and a flax/optax training of
// METALPLUG_ENDURANCE_STEPS steps each, and both frameworks in one process
// from four threads at once (a tenth of the steps each), on the installed
// plugin in the venv METALPLUG_ENDURANCE_PYTHON names. `go tool mage
// endurance` makes that venv and runs this once per driver; nothing else
// runs it (it takes too long for every push). Pass: after warm-up the
// bounds above hold; every loss is finite; a fresh process's run of the
// first sample's steps gives the long run's loss there, bit for bit; each
// thread's result equals its workload's run alone, and each thread got an
// exception for every wrong op it asked for (none lost to another thread).
func TestEndurance(t *testing.T) {
	py := os.Getenv("METALPLUG_ENDURANCE_PYTHON")
	if py == "" {
		t.Skip("METALPLUG_ENDURANCE_PYTHON is not set: run `go tool mage endurance`")
	}
	steps, err := strconv.Atoi(envOr("METALPLUG_ENDURANCE_STEPS", "10000"))
	if err != nil || steps < 100 {
		t.Fatalf("METALPLUG_ENDURANCE_STEPS=%q: want a number of steps, at least 100", os.Getenv("METALPLUG_ENDURANCE_STEPS"))
	}
	every := steps / 20
	env := []string{ask, "METALPLUG_TEST_LIB=", "PYTHONPATH=", "JAX_PLATFORMS=metalplug,cpu"}
	report := map[string]any{"steps": steps}
	for _, mode := range []string{"keras", "flax"} {
		var long, fresh enduranceRun
		if stderr, err := scriptArgs(t, py, "endurance.py", []string{mode, strconv.Itoa(steps), strconv.Itoa(every)}, env, &long); err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, stderr)
		}
		if stderr, err := scriptArgs(t, py, "endurance.py", []string{mode, strconv.Itoa(every), strconv.Itoa(every)}, env, &fresh); err != nil {
			t.Fatalf("%s, fresh run: %v\n%s", mode, err, stderr)
		}
		report[mode] = long
		for _, e := range judgeLongRun(long, steps) {
			t.Errorf("%s: %s", mode, e)
		}
		if len(fresh.Samples) == 0 || len(long.Samples) == 0 || fresh.Samples[0].Loss != long.Samples[0].Loss {
			t.Errorf("%s: a fresh run's loss after %d steps differs from the long run's: %+v vs %+v", mode, every, fresh.Samples, long.Samples[:min(1, len(long.Samples))])
		}
		if n := len(long.Samples); n > 0 {
			w, l := long.Samples[warmIndex(long.Samples, steps)], long.Samples[n-1]
			t.Logf("%s: steps %d -> %d: loss %.4g -> %.4g, resident %.1f -> %.1f MiB, driver memory %.1f -> %.1f MiB, cached executables %d -> %d, compiles %d -> %d",
				mode, w.Step, l.Step, w.Loss, l.Loss, mib(w.RSS), mib(l.RSS), mib(w.Used), mib(l.Used), w.Cached, l.Cached, w.Compiles, l.Compiles)
		}
	}
	var threads struct {
		Threads []enduranceThread `json:"threads"`
		After   enduranceSample   `json:"after"`
	}
	tsteps := max(steps/10, 100)
	if stderr, err := scriptArgs(t, py, "endurance.py", []string{"threads", strconv.Itoa(tsteps), strconv.Itoa(tsteps)}, env, &threads); err != nil {
		t.Fatalf("threads: %v\n%s", err, stderr)
	}
	report["threads"] = threads
	if len(threads.Threads) != 4 {
		t.Fatalf("threads: %d results, want 4", len(threads.Threads))
	}
	for _, th := range threads.Threads {
		name := fmt.Sprintf("%s thread (seed %d)", th.Frontend, th.Seed)
		switch {
		case len(th.Errors) > 0:
			t.Errorf("%s: %v", name, th.Errors)
		case th.AskedWrong == 0 || th.Raised != th.AskedWrong:
			t.Errorf("%s: asked for %d wrong ops, got %d exceptions", name, th.AskedWrong, th.Raised)
		case math.IsNaN(th.Loss) || math.IsInf(th.Loss, 0) || th.Loss != th.Alone:
			t.Errorf("%s: loss %v with the others running, %v alone", name, th.Loss, th.Alone)
		default:
			t.Logf("%s: %d steps, loss %.4g as alone, %d of %d wrong ops raised", name, tsteps, th.Loss, th.Raised, th.AskedWrong)
		}
	}
	if path := os.Getenv("METALPLUG_ENDURANCE_REPORT"); path != "" {
		js, _ := json.MarshalIndent(report, "", " ")
		if err := os.WriteFile(path, js, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// warmIndex is the first sample at or past the warm-up.
func warmIndex(s []enduranceSample, steps int) int {
	warm := max(500, steps/10)
	for i, x := range s {
		if x.Step >= warm {
			return i
		}
	}
	return len(s) - 1
}

// judgeLongRun says what a long run broke of the bounds.
func judgeLongRun(r enduranceRun, steps int) []string {
	if len(r.Samples) < 2 || r.Samples[len(r.Samples)-1].Step != steps {
		return []string{fmt.Sprintf("%d samples, the last at step %v; want the run to reach step %d", len(r.Samples), r.Samples, steps)}
	}
	var bad []string
	if !r.Finite {
		bad = append(bad, "a loss is not finite")
	}
	w := r.Samples[warmIndex(r.Samples, steps)]
	for _, s := range r.Samples {
		if s.Step <= w.Step {
			continue
		}
		if s.RSS-w.RSS > rssSlack {
			bad = append(bad, fmt.Sprintf("step %d: resident memory %.1f MiB, %.1f MiB above step %d's", s.Step, mib(s.RSS), mib(s.RSS-w.RSS), w.Step))
		}
		if s.Used < 0 || s.Used-w.Used > usedSlack {
			bad = append(bad, fmt.Sprintf("step %d: driver memory in use %.1f MiB, %.1f MiB above step %d's", s.Step, mib(s.Used), mib(s.Used-w.Used), w.Step))
		}
		if s.Cached != w.Cached || s.Compiles != w.Compiles {
			bad = append(bad, fmt.Sprintf("step %d: %d cached executables and %d compiles, %d and %d at step %d", s.Step, s.Cached, s.Compiles, w.Cached, w.Compiles, w.Step))
		}
	}
	return bad
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// TestEnduranceJudge: the bounds catch what they are for, on made-up
// curves (a leak, a cache that grows, a NaN, a run cut short) and pass a
// flat one.
func TestEnduranceJudge(t *testing.T) {
	flat := func() enduranceRun {
		r := enduranceRun{Finite: true}
		for s := 500; s <= 10000; s += 500 {
			r.Samples = append(r.Samples, enduranceSample{Step: s, Loss: 1, RSS: 300 << 20, Used: 10 << 20, Cached: 7, Compiles: 3})
		}
		return r
	}
	if bad := judgeLongRun(flat(), 10000); len(bad) != 0 {
		t.Errorf("a flat run judged bad: %v", bad)
	}
	for name, spoil := range map[string]func(r *enduranceRun){
		"resident memory grows": func(r *enduranceRun) { r.Samples[19].RSS += rssSlack + 1 },
		"driver memory grows":   func(r *enduranceRun) { r.Samples[15].Used += usedSlack + 1 },
		"a cache grows":         func(r *enduranceRun) { r.Samples[10].Cached++ },
		"a recompile":           func(r *enduranceRun) { r.Samples[19].Compiles++ },
		"a NaN":                 func(r *enduranceRun) { r.Finite = false },
		"cut short":             func(r *enduranceRun) { r.Samples = r.Samples[:10] },
	} {
		r := flat()
		spoil(&r)
		if bad := judgeLongRun(r, 10000); len(bad) == 0 {
			t.Errorf("%s: judged good", name)
		}
	}
}
