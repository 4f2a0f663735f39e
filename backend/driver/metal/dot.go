package metal

import (
	"slices"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/ir"
)

func init() { registerLowering(lowerDot, ir.OpDotGeneral) }

// maxIntDotElements bounds the broadcast product an integer dot_general
// materializes; beyond it the program runs on the CPU.
const maxIntDotElements = 1 << 27

// lowerDot brings both operands to [batch, rows, contracted] and
// [batch, contracted, columns] with one transpose and one reshape each, then
// multiplies. Floats use MPSGraph's matrix multiplication (half types in
// float32, like the host driver). Integers multiply-and-sum exactly with
// wrap-around, which MPSGraph's matmul (a float kernel) would not.
func lowerDot(l *lowering, in ir.Instr, args []val) (tensor, error) {
	dd := in.Dot
	tx, ty := args[0].typ, args[1].typ
	lFree := freeDims(tx.Shape.Rank(), dd.LhsBatch, dd.LhsContract)
	rFree := freeDims(ty.Shape.Rank(), dd.RhsBatch, dd.RhsContract)
	size := func(s ir.Shape, dims []int) int {
		n := 1
		for _, d := range dims {
			n *= s[d]
		}
		return n
	}
	B := size(tx.Shape, dd.LhsBatch)
	M, K := size(tx.Shape, lFree), size(tx.Shape, dd.LhsContract)
	N := size(ty.Shape, rFree)
	x := l.transpose(args[0].t, slices.Concat(dd.LhsBatch, lFree, dd.LhsContract))
	y := l.transpose(args[1].t, slices.Concat(dd.RhsBatch, dd.RhsContract, rFree))
	var out tensor
	if in.Type.DType.IsFloat() {
		x = l.reshape(x, []int{B, M, K})
		y = l.reshape(y, []int{B, K, N})
		out = l.matmul(x, y)
	} else {
		if B*M*K*N > maxIntDotElements {
			return tensor{}, fallback(in.Op, "integer dot of %d products is too large to broadcast", B*M*K*N)
		}
		// Narrow types multiply and sum in int32 and wrap back; uint32's
		// products and sums are its bits as int32 (equal modulo 2^32).
		d := in.Type.DType
		x, y = l.widen(x, d), l.widen(y, d)
		switch {
		case d == ir.U32 && !l.g.Has(gpu.OpReinterpretCast):
			return tensor{}, fallback(in.Op, "uint32 dot products sum its bits as int32, which needs reinterpretCast (macOS 13.2)")
		case d == ir.U32:
			x, y = l.reinterpret(x, i32), l.reinterpret(y, i32)
		case d == ir.I64 && !l.g.Accepts(gpu.OpReductionSum, gpu.Int64):
			return tensor{}, fallback(in.Op, "int64 dot products sum in int64, which MPSGraph reduces from macOS 13.3")
		}
		x = l.reshape(x, []int{B, M, K, 1})
		y = l.reshape(y, []int{B, 1, K, N})
		out = l.reduceSum(l.mul(x, y), []int{2})
		switch {
		case isNarrow(d):
			out = l.narrow(out, d)
		case d == ir.U32:
			out = l.reinterpret(out, gpu.UInt32)
		}
	}
	return l.toShape(out, in.Type), nil
}

// freeDims are the dims of a rank-r operand that are neither batch nor
// contracted, in order.
func freeDims(r int, batch, contract []int) []int {
	var out []int
	for i := range r {
		if !slices.Contains(batch, i) && !slices.Contains(contract, i) {
			out = append(out, i)
		}
	}
	return out
}
