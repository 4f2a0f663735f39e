package host

import (
	"github.com/metalplug/metalplug/backend/hostcall"
	"github.com/metalplug/metalplug/backend/ir"
)

// OpHostCall hands its operands after the token to the process's runner
// (backend/hostcall) and leaves the token result empty. Its work counts
// as heavy: what a host function costs is unknown.
func init() {
	register(opKernel{makeMulti: hostCallKernel, work: func(ir.Instr, []ir.TensorType) int { return 1 << 20 }}, ir.OpHostCall)
}

func hostCallKernel(in ir.Instr, _ []ir.TensorType) (multiKernel, error) {
	return func(outs [][]byte, ins [][]byte) {
		if err := hostcall.Call(in, ins[1:], outs[1:]); err != nil {
			panic(kernelFailure{err}) // runMulti turns it into the execution's error
		}
	}, nil
}
