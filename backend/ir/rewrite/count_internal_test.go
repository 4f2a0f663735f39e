package rewrite

import (
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// TestCountAgainstStepping checks count's closed forms against stepping
// the counter one iteration at a time, over every start and bound of
// int8 and uint8 (a third of them, in steps of 3), steps from -5 to 5,
// and every direction: where a step would leave the dtype's range (the
// counter wraps) count must refuse, otherwise give the stepped count.
func TestCountAgainstStepping(t *testing.T) {
	dirs := []ir.CompareDir{ir.CmpEQ, ir.CmpNE, ir.CmpLT, ir.CmpLE, ir.CmpGT, ir.CmpGE}
	checked, known := 0, 0
	for _, d := range []ir.DType{ir.I8, ir.U8} {
		lo, hi, _ := d.IntRange()
		for k0 := lo; k0 <= hi; k0 += 3 {
			for n := lo; n <= hi; n += 3 {
				for step := int64(-5); step <= 5; step++ {
					for _, dir := range dirs {
						want, wantOK := stepped(dir, k0, n, step, lo, hi)
						got, ok := count(d, dir, k0, n, step)
						checked++
						if ok {
							known++
						}
						if ok != wantOK || got != want {
							t.Fatalf("%v: k from %d by %d while k %v %d: count = %d, %v; stepping gives %d, %v",
								d, k0, step, dir, n, got, ok, want, wantOK)
						}
					}
				}
			}
		}
	}
	if known < checked/4 {
		t.Errorf("only %d of %d loops known: the check checks little", known, checked)
	}
}

// stepped runs the loop: the count, or false when the counter leaves
// [lo, hi] (wraps) or the loop has not ended after more steps than the
// range has values (it never does).
func stepped(dir ir.CompareDir, k, n, step, lo, hi int64) (int, bool) {
	for t := 0; t <= int(hi-lo)+1; t++ {
		if !ir.Compare(dir, k, n) {
			return t, true
		}
		k += step
		if k < lo || k > hi {
			return 0, false
		}
	}
	return 0, false
}

func TestFolder(t *testing.T) {
	b := ir.NewBuilder()
	x := b.Parameter(ir.TensorType{DType: ir.I32})
	c := b.Scalar(ir.I32, 7)
	wide := b.Convert(b.Scalar(ir.I64, 1<<32+5), ir.I32) // wraps to 5
	sum := b.Binary(ir.OpAdd, c, wide)
	vec := b.BroadcastInDim(sum, ir.Shape{3}, nil)
	neg := b.Unary(ir.OpNeg, b.Reshape(b.Slice(vec, []int{0}, []int{1}, []int{1}), nil))
	mixed := b.Constant(ir.TensorType{DType: ir.I32, Shape: ir.Shape{2}}, []byte{1, 0, 0, 0, 2, 0, 0, 0})
	u := b.Binary(ir.OpSub, b.Scalar(ir.U32, 1), b.Scalar(ir.U32, 2)) // wraps to 2^32-1
	big := b.Binary(ir.OpMul, b.Scalar(ir.I32, 1<<20), b.Scalar(ir.I32, 1<<12))
	fromFloat := b.Convert(b.Scalar(ir.F32, 3), ir.I32)
	withInput := b.Binary(ir.OpAdd, x, c)
	p, err := b.Build(neg, mixed, u, big, fromFloat, withInput, b.Binary(ir.OpMax, c, wide), b.Binary(ir.OpMin, c, wide))
	if err != nil {
		t.Fatal(err)
	}
	f := newFolder(p.Instrs)
	want := map[ir.Value]int64{c: 7, wide: 5, sum: 12, vec: 12, u: 1<<32 - 1, big: 0, p.Results[6]: 7, p.Results[7]: 5}
	for v, w := range want {
		if got, ok := f.scalar(v); !ok || got != w {
			t.Errorf("%%%d (%s) folds to %d, %v; want %d", v, p.Instrs[v].Op, got, ok, w)
		}
	}
	// Not folded: a slice (not an op the folder knows), a constant of two
	// values, a float, anything of an input.
	for _, v := range []ir.Value{neg, mixed, fromFloat, withInput, x} {
		if got, ok := f.scalar(v); ok {
			t.Errorf("%%%d (%s) folds to %d", v, p.Instrs[v].Op, got)
		}
	}
}
