package eval

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/hostcall"
	"github.com/metalplug/metalplug/backend/ir"
)

// hostCall runs an OpHostCall through the process's runner, as the host
// driver does: the operands after the token go in as bytes, the results
// after the token come back as bytes.
func hostCall(in ir.Instr, arg func(int) Tensor) ([]Tensor, error) {
	args := make([][]byte, len(in.Args)-1)
	for j := range args {
		args[j] = arg(j + 1).Bytes()
	}
	outs := make([][]byte, len(in.Tuple)-1)
	for j := range outs {
		outs[j] = make([]byte, in.Tuple[j+1].Bytes())
	}
	if err := hostcall.Call(in, args, outs); err != nil {
		return nil, fmt.Errorf("%s: %w", in.Op, err)
	}
	rs := []Tensor{New(ir.TokenType)}
	for j, b := range outs {
		rs = append(rs, FromBytes(in.Tuple[j+1], b))
	}
	return rs, nil
}
