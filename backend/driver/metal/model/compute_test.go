package model

import (
	"fmt"
	"math"
	"testing"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

func TestMatMul(t *testing.T) {
	g := graphOn(dev15)
	a := f32(g, []int{2, 2, 2}, 1, 2, 3, 4, 5, 6, 7, 8)
	b := f32(g, []int{2, 2}, 1, 0, 1, 1)
	// Batch [2, 1] against batch [3]: a_i . b_j for i < 2, j < 3.
	c := f32(g, []int{2, 1, 1, 2}, 1, 2, 3, 4)
	d := f32(g, []int{3, 2, 1}, 1, 10, 2, 10, 3, 10)
	// Sequential float32 accumulation: 1e8 + 1 is 1e8, so the dot is 0.
	e := g.MatMul(f32(g, []int{1, 3}, 1e8, 1, -1e8), f32(g, []int{3, 1}, 1, 1, 1))
	// Float16 operands accumulate in float32: 2048 + 1 + 1 is 2050, where
	// float16 accumulation would stay at 2048.
	h := g.MatMul(f16(g, []int{1, 3}, 0x6800, 0x3c00, 0x3c00), f16(g, []int{3, 1}, 0x3c00, 0x3c00, 0x3c00))
	cd := g.MatMul(c, d)
	if cd.Rank() != 4 || cd.Shape[0] != 2 || cd.Shape[1] != 3 {
		t.Fatalf("batch broadcast shape %v", cd.Shape)
	}
	r := run(t, dev15, g, g.MatMul(a, b), cd, e, h)
	checkF32(t, "[2,2,2] x [2,2]", r[0], 3, 2, 7, 4, 11, 6, 15, 8)
	checkF32(t, "[2,1,1,2] x [3,2,1]", r[1], 21, 22, 23, 43, 46, 49)
	checkF32(t, "float32 accumulation", r[2], 0)
	checkF16(t, "float16 matmul", r[3], 0x6801)
}

// naiveConv is an independent convolution: NHWC, HWIO, no padding.
func naiveConv(x []float32, xs [4]int, w []float32, ws [4]int, c gpu.Conv2D) ([]float32, []int) {
	n, h, wd, ch := xs[0], xs[1], xs[2], xs[3]
	kh, kw, ci, co := ws[0], ws[1], ws[2], ws[3]
	oh := (h-((kh-1)*c.DilationY+1))/c.StrideY + 1
	ow := (wd-((kw-1)*c.DilationX+1))/c.StrideX + 1
	out := make([]float32, n*oh*ow*co)
	for b := 0; b < n; b++ {
		for y := 0; y < oh; y++ {
			for xx := 0; xx < ow; xx++ {
				for o := 0; o < co; o++ {
					group := o / (co / c.Groups)
					var s float32
					for ky := 0; ky < kh; ky++ {
						for kx := 0; kx < kw; kx++ {
							for i := 0; i < ci; i++ {
								iy, ix, ic := y*c.StrideY+ky*c.DilationY, xx*c.StrideX+kx*c.DilationX, group*ci+i
								s += x[((b*h+iy)*wd+ix)*ch+ic] * w[((ky*kw+kx)*ci+i)*co+o]
							}
						}
					}
					out[((b*oh+y)*ow+xx)*co+o] = s
				}
			}
		}
	}
	return out, []int{n, oh, ow, co}
}

func TestConvolution2D(t *testing.T) {
	// A literal case: a 2x2 window of ones over 1..9.
	g := graphOn(dev15)
	x := f32(g, []int{1, 3, 3, 1}, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	w := f32(g, []int{2, 2, 1, 1}, 1, 1, 1, 1)
	one := gpu.Conv2D{StrideY: 1, StrideX: 1, DilationY: 1, DilationX: 1, Groups: 1}
	r := run(t, dev15, g, g.Convolution2D(x, w, one))
	checkF32(t, "2x2 window sums", r[0], 12, 16, 24, 28)

	// Against the naive loop, with small integers so that every order of
	// summation is exact.
	cases := []struct {
		xs, ws [4]int
		c      gpu.Conv2D
	}{
		{[4]int{1, 5, 5, 2}, [4]int{3, 3, 2, 3}, one},
		{[4]int{2, 7, 6, 3}, [4]int{2, 3, 3, 2}, gpu.Conv2D{StrideY: 2, StrideX: 1, DilationY: 1, DilationX: 2, Groups: 1}},
		{[4]int{1, 4, 4, 4}, [4]int{2, 2, 2, 6}, gpu.Conv2D{StrideY: 1, StrideX: 1, DilationY: 1, DilationX: 1, Groups: 2}},
		{[4]int{2, 9, 8, 6}, [4]int{2, 2, 2, 3}, gpu.Conv2D{StrideY: 2, StrideX: 3, DilationY: 2, DilationX: 2, Groups: 3}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%v*%v/%+v", tc.xs, tc.ws, tc.c), func(t *testing.T) {
			xv := make([]float32, tc.xs[0]*tc.xs[1]*tc.xs[2]*tc.xs[3])
			for i := range xv {
				xv[i] = float32((i*7)%11 - 5)
			}
			wv := make([]float32, tc.ws[0]*tc.ws[1]*tc.ws[2]*tc.ws[3])
			for i := range wv {
				wv[i] = float32((i*5)%7 - 3)
			}
			want, shape := naiveConv(xv, tc.xs, wv, tc.ws, tc.c)
			g := graphOn(dev15)
			out := g.Convolution2D(f32(g, tc.xs[:], xv...), f32(g, tc.ws[:], wv...), tc.c)
			if fmt.Sprint(out.Shape) != fmt.Sprint(shape) {
				t.Fatalf("shape %v, want %v (%v)", out.Shape, shape, g.Err())
			}
			checkF32(t, "convolution", run(t, dev15, g, out)[0], want...)
		})
	}
}

func TestReductions(t *testing.T) {
	g := graphOn(dev15)
	x := f32(g, []int{2, 3}, 1, 2, 3, 4, 5, 6)
	n := f32(g, []int{4, 3}, nan, 1, 2, nan, nan, nan, 3, nan, -1, 5, -2, 0)
	rows := []int{1}
	r := run(t, dev15, g,
		g.ReductionSum(x, []int{1}), g.ReductionSum(x, []int{0}), g.ReductionSum(x, []int{0, 1}),
		g.ReductionProduct(x, []int{1}),
		g.ReductionSum(f32(g, []int{3}, 1e8, 1, -1e8), []int{0}), g.ReductionSum(f32(g, []int{3}, 1e8, -1e8, 1), []int{0}),
		g.ReductionMaximum(n, rows), g.ReductionMinimum(n, rows), g.ReductionMaximumNaN(n, rows), g.ReductionMinimumNaN(n, rows),
		g.ReductionSum(i32(g, []int{2}, math.MaxInt32, 1), []int{0}),
		g.ReductionSum(konst[int64](g, gpu.Int64, []int{2}, 1<<62, 1<<62), []int{0}),
		g.ReductionSum(f16(g, []int{3}, 0x6800, 0x3c00, 0x3c00), []int{0}),
		g.ReductionMaximum(i32(g, []int{3}, -5, -3, -9), []int{0}),
		g.ReductionMinimum(f32(g, []int{2}, 0, negz), []int{0}))
	checkF32(t, "sum axis 1", r[0], 6, 15)
	checkF32(t, "sum axis 0", r[1], 5, 7, 9)
	checkF32(t, "sum all", r[2], 21)
	checkF32(t, "product axis 1", r[3], 6, 120)
	// Row-major float32 accumulation: the order shows.
	checkF32(t, "1e8 + 1 - 1e8", r[4], 0)
	checkF32(t, "1e8 - 1e8 + 1", r[5], 1)
	checkF32(t, "maximum skips NaN", r[6], 2, nan, 3, 5)
	checkF32(t, "minimum skips NaN", r[7], 1, nan, -1, -2)
	checkF32(t, "maximum propagating NaN", r[8], nan, nan, nan, 5)
	checkF32(t, "minimum propagating NaN", r[9], nan, nan, nan, -2)
	check(t, "int32 sum wraps", r[10], int32(math.MinInt32))
	check(t, "int64 sum wraps", r[11], int64(math.MinInt64))
	checkF16(t, "float16 sum accumulates in float32", r[12], 0x6801)
	check(t, "int32 maximum", r[13], int32(-3))
	checkF32(t, "minimum of 0, -0 keeps the first", r[14], 0)

	// int64 reductions come with macOS 13.3.
	old := New(Options{MacOS: gpu.Version{Major: 13}})
	og := graphOn(old)
	og.ReductionSum(konst[int64](og, gpu.Int64, []int{1}, 1), []int{0})
	if og.Err() == nil {
		t.Error("an int64 reduction was accepted on macOS 13.0")
	}
}

// ArgSort orders ties by descending position and puts NaNs first.
func TestArgSort(t *testing.T) {
	g := graphOn(dev15)
	r := run(t, dev15, g,
		g.ArgSort(f32(g, []int{1, 5}, 3, 1, 2, 1, 3), 1),
		g.ArgSort(f32(g, []int{4}, 1, nan, 0, nan), 0),
		g.ArgSort(i32(g, []int{3, 2}, 2, 0, 1, 0, 2, -1), 0),
		g.ArgSort(f32(g, []int{2}, 0, negz), 0),
		g.ArgSort(konst[int64](g, gpu.Int64, []int{3}, math.MinInt64, math.MaxInt64, 0), 0))
	check(t, "ties", r[0], int32(3), 1, 2, 4, 0)
	check(t, "NaNs", r[1], int32(3), 1, 2, 0)
	check(t, "axis 0", r[2], int32(1), 2, 2, 1, 0, 0)
	check(t, "-0 ties +0", r[3], int32(1), 0)
	check(t, "int64", r[4], int32(0), 2, 1)
}

func TestCumulativeSum(t *testing.T) {
	g := graphOn(dev15)
	x := i32(g, []int{2, 3}, 1, 2, 3, 4, 5, 6)
	r := run(t, dev15, g, g.CumulativeSum(x, 1), g.CumulativeSum(x, 0),
		g.CumulativeSum(f32(g, []int{4}, 16777216, 1, 1, 2), 0),
		g.CumulativeSum(i32(g, []int{2}, math.MaxInt32, 1), 0),
		g.CumulativeSum(f16(g, []int{3}, 0x6800, 0x3c00, 0x3c00), 0))
	check(t, "axis 1", r[0], int32(1), 3, 6, 4, 9, 15)
	check(t, "axis 0", r[1], int32(1), 2, 3, 5, 7, 9)
	checkF32(t, "float32 steps", r[2], 16777216, 16777216, 16777216, 16777218)
	check(t, "int32 wraps", r[3], int32(math.MaxInt32), math.MinInt32)
	checkF16(t, "float16 accumulates in float16", r[4], 0x6800, 0x6800, 0x6800)
}

func TestGather(t *testing.T) {
	g := graphOn(dev15)
	x := f32(g, []int{3, 2}, 1, 2, 3, 4, 5, 6)
	a := g.Gather(x, i32(g, []int{2}, 2, 0), 0)
	b := g.Gather(x, i32(g, []int{2, 2}, 1, 0, 1, 1), 1)
	y := i32(g, []int{2, 3}, 1, 2, 3, 4, 5, 6)
	c := g.GatherAlongAxis(1, y, i32(g, []int{2, 2}, 2, 0, 1, 1))
	d := g.GatherAlongAxis(0, y, i32(g, []int{1, 3}, 1, 0, 1))
	r := run(t, dev15, g, a, b, c, d)
	checkF32(t, "gather axis 0", r[0], 5, 6, 1, 2)
	checkF32(t, "gather axis 1", r[1], 2, 1, 2, 2, 4, 3, 4, 4, 6, 5, 6, 6)
	check(t, "gatherAlongAxis 1", r[2], int32(3), 1, 5, 5)
	check(t, "gatherAlongAxis 0", r[3], int32(4), 2, 6)

	for _, i := range []int32{7, 5, -1} {
		g := graphOn(dev15)
		out := g.Gather(i32(g, []int{5}, 0, 1, 2, 3, 4), i32(g, []int{2}, 0, i), 0)
		runErr(t, dev15, g, fmt.Sprintf("MPSGraph model: gather: index %d out of range [0, 5)", i), out)
	}
	// gatherAlongAxis documents an index out of range: it gives 0.
	g = graphOn(dev15)
	out := g.GatherAlongAxis(1, i32(g, []int{1, 3}, 1, 2, 3), i32(g, []int{1, 2}, 3, -1))
	check(t, "gatherAlongAxis out of range", run(t, dev15, g, out)[0], int32(0), 0)
}

// TestIntegersThroughFloat32: gathers and scatterND round integer data to
// float32 (24 significant bits), as Apple's GPUs do; small ones and floats
// come through exactly.
func TestIntegersThroughFloat32(t *testing.T) {
	g := graphOn(dev15)
	x := i32(g, []int{4}, 1<<24+1, -(1<<24 + 3), 1<<30+5, 12345)
	i64 := konst(g, gpu.Int64, []int{2}, int64(1<<53+1), -7)
	f := f32(g, []int{2}, 16777217, float32(math.Copysign(0, -1))) // 2^24 + 1 rounded already: floats move exactly
	idx := i32(g, []int{4}, 0, 1, 2, 3)
	r := run(t, dev15, g,
		g.Gather(x, idx, 0),
		g.GatherAlongAxis(0, x, idx),
		g.ScatterND(x, i32(g, []int{1}, 1<<24+1), i32(g, []int{1, 1}, 3), gpu.ScatterSet),
		g.GatherAlongAxis(0, i64, i32(g, []int{2}, 0, 1)),
		g.GatherAlongAxis(0, f, i32(g, []int{2}, 1, 0)))
	check(t, "gather", r[0], int32(1<<24), -(1<<24 + 4), 1<<30, 12345)
	check(t, "gatherAlongAxis", r[1], int32(1<<24), -(1<<24 + 4), 1<<30, 12345)
	check(t, "scatterND, the data too", r[2], int32(1<<24), -(1<<24 + 4), 1<<30, 1<<24)
	check(t, "int64", r[3], int64(1<<53), -7)
	checkF32(t, "floats", r[4], float32(math.Copysign(0, -1)), 16777216)
}

func TestScatterND(t *testing.T) {
	g := graphOn(dev15)
	idx := i32(g, []int{3, 1}, 1, 1, 3)
	zeros := i32(g, []int{4}, 0, 0, 0, 0)
	fives := i32(g, []int{4}, 5, 5, 5, 5)
	r := run(t, dev15, g,
		g.ScatterND(zeros, i32(g, []int{3}, 10, 20, 30), idx, gpu.ScatterSet),
		g.ScatterND(zeros, i32(g, []int{3}, 10, 20, 30), idx, gpu.ScatterAdd),
		g.ScatterND(i32(g, []int{4}, 1, 2, 3, 4), i32(g, []int{3}, 10, 20, 30), idx, gpu.ScatterMul),
		g.ScatterND(fives, i32(g, []int{3}, 1, 9, 7), idx, gpu.ScatterMax),
		g.ScatterND(fives, i32(g, []int{3}, 1, 9, 7), idx, gpu.ScatterMin),
		// Slices of rows, and full index vectors.
		g.ScatterND(f32(g, []int{3, 2}, 0, 0, 0, 0, 0, 0), f32(g, []int{2, 2}, 1, 2, 3, 4), i32(g, []int{2, 1}, 2, 0), gpu.ScatterSet),
		g.ScatterND(f32(g, []int{3, 2}, 0, 0, 0, 0, 0, 0), f32(g, []int{2}, 7, 8), i32(g, []int{2, 2}, 0, 1, 2, 0), gpu.ScatterAdd),
		// One index vector of data's rank: updates of shape [1].
		g.ScatterND(f32(g, []int{2, 2}, 1, 1, 1, 1), f32(g, []int{1}, 9), i32(g, []int{2}, 1, 0), gpu.ScatterSet))
	check(t, "set: the first duplicate wins", r[0], int32(0), 10, 0, 30)
	check(t, "add", r[1], int32(0), 30, 0, 30)
	check(t, "mul", r[2], int32(1), 400, 3, 120)
	check(t, "max", r[3], int32(5), 9, 5, 7)
	check(t, "min", r[4], int32(5), 1, 5, 5)
	checkF32(t, "rows", r[5], 3, 4, 0, 0, 1, 2)
	checkF32(t, "elements", r[6], 0, 7, 0, 0, 8, 0)
	checkF32(t, "one vector", r[7], 1, 1, 9, 1)

	g = graphOn(dev15)
	out := g.ScatterND(i32(g, []int{4}, 0, 0, 0, 0), i32(g, []int{2}, 1, 2), i32(g, []int{2, 1}, 0, 4), gpu.ScatterAdd)
	runErr(t, dev15, g, "MPSGraph model: scatterND: index 4 out of range [0, 4)", out)
}
