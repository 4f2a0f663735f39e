// Package testhook is the test hook both frontends' exported functions
// call first: METALPLUG_TEST_PANIC names exported functions
// (comma-separated) that panic on every call, or, written name@N, on the
// first N calls, so that the tests can show a panic in any of them reaches
// the framework as an error and the process lives. It is read once, at the
// first call into the library; one setting reaches both frontends.
package testhook

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/metalplug/metalplug/plugin/cenv"
)

// Env is the hook's variable.
const Env = "METALPLUG_TEST_PANIC"

// count is how often one export is to panic: always, or left more times.
type count struct {
	always bool
	left   atomic.Int64
}

var hook struct {
	once  sync.Once
	names map[string]*count // nil unless the hook is set: one load per call
}

// parse reads the hook's setting: names, each always or name@N.
func parse(v string) map[string]*count {
	names := map[string]*count{}
	for _, n := range strings.Split(v, ",") {
		n, k, limited := strings.Cut(strings.TrimSpace(n), "@")
		c := &count{always: !limited}
		if limited {
			left, err := strconv.ParseInt(k, 10, 64)
			if err != nil || left < 0 {
				fmt.Fprintf(os.Stderr, "metalplug: %s=%s: %q is not name or name@count; ignored\n", Env, v, n+"@"+k)
				continue
			}
			c.left.Store(left)
		}
		names[n] = c
	}
	return names
}

// Check panics when the hook names the exported function name.
func Check(name string) {
	hook.once.Do(func() {
		if v := cenv.Get(Env); v != "" {
			hook.names = parse(v)
			fmt.Fprintf(os.Stderr, "metalplug: test hook: %s panic (%s)\n", v, Env)
		}
	})
	if hook.names == nil {
		return
	}
	if c := hook.names[name]; c != nil && (c.always || c.left.Add(-1) >= 0) {
		panic("forced panic in " + name + " (" + Env + ")")
	}
}

// Arm sets the hook as the setting v would (for tests in the frontends'
// packages, which cannot set the C environment of their own process
// start) and returns what undoes it.
func Arm(v string) (disarm func()) {
	hook.once.Do(func() {})
	hook.names = parse(v)
	return func() { hook.names = nil }
}
