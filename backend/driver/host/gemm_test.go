package host

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// naiveMatmul is the float64-accumulated reference.
func naiveMatmul(a, b []float32, M, K, N int) []float64 {
	c := make([]float64, M*N)
	for i := range M {
		for k := range K {
			x := float64(a[i*K+k])
			for j := range N {
				c[i*N+j] += x * float64(b[k*N+j])
			}
		}
	}
	return c
}

func randF32(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// withKernels runs f with the assembly micro-kernel (where there is one) and
// with the Go one.
func withKernels(t *testing.T, f func(t *testing.T)) {
	t.Run("go", func(t *testing.T) {
		saved := haveFMA
		setFMA(false)
		defer setFMA(saved)
		f(t)
	})
	if haveFMA {
		t.Run("asm", f)
	}
}

func checkClose(t *testing.T, what string, got []float32, want []float64, K int) {
	t.Helper()
	tol := 1e-5 * math.Sqrt(float64(max(K, 1))) * 4
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s: element %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestSgemmAgainstNaive(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		sizes := [][3]int{{1, 1, 1}, {6, 16, 1}, {7, 17, 3}, {5, 15, 257}, {96, 256, 256}, {97, 255, 513}, {200, 33, 70}, {13, 600, 9}}
		for _, s := range sizes {
			M, K, N := s[0], s[1], s[2]
			a, b := randF32(r, M*K), randF32(r, K*N)
			c := make([]float32, M*N)
			matmulF32(c, a, b, 1, M, K, N)
			checkClose(t, "matmul", c, naiveMatmul(a, b, M, K, N), K)
		}
	})
}

// TestConvGemmAgainstDirect checks the im2col sgemm against the direct
// float64 convolution over strides, padding, both dilations and 1-3
// spatial dims.
func TestConvGemmAgainstDirect(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		cases := []struct {
			in, k []int
			a     ir.ConvAttrs
		}{
			{[]int{2, 9, 8, 3}, []int{3, 3, 3, 5}, ir.ConvAttrs{Padding: [][2]int{{1, 1}, {1, 1}}}},
			{[]int{1, 7, 7, 4}, []int{3, 2, 4, 17}, ir.ConvAttrs{Strides: []int{2, 1}, Padding: [][2]int{{0, 2}, {1, 0}}}},
			{[]int{3, 6, 5, 2}, []int{2, 2, 2, 3}, ir.ConvAttrs{LhsDilation: []int{2, 1}, RhsDilation: []int{1, 2}, Padding: [][2]int{{1, 1}, {2, 2}}}},
			{[]int{2, 11, 3}, []int{4, 3, 7}, ir.ConvAttrs{Padding: [][2]int{{-1, 2}}}},
			{[]int{1, 4, 4, 4, 2}, []int{2, 2, 2, 2, 3}, ir.ConvAttrs{}},
			{[]int{1, 40, 40, 300}, []int{3, 3, 300, 20}, ir.ConvAttrs{Padding: [][2]int{{1, 1}, {1, 1}}}},
		}
		for _, c := range cases {
			bl := ir.NewBuilder()
			x := bl.Parameter(ir.TensorType{DType: ir.F32, Shape: c.in})
			k := bl.Parameter(ir.TensorType{DType: ir.F32, Shape: c.k})
			p, err := bl.Build(bl.Convolution(x, k, c.a))
			if err != nil {
				t.Fatal(err)
			}
			conv := p.Instrs[p.Results[0]]
			at := []ir.TensorType{p.Instrs[0].Type, p.Instrs[1].Type}
			plan := newConvPlan(at[0].Shape, at[1].Shape, conv.Conv, conv.Type.Shape)
			xs, ks := randF32(r, ir.Shape(c.in).Size()), randF32(r, ir.Shape(c.k).Size())
			got := make([]float32, conv.Type.Shape.Size())
			newConvGemm(plan, at[0].Shape, at[1].Shape, conv.Conv).run(got, xs, ks)
			want := make([]float64, len(got))
			x64, k64 := make([]float64, len(xs)), make([]float64, len(ks))
			for i, v := range xs {
				x64[i] = float64(v)
			}
			for i, v := range ks {
				k64[i] = float64(v)
			}
			convOf[float64](plan)(bytesOf(want), [][]byte{bytesOf(x64), bytesOf(k64)})
			checkClose(t, conv.Type.String(), got, want, plan.work)
		}
	})
}

