package fuzzrun

import (
	"fmt"
	"runtime/debug"
	"time"
)

// Watchdog crashes the process, printing every goroutine's stack, unless
// stop is called within d. A fuzz target starts one over the stages before
// Run (a reader, a translation, a lowering), which have no bound of their
// own: Go's fuzzing engine has no timeout per input, so without it a hang
// there stalls the fuzzer silently, while a crash makes the engine save
// the input under testdata/fuzz.
func Watchdog(d time.Duration, what string) (stop func()) {
	timer := time.AfterFunc(d, func() {
		debug.SetTraceback("all")
		panic(fmt.Sprintf("fuzzrun: %s took more than %v: a hang", what, d))
	})
	return func() { timer.Stop() }
}
