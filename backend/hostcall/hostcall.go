// Package hostcall runs the host process's own functions from inside a
// program (ir.OpHostCall): jax's Python callbacks (jax.debug.print,
// jax.debug.callback, jax.pure_callback, io_callback), which the frontend
// registers by an ID when it lowers them, and which the drivers call when
// the program reaches them.
//
// There is one runner per process: the PJRT layer sets it when Python
// hands the library its entry point. A program calling a function while
// no runner is set fails, naming what is missing.
package hostcall

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/metalplug/metalplug/backend/ir"
)

// Runner runs function id on args, each an operand's bytes (row-major,
// little-endian, of the types the program gives), and writes each result
// into results, which have exactly the results' sizes. It may be called
// from any goroutine, and must not keep args or results.
type Runner func(id uint64, args, results [][]byte) error

var runner atomic.Pointer[Runner]

// Set makes r the process's runner (nil: none).
func Set(r Runner) {
	if r == nil {
		runner.Store(nil)
		return
	}
	runner.Store(&r)
}

// ErrNoRunner is what Call returns while no runner is set.
var ErrNoRunner = errors.New("the program calls a host function, but nothing in this process registered one " +
	"(jax's callbacks register through the jax_plugins.metalplug module, which jax imports itself: " +
	"is that module from another metalplug installation?)")

// Call runs the function an OpHostCall names: args are its operands after
// the token, results its results after the token.
func Call(in ir.Instr, args, results [][]byte) error {
	if in.Host == nil {
		return fmt.Errorf("host_call without a function id")
	}
	r := runner.Load()
	if r == nil {
		return ErrNoRunner
	}
	if err := (*r)(in.Host.ID, args, results); err != nil {
		return fmt.Errorf("host function %d: %w", in.Host.ID, err)
	}
	return nil
}