// TestTanhSliceMatchesScalar checks the vector tanh bit for bit against
// tanh32 over the range TestFastFloat32Math sweeps, lengths not a multiple
// of four included.
func TestTanhSliceMatchesScalar(t *testing.T) {
	var xs []float32
	for i := -30000; i <= 30000; i++ {
		xs = append(xs, float32(i)/1000)
	}
	for e := -40; e <= 8; e++ {
		for _, m := range []float64{1, 1.37, -1, -1.91} {
			xs = append(xs, float32(math.Ldexp(m, e)))
		}
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 9.01, -9.01, 10, -10, 10.5, 1e30, -1e30, 1e-45)
	got := make([]float32, len(xs))
	for _, n := range []int{len(xs), len(xs) - 1, 3} {
		tanhSlice(got[:n], xs[:n])
		for i := range n {
			want := tanh32(xs[i])
			if math.Float32bits(got[i]) != math.Float32bits(want) && !(got[i] != got[i] && want != want) {
				t.Fatalf("tanhSlice(%v) = %v, tanh32 gives %v", xs[i], got[i], want)
			}
		}
	}
}

func TestSumF32(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 31, 32, 63, 64, 65, 1000, 4097} {
		x := randF32(r, n)
		var want float64
		for _, v := range x {
			want += float64(v)
		}
		if got := sumF32(x); math.Abs(float64(got)-want) > 1e-4*math.Sqrt(float64(n)+1) {
			t.Errorf("sumF32 of %d = %v, want %v", n, got, want)
		}
	}
}

// TestWindowRowsMatchElementwise checks the row-at-a-time pooling paths
// (reduce_window and select_and_scatter over NHWC with channels >= 8)
// against the element-at-a-time ones, with ties and NaNs in the data.
func TestWindowRowsMatchElementwise(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	in := ir.Shape{2, 7, 6, 9}
	w := &ir.WindowAttrs{Dims: []int{1, 3, 2, 1}, Strides: []int{1, 2, 2, 1}, Padding: [][2]int{{0, 0}, {1, 1}, {0, 1}, {0, 0}}}
	bl := ir.NewBuilder()
	v := bl.ReduceWindow(bl.Parameter(ir.TensorType{DType: ir.F32, Shape: in}), ir.ReduceMax, *w)
	out := bl.Type(v).Shape
	x := make([]float32, in.Size())
	for i := range x {
		x[i] = float32(r.IntN(5)) // ties
		if r.IntN(50) == 0 {
			x[i] = float32(math.NaN())
		}
	}
	p := newWindowPlan(in, out, w)
	if p.inner != 9 || p.outer != 3 {
		t.Fatalf("plan: inner %d outer %d", p.inner, p.outer)
	}
	for _, kind := range []ir.ReduceKind{ir.ReduceMax, ir.ReduceSum, ir.ReduceMin} {
		rows := make([]float32, out.Size())
		windowRows(p, kind, identity[float32](kind), rows, x)
		q := *p
		q.inner, q.outer = 1, len(in)
		each := make([]float32, out.Size())
		windowOf[float32](&q, kind)(bytesOf(each), [][]byte{bytesOf(x)})
		for i := range rows {
			if math.Float32bits(rows[i]) != math.Float32bits(each[i]) && !(rows[i] != rows[i] && each[i] != each[i]) {
				t.Fatalf("reduce_window %v: element %d = %v, want %v", kind, i, rows[i], each[i])
			}
		}
	}
	for _, ge := range []bool{true, false} {
		a, b := make([]int, out.Size()), make([]int, out.Size())
		selectRows(p, ge, x, a)
		selectEach(p, ge, x, b, len(in))
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("select_and_scatter ge=%v: window %d chose %d, want %d", ge, i, a[i], b[i])
			}
		}
	}
}

// TestSgemmSumsInShortRuns: the micro-kernel adds its products to c in runs
// of at most gemmRun, so that a dot product's running sums stay as short as
// the ones TensorFlow's CPU makes (see gemmRun). The data make a run's
// length visible: one product of 2^24 first, then ones, each of which a
// running float32 sum that already holds 2^24 rounds away. A single run
// over the whole packed depth (gemmKC) would keep none of them; runs of 128
// keep every one after the first run.
func TestSgemmSumsInShortRuns(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		const K = gemmKC
		a := make([]float32, K)
		b := make([]float32, K)
		for k := range K {
			a[k], b[k] = 1, 1
		}
		b[0] = 1 << 24
		c := make([]float32, 1)
		matmulF32(c, a, b, 1, 1, K, 1)
		// Runs of 128: the first loses its 127 ones, the second keeps its 128.
		if want := float32(1<<24 + K - 128); c[0] != want {
			t.Fatalf("2^24 + %d ones summed to %v, want %v (runs of at most 128 products)", K-1, c[0], want)
		}
	})
}
