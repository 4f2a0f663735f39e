package host

import (
	"fmt"
	"testing"

	"github.com/metalplug/metalplug/backend/driver/drivertest"
	"github.com/metalplug/metalplug/backend/ir"
)

// The hot kernels at the sizes package bench times through TensorFlow, and
// the dispatch path the plugin's C entry takes for every op. "MB/s" on the
// contraction benchmarks is MFLOP/s (SetBytes counts flops).

func f32(shape ...int) ir.TensorType { return ir.TensorType{DType: ir.F32, Shape: ir.Shape(shape)} }

func matmulProgram(n int) *ir.Program {
	bl := ir.NewBuilder()
	x, y := bl.Parameter(f32(n, n)), bl.Parameter(f32(n, n))
	p, _ := bl.Build(bl.DotGeneral(x, y, ir.DotDims{LhsContract: []int{1}, RhsContract: []int{0}}))
	return p
}

func BenchmarkMatMulF32(b *testing.B) {
	for _, n := range []int{64, 512, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(2 * n * n * n))
			benchRun(b, matmulProgram(n))
		})
	}
}

// BenchmarkMatMulTransposedF32 is the gradient's shape of a dense layer:
// x^T · dy, contracting the leading dims.
func BenchmarkMatMulTransposedF32(b *testing.B) {
	const n = 512
	bl := ir.NewBuilder()
	x, y := bl.Parameter(f32(n, n)), bl.Parameter(f32(n, n))
	p, _ := bl.Build(bl.DotGeneral(x, y, ir.DotDims{LhsContract: []int{0}, RhsContract: []int{0}}))
	b.SetBytes(2 * n * n * n)
	benchRun(b, p)
}

// BenchmarkConvF32 is the bench's Conv2D (64x64x32 -> 64, 3x3 SAME) at batch 1.
func BenchmarkConvF32(b *testing.B) {
	bl := ir.NewBuilder()
	x := bl.Parameter(f32(1, 64, 64, 32))
	k := bl.Parameter(f32(3, 3, 32, 64))
	p, _ := bl.Build(bl.Convolution(x, k, ir.ConvAttrs{Padding: [][2]int{{1, 1}, {1, 1}}}))
	b.SetBytes(2 * 64 * 64 * 9 * 32 * 64)
	benchRun(b, p)
}

// BenchmarkConvBackpropFilterF32 is the filter gradient of the same layer as
// TensorFlow lowers it: a convolution with the batch as the feature dim.
func BenchmarkConvSmallCNNF32(b *testing.B) {
	bl := ir.NewBuilder()
	x := bl.Parameter(f32(32, 32, 32, 3))
	k := bl.Parameter(f32(3, 3, 3, 32))
	p, _ := bl.Build(bl.Convolution(x, k, ir.ConvAttrs{Padding: [][2]int{{1, 1}, {1, 1}}}))
	b.SetBytes(2 * 32 * 32 * 32 * 9 * 3 * 32)
	benchRun(b, p)
}

const elems = 1 << 20

func BenchmarkElementwiseF32(b *testing.B) {
	t := f32(elems)
	for _, c := range []struct {
		name string
		op   ir.Op
	}{{"Mul", ir.OpMul}, {"Add", ir.OpAdd}} {
		b.Run(c.name, func(b *testing.B) {
			bl := ir.NewBuilder()
			p, _ := bl.Build(bl.Binary(c.op, bl.Parameter(t), bl.Parameter(t)))
			b.SetBytes(3 * 4 * elems)
			benchRun(b, p)
		})
	}
	b.Run("Tanh", func(b *testing.B) {
		bl := ir.NewBuilder()
		p, _ := bl.Build(bl.Unary(ir.OpTanh, bl.Parameter(t)))
		b.SetBytes(2 * 4 * elems)
		benchRun(b, p)
	})
	// The three as one program, which is how a fused frontend op arrives.
	b.Run("ChainInOneProgram", func(b *testing.B) {
		bl := ir.NewBuilder()
		x, y, z := bl.Parameter(t), bl.Parameter(t), bl.Parameter(t)
		p, _ := bl.Build(bl.Unary(ir.OpTanh, bl.Binary(ir.OpAdd, bl.Binary(ir.OpMul, x, y), z)))
		b.SetBytes(4 * 4 * elems)
		benchRun(b, p)
	})
}

func BenchmarkReduceSumF32(b *testing.B) {
	for _, c := range []struct {
		name string
		axes []int
	}{{"All", []int{0, 1}}, {"Rows", []int{1}}, {"Cols", []int{0}}} {
		b.Run(c.name, func(b *testing.B) {
			bl := ir.NewBuilder()
			p, _ := bl.Build(bl.Reduce(bl.Parameter(f32(1024, 1024)), ir.ReduceSum, c.axes))
			b.SetBytes(4 << 20)
			benchRun(b, p)
		})
	}
}

// tinyAdd is AddV2 of two scalars as the plugin lowers it.
func tinyAdd() *ir.Program {
	bl := ir.NewBuilder()
	p, _ := bl.Build(bl.Binary(ir.OpAdd, bl.Parameter(f32()), bl.Parameter(f32())))
	return p
}

// BenchmarkDispatch is one tiny kernel's trip through a stream
// (drivertest.BenchmarkDispatch); BenchmarkCompileCacheHit the driver's
// own lookup of a program it has compiled.
func BenchmarkDispatch(b *testing.B) { drivertest.BenchmarkDispatch(b, New(Options{})) }

func BenchmarkCompileCacheHit(b *testing.B) {
	d := New(Options{})
	p := tinyAdd()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Compile(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMaxPoolF32 is the small CNN's first 2x2 max pool at batch 128.
func BenchmarkMaxPoolF32(b *testing.B) {
	bl := ir.NewBuilder()
	x := bl.Parameter(f32(128, 32, 32, 32))
	p, _ := bl.Build(bl.ReduceWindow(x, ir.ReduceMax, ir.WindowAttrs{Dims: []int{1, 2, 2, 1}, Strides: []int{1, 2, 2, 1}, Padding: [][2]int{{0, 0}, {0, 0}, {0, 0}, {0, 0}}}))
	b.SetBytes(128 * 32 * 32 * 32 * 4)
	benchRun(b, p)
}

// BenchmarkReduceSum4096F32 is the bench's ReduceSum over 4096x4096: 64 MB,
// far past the caches.
func BenchmarkReduceSum4096F32(b *testing.B) {
	for _, c := range []struct {
		name string
		axes []int
	}{{"All", []int{0, 1}}, {"Rows", []int{1}}} {
		b.Run(c.name, func(b *testing.B) {
			bl := ir.NewBuilder()
			p, _ := bl.Build(bl.Reduce(bl.Parameter(f32(4096, 4096)), ir.ReduceSum, c.axes))
			b.SetBytes(4 << 24)
			benchRun(b, p)
		})
	}
}
