package compose

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// complexOperands are complex64 values over several binades either side of
// 1 in both parts, signs mixed, with the axes' zeros among them.
func complexOperands(n int, lo, hi int) []complex128 {
	r := rand.New(rand.NewPCG(3, 4))
	part := func() float64 {
		v := float64(float32(math.Ldexp(r.Float64()+0.5, lo+r.IntN(hi-lo))))
		if r.IntN(2) == 0 {
			return -v
		}
		return v
	}
	zs := []complex128{1, -1, 1i, -1i, 0.5 + 0.5i, 2 - 3i}
	for range n {
		zs = append(zs, complex(part(), part()))
	}
	return zs
}

// runComplex evaluates f of complex64 operands with the IR's reference
// semantics and returns its result as complex128 (a real result with a
// zero imaginary part).
func runComplex(t *testing.T, f func(b *ir.Builder, xs []ir.Value) ir.Value, args ...[]complex128) []complex128 {
	t.Helper()
	var ins []eval.Tensor
	for _, a := range args {
		in := eval.New(ir.TensorType{DType: ir.C64, Shape: ir.Shape{len(a)}})
		for i, z := range a {
			in.C[i] = complex128(complex64(z))
		}
		ins = append(ins, in)
	}
	out := evaluate(t, f, ins...)
	if out.Type.DType == ir.C64 {
		return out.C
	}
	zs := make([]complex128, len(out.F))
	for i, v := range out.F {
		zs[i] = complex(v, 0)
	}
	return zs
}

// checkComplex compares got with want by the distance relative to |want|:
// float32 parts carry about 6e-8 each, and the compositions a few roundings
// more.
func checkComplex(t *testing.T, name string, in [][]complex128, got, want []complex128, tol float64) {
	t.Helper()
	worst := 0.0
	for i := range want {
		w := want[i]
		if cmplx.IsNaN(w) || cmplx.IsInf(w) || cmplx.Abs(w) > math.MaxFloat32 {
			continue // past float32's range: the compositions promise nothing there
		}
		e := cmplx.Abs(got[i]-w) / math.Max(cmplx.Abs(w), 1e-30)
		if math.IsNaN(e) || e > tol {
			args := ""
			for _, a := range in {
				args += fmt.Sprint(a[i], " ")
			}
			t.Errorf("%s(%s) = %v, want %v (relative error %.2g)", name, args, got[i], w, e)
			continue
		}
		worst = max(worst, e)
	}
	t.Logf("%s: %d values, worst relative error %.2g", name, len(want), worst)
}

func TestComplexUnaryAccuracy(t *testing.T) {
	zs := complexOperands(600, -6, 4) // |parts| up to 16: exp and the hyperbolics stay finite
	narrow := complexOperands(600, -6, 3)
	one := func(f func(*ir.Builder, ir.Value) ir.Value) func(*ir.Builder, []ir.Value) ir.Value {
		return func(b *ir.Builder, v []ir.Value) ir.Value { return f(b, v[0]) }
	}
	op := func(o ir.Op) func(*ir.Builder, ir.Value) ir.Value {
		return func(b *ir.Builder, x ir.Value) ir.Value {
			v, ok := ComplexUnary(b, o, x)
			if !ok {
				t.Fatalf("ComplexUnary composes no %v", o)
			}
			return v
		}
	}
	for _, c := range []struct {
		name string
		f    func(*ir.Builder, ir.Value) ir.Value
		ref  func(complex128) complex128
		in   []complex128
		tol  float64
	}{
		{"neg", op(ir.OpNeg), func(z complex128) complex128 { return -z }, zs, 0},
		{"abs", op(ir.OpAbs), func(z complex128) complex128 { return complex(cmplx.Abs(z), 0) }, zs, 2e-7},
		{"sign", op(ir.OpSign), func(z complex128) complex128 { return z / complex(cmplx.Abs(z), 0) }, zs, 3e-7},
		{"exp", op(ir.OpExp), cmplx.Exp, zs, 4e-7},
		{"expm1", op(ir.OpExpm1), func(z complex128) complex128 { return cmplx.Exp(z) - 1 }, zs, 5e-7},
		{"log", op(ir.OpLog), cmplx.Log, zs, 1e-6},
		{"log1p", op(ir.OpLog1p), func(z complex128) complex128 { return cmplx.Log(1 + z) }, zs, 8e-7},
		{"sqrt", op(ir.OpSqrt), cmplx.Sqrt, zs, 3e-7},
		{"rsqrt", op(ir.OpRsqrt), func(z complex128) complex128 { return 1 / cmplx.Sqrt(z) }, zs, 4e-7},
		{"tanh", op(ir.OpTanh), cmplx.Tanh, zs, 5e-7},
		{"logistic", op(ir.OpLogistic), func(z complex128) complex128 { return 1 / (1 + cmplx.Exp(-z)) }, narrow, 8e-7},
		{"sin", op(ir.OpSin), cmplx.Sin, zs, 4e-7},
		{"cos", op(ir.OpCos), cmplx.Cos, zs, 4e-7},
		{"tan", ComplexTan, cmplx.Tan, zs, 6e-7},
		{"sinh", ComplexSinh, cmplx.Sinh, zs, 4e-7},
		{"cosh", ComplexCosh, cmplx.Cosh, zs, 4e-7},
	} {
		got := runComplex(t, one(c.f), c.in)
		want := make([]complex128, len(c.in))
		for i, z := range c.in {
			want[i] = c.ref(complex128(complex64(z)))
		}
		checkComplex(t, c.name, [][]complex128{c.in}, got, want, c.tol)
	}
}

