package host

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/ir"
)

// TestReduceKeepingInnerDimIsAccurate: float32 sums that keep the innermost
// dim (the per-channel sums of NHWC batch norm and of bias gradients, over
// N*H*W rows) must stay within a few roundings of the float64 sum, as
// TensorFlow's CPU does, rather than drifting like a running sum over
// thousands of rows. The data have a mean far from 0, as activations do,
// which is where a running sum loses the most. Max over the same walk checks
// that every row lands in its output.
func TestReduceKeepingInnerDimIsAccurate(t *testing.T) {
	d := New(Options{})
	r := rand.New(rand.NewPCG(9, 10))
	for _, c := range []struct {
		shape ir.Shape
		axes  []int
	}{
		{ir.Shape{4, 48, 48, 32}, []int{0, 1, 2}}, // bn_Conv1 of MobileNetV2 at 96x96, batch 4
		{ir.Shape{9216, 3}, []int{0}},
		{ir.Shape{3, 700, 5, 24}, []int{1}},    // a kept dim outside the reduced one
		{ir.Shape{6, 40, 50, 16}, []int{0, 2}}, // reduced, kept, reduced, kept
		{ir.Shape{2, 17, 8}, []int{0, 1}},      // a leaf and a bit
		{ir.Shape{5, 7, 9}, []int{1}},          // fewer rows than a leaf
	} {
		x := make([]float32, c.shape.Size())
		for i := range x {
			x[i] = float32(3 + r.NormFloat64())
		}
		if c.shape.Size() > 0 {
			x[len(x)/3] = float32(math.Inf(1)) // a max only this row can give
		}
		kept := ir.Shape{}
		for dim, n := range c.shape {
			reduced := false
			for _, a := range c.axes {
				reduced = reduced || a == dim
			}
			if !reduced {
				kept = append(kept, n)
			}
		}
		wantSum, wantAbs := make([]float64, kept.Size()), make([]float64, kept.Size())
		wantMax := make([]float32, kept.Size())
		for i := range wantMax {
			wantMax[i] = float32(math.Inf(-1))
		}
		strides := c.shape.Strides()
		for i, v := range x {
			o, stride := 0, 1
			for dim := len(c.shape) - 1; dim >= 0; dim-- {
				reduced := false
				for _, a := range c.axes {
					reduced = reduced || a == dim
				}
				if !reduced {
					o += (i / strides[dim] % c.shape[dim]) * stride
					stride *= c.shape[dim]
				}
			}
			if !math.IsInf(float64(v), 0) {
				wantSum[o] += float64(v)
				wantAbs[o] += math.Abs(float64(v))
			}
			wantMax[o] = max(wantMax[o], v)
		}
		for _, kind := range []ir.ReduceKind{ir.ReduceSum, ir.ReduceMax} {
			b := ir.NewBuilder()
			p, err := b.Build(b.Reduce(b.Parameter(ir.TensorType{DType: ir.F32, Shape: c.shape}), kind, c.axes))
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float32, kept.Size())
			runOne(t, d, p, ptrs(&x[0]), unsafe.Pointer(&got[0]))
			for i, g := range got {
				if kind == ir.ReduceMax {
					if g != wantMax[i] {
						t.Fatalf("max of %v over %v: element %d = %v, want %v", c.shape, c.axes, i, g, wantMax[i])
					}
					continue
				}
				if math.IsInf(float64(g), 1) {
					continue
				}
				// 4 float32 roundings of the sum of magnitudes; a running sum
				// of the 9216 rows is off by more than 10.
				if e := math.Abs(float64(g) - wantSum[i]); e > 4*0x1p-24*wantAbs[i] {
					t.Fatalf("sum of %v over %v: element %d = %v, want %v (error %.3g of the magnitudes' sum, over 4 roundings)",
						c.shape, c.axes, i, g, wantSum[i], e/wantAbs[i]/0x1p-24)
				}
			}
		}
	}
}

// TestReduceOverFewRowsIsPairwise: a sum over an outer dim of only a few
// rows (a batch of 16, say) is pairwise too, from leaves of cascadeLeaf
// rows: TensorFlow's CPU is that accurate there, and a running sum of 16
// rows is not. The data make the order visible: 2^24 in the first row, then
// ones, which a running float32 sum already holding 2^24 rounds away.
func TestReduceOverFewRowsIsPairwise(t *testing.T) {
	d := New(Options{})
	const rows, n = 16, 5
	x := make([]float32, rows*n)
	for i := range x {
		x[i] = 1
	}
	for j := range n {
		x[j] = 1 << 24
	}
	b := ir.NewBuilder()
	p, err := b.Build(b.Reduce(b.Parameter(ir.TensorType{DType: ir.F32, Shape: ir.Shape{rows, n}}), ir.ReduceSum, []int{0}))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n)
	runOne(t, d, p, ptrs(&x[0]), unsafe.Pointer(&got[0]))
	// Leaves of 4 rows: 2^24 (its three ones lost), 4, 4, 4; merged
	// pairwise, 2^24 + 12. A running sum gives 2^24.
	for j, g := range got {
		if g != 1<<24+12 {
			t.Fatalf("column %d: 2^24 and 15 ones summed to %v, want %v", j, g, float32(1<<24+12))
		}
	}
}
