package metal

import (
	"encoding/binary"
	"math"
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/ir"
)

// Tests of the defects a review of the Metal driver found, each run on the
// model of MPSGraph (or a Mac's GPU), each failing without its fix.

// runOnce compiles p with no CPU fallback, runs it on args (placed at an
// interior offset of one allocation) and returns its first result's bytes.
func runOnce(t *testing.T, d *Driver, p *ir.Program, args ...[]byte) []byte {
	t.Helper()
	exe, err := d.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base, err := d.Allocate(1 << 16)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(base)
	off := 24
	ptrs := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		ptrs[i] = unsafe.Add(base, off)
		copy(unsafe.Slice((*byte)(ptrs[i]), len(a)), a)
		off += (len(a)+7)/8*8 + 8
	}
	rt := p.ResultTypes()[0]
	out := unsafe.Add(base, off)
	s.Execute(exe, ptrs, []unsafe.Pointer{out})
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), unsafe.Slice((*byte)(out), rt.Bytes())...)
}

func i64Bytes(v ...int64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return b
}

// TestInt64WindowPadding: a windowed min over int64 pads with int64's
// highest value, which a float64 pad value (2^63) cannot carry: MPSGraph's
// pad converts it out of range, which is undefined (the model gives the
// lowest value, so every padded window's min would be MinInt64).
func TestInt64WindowPadding(t *testing.T) {
	d := open(t, Options{})
	for _, c := range []struct {
		kind ir.ReduceKind
		want []int64
	}{
		{ir.ReduceMin, []int64{math.MaxInt64 - 1, -5, 3}},
		{ir.ReduceMax, []int64{math.MaxInt64 - 1, 7, 3}},
	} {
		b := ir.NewBuilder()
		x := b.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{4}})
		p, err := b.Build(b.ReduceWindow(x, c.kind, ir.WindowAttrs{Dims: []int{2}, Strides: []int{2}, Padding: [][2]int{{1, 1}}}))
		if err != nil {
			t.Fatal(err)
		}
		got := runOnce(t, d, p, i64Bytes(math.MaxInt64-1, -5, 7, 3))
		for i, w := range c.want {
			if v := int64(binary.LittleEndian.Uint64(got[8*i:])); v != w {
				t.Errorf("%v window %d = %d, want %d", c.kind, i, v, w)
			}
		}
	}
}

// TestPackedRows: a rank-2 tensor at an interior offset with rows of 12
// bytes reads and writes right only if its MPSNDArray asks for packed rows.
func TestPackedRows(t *testing.T) {
	d := open(t, Options{})
	if !d.MacOS().AtLeast(gpu.NDArrayOffsets) {
		t.Skipf("%v binds no data at offsets", d.MacOS())
	}
	b := ir.NewBuilder()
	tt := ir.TensorType{DType: ir.F32, Shape: ir.Shape{3, 3}}
	x := b.Parameter(tt)
	p, err := b.Build(b.Binary(ir.OpAdd, x, x))
	if err != nil {
		t.Fatal(err)
	}
	var in []byte
	for i := range 9 {
		in = binary.LittleEndian.AppendUint32(in, math.Float32bits(float32(i+1)))
	}
	got := f32s(runOnce(t, d, p, in))
	for i, v := range got {
		if v != float32(2*(i+1)) {
			t.Errorf("element %d = %v, want %v", i, v, 2*(i+1))
		}
	}
}

// TestInt64Division: MPSGraph's division has no int64 kernel (torch and
// Apple's engineers say so; the contract refuses it), so int64 divides bit
// by bit: exact over the whole range, MinInt64 / -1 wrapping, the
// remainder with the dividend's sign, and the host driver's answers by 0.
func TestInt64Division(t *testing.T) {
	d := open(t, Options{})
	xs := []int64{math.MinInt64, math.MinInt64, math.MaxInt64, -7, 7, 1 << 62, -(1 << 62) - 3, 12345678901234, 5, -5}
	ys := []int64{-1, 1, -7, 3, -3, 3, 1 << 31, -98765, 0, 0}
	for _, op := range []ir.Op{ir.OpDiv, ir.OpRem} {
		b := ir.NewBuilder()
		tt := ir.TensorType{DType: ir.I64, Shape: ir.Shape{len(xs)}}
		x, y := b.Parameter(tt), b.Parameter(tt)
		p, err := b.Build(b.Binary(op, x, y))
		if err != nil {
			t.Fatal(err)
		}
		got := runOnce(t, d, p, i64Bytes(xs...), i64Bytes(ys...))
		for i := range xs {
			var want int64
			switch {
			case ys[i] == 0 && op == ir.OpDiv:
				want = 0
			case ys[i] == 0:
				want = xs[i]
			case op == ir.OpDiv:
				want = xs[i] / ys[i]
			default:
				want = xs[i] % ys[i]
			}
			if v := int64(binary.LittleEndian.Uint64(got[8*i:])); v != want {
				t.Errorf("%v(%d, %d) = %d, want %d", op, xs[i], ys[i], v, want)
			}
		}
	}
}

// TestLongSumsAreBlocked: MPSGraph does not say in what order a reduction
// adds, and the model adds in order, which over a long axis lets float32
// rounding error grow with the axis (the sweep's L2Loss over 2 million
// elements was 0.17% off). The lowering bounds every reduction's length
// (blockedSum). The data make the order visible: 2^24 first, then 11999 ones,
// each of which a running sum already holding 2^24 rounds away.
func TestLongSumsAreBlocked(t *testing.T) {
	d := open(t, Options{})
	const n = 12000
	b := ir.NewBuilder()
	x := b.Parameter(ir.TensorType{DType: ir.F32, Shape: ir.Shape{n}})
	p, err := b.Build(b.Reduce(x, ir.ReduceSum, []int{0}))
	if err != nil {
		t.Fatal(err)
	}
	in := binary.LittleEndian.AppendUint32(nil, math.Float32bits(1<<24))
	for range n - 1 {
		in = binary.LittleEndian.AppendUint32(in, math.Float32bits(1))
	}
	got := f32s(runOnce(t, d, p, in))[0]
	// Blocks of about sqrt(n) = 110: only the first block's ones are lost.
	if got < 1<<24+n-1-200 {
		t.Errorf("2^24 and %d ones summed to %v: %v of the ones were lost, want at most one block's", n-1, got, 1<<24+n-1-float64(got))
	}
}