func TestComplexBinaryAccuracy(t *testing.T) {
	xs, ys := complexOperands(800, -8, 8), complexOperands(800, -8, 8)[6:]
	ys = append(ys, xs[:6]...)
	bases, powers := complexOperands(800, -3, 3), complexOperands(800, -3, 2)
	for _, c := range []struct {
		name   string
		o      ir.Op
		ref    func(x, y complex128) complex128
		xs, ys []complex128
		tol    float64
	}{
		{"add", ir.OpAdd, func(x, y complex128) complex128 { return x + y }, xs, ys, 1.2e-7},
		{"sub", ir.OpSub, func(x, y complex128) complex128 { return x - y }, xs, ys, 1.2e-7},
		{"mul", ir.OpMul, func(x, y complex128) complex128 { return x * y }, xs, ys, 3e-7},
		{"div", ir.OpDiv, func(x, y complex128) complex128 { return x / y }, xs, ys, 6e-7},
		{"pow", ir.OpPow, cmplx.Pow, bases, powers, 4e-6},
	} {
		got := runComplex(t, func(b *ir.Builder, v []ir.Value) ir.Value {
			r, ok := ComplexBinary(b, c.o, v[0], v[1])
			if !ok {
				t.Fatalf("ComplexBinary composes no %v", c.o)
			}
			return r
		}, c.xs, c.ys)
		want := make([]complex128, len(c.xs))
		for i := range c.xs {
			want[i] = c.ref(complex128(complex64(c.xs[i])), complex128(complex64(c.ys[i])))
		}
		checkComplex(t, c.name, [][]complex128{c.xs, c.ys}, got, want, c.tol)
	}
}

// TestComplexEdges: the values the formulas single out, bit for bit where
// C99 (Annex G) and both frameworks' CPUs agree.
func TestComplexEdges(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		name string
		f    func(b *ir.Builder, v []ir.Value) ir.Value
		in   [][]complex128
		want complex128
	}{
		{"0^0", binaryOf(ir.OpPow), [][]complex128{{0}, {0}}, 1},
		{"0^2", binaryOf(ir.OpPow), [][]complex128{{0}, {2}}, 0},
		{"sqrt(-4)", unaryOf(ir.OpSqrt), [][]complex128{{-4}}, 2i},
		{"sign(0)", unaryOf(ir.OpSign), [][]complex128{{0}}, 0},
		{"abs(inf+NaN i)", unaryOf(ir.OpAbs), [][]complex128{{complex(inf, nan)}}, complex(inf, 0)},
		{"tanh(inf+1i)", unaryOf(ir.OpTanh), [][]complex128{{complex(inf, 1)}}, 1},
		{"tanh(100+1i)", unaryOf(ir.OpTanh), [][]complex128{{complex(100, 1)}}, 1},
		{"(1+1i)/(1e30+1e30i)", binaryOf(ir.OpDiv), [][]complex128{{1 + 1i}, {complex(1e30, 1e30)}}, 1e-30},
	} {
		got := runComplex(t, c.f, c.in...)[0]
		if got != complex128(complex64(c.want)) {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	// A complex zero both ways, and IsZero of the parts.
	got := runComplex(t, func(b *ir.Builder, v []ir.Value) ir.Value {
		return b.Select(IsZero(b, v[0]), Zeros(b, v[0]), v[0])
	}, []complex128{0, complex(0, math.Copysign(0, -1)), 1e-40i, 3})
	if want := []complex128{0, 0, complex128(complex64(1e-40i)), 3}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("IsZero/Zeros: %v, want %v", got, want)
	}
}

func unaryOf(o ir.Op) func(b *ir.Builder, v []ir.Value) ir.Value {
	return func(b *ir.Builder, v []ir.Value) ir.Value { r, _ := ComplexUnary(b, o, v[0]); return r }
}

func binaryOf(o ir.Op) func(b *ir.Builder, v []ir.Value) ir.Value {
	return func(b *ir.Builder, v []ir.Value) ir.Value { r, _ := ComplexBinary(b, o, v[0], v[1]); return r }
}
