package drivertest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// checkExact builds a program of several results over args, runs it, and
// compares every result byte for byte with want and with what the
// reference interpreter gives: for ops whose results are operand elements
// (sorts, argmax), where a signed zero, a NaN's sign or an int64 past 2^53
// must come through as it is.
func (h *harness) checkExact(t *testing.T, name string, args []tensor, build func(b *ir.Builder, xs []ir.Value) []ir.Value, want [][]byte) {
	t.Helper()
	p := programOver(t, name, args, build)
	got := h.runBytes(t, p, args...)
	in := make([]eval.Tensor, len(args))
	for i, a := range args {
		in[i] = eval.FromBytes(a.T, encodeTensor(a))
	}
	ref, err := eval.Run(p, in)
	if err != nil {
		t.Errorf("%s: the reference interpreter fails where the driver ran: %v", name, err)
	}
	types := p.ResultTypes()
	for r, rt := range types {
		if r < len(want) && want[r] != nil && !bytes.Equal(got[r], want[r]) {
			t.Errorf("%s: result %d (%v) = %s, want %s", name, r, rt, showBytes(rt.DType, got[r]), showBytes(rt.DType, want[r]))
		}
		if err == nil && !bytes.Equal(got[r], ref[r].Bytes()) {
			t.Errorf("%s: result %d (%v) = %s, the reference interpreter %s", name, r, rt, showBytes(rt.DType, got[r]), showBytes(rt.DType, ref[r].Bytes()))
		}
	}
}

// showBytes prints elements as their bits in hex, and integers' values.
func showBytes(d ir.DType, b []byte) string {
	n := d.Size()
	var s []byte
	for k := 0; k+n <= len(b) && k < 64*n; k += n {
		var bits uint64
		for j := n - 1; j >= 0; j-- {
			bits = bits<<8 | uint64(b[k+j])
		}
		switch {
		case d == ir.I64:
			s = fmt.Appendf(s, "%d ", int64(bits))
		case d.IsInt() || d == ir.Bool:
			s = fmt.Appendf(s, "%.0f ", decode(d, b[k:k+n])[0])
		default:
			s = fmt.Appendf(s, "%#x ", bits)
		}
	}
	return "[" + string(bytes.TrimSpace(s)) + "]"
}

// permuteLines applies, along dim, the permutation perm (for each element,
// the position along dim its value comes from) to data of type tt.
func permuteLines(tt ir.TensorType, data []byte, dim int, perm []int) []byte {
	n := tt.DType.Size()
	out := make([]byte, len(data))
	forEachIndex(tt.Shape, func(idx []int) {
		from := append([]int(nil), idx...)
		from[dim] = perm[offset(tt.Shape, idx)]
		copy(out[offset(tt.Shape, idx)*n:], data[offset(tt.Shape, from)*n:][:n])
	})
	return out
}

// stablePerm is, for each line along dim of shape, the stable sort of the
// line's positions by less (insertion sort: plainly stable), as a
// permutation in the form permuteLines takes.
func stablePerm(shape []int, dim int, less func(a, b int) bool) []int {
	perm := make([]int, ir.Shape(shape).Size())
	forEachIndex(shape, func(idx []int) {
		if idx[dim] != 0 {
			return
		}
		at := func(k int) int {
			i := append([]int(nil), idx...)
			i[dim] = k
			return offset(shape, i)
		}
		line := make([]int, shape[dim])
		for k := range line {
			line[k] = k
		}
		sortStable(line, func(a, b int) bool { return less(at(a), at(b)) })
		for k, p := range line {
			perm[at(k)] = p
		}
	})
	return perm
}

// int32s is the bytes of an int32 tensor of these values.
func int32s(vs []int) []byte {
	out := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		out = binary.LittleEndian.AppendUint32(out, uint32(int32(v)))
	}
	return out
}

// int64Bits is the element k of an int64 tensor's bytes.
func int64Bits(b []byte, k int) int64 { return int64(binary.LittleEndian.Uint64(b[8*k:])) }
