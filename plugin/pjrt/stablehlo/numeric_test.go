package stablehlo

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// The numerical fixtures of testdata/ (see testdata/README.md): each
// program's artifact, translated and run on the reference interpreter,
// must give what jax's CPU gave.

type fixtureTensor struct {
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
	Data  string `json:"data"`
}

type fixture struct {
	Name     string            `json:"name"`
	Versions map[string]string `json:"versions"`
	Inputs   []fixtureTensor   `json:"inputs"`
	Outputs  []fixtureTensor   `json:"outputs"`
}

func (ft fixtureTensor) tensor() (eval.Tensor, error) {
	name := ft.DType
	// The IR holds ui16 and ui64 as the bits of int16 and int64.
	if held, ok := map[string]string{"uint16": "int16", "uint64": "int64"}[name]; ok {
		name = held
	}
	// Narrow types are their bytes at main's boundary.
	if n := fixtureNarrow(name); n != nil {
		name = n.boundary().String()
	}
	d, err := ir.ParseDType(name)
	if err != nil {
		return eval.Tensor{}, err
	}
	raw, err := base64.StdEncoding.DecodeString(ft.Data)
	if err != nil {
		return eval.Tensor{}, err
	}
	t := ir.TensorType{DType: d, Shape: ir.Shape(ft.Shape)}
	if len(raw) != t.Bytes() {
		return eval.Tensor{}, fmt.Errorf("%d bytes for %v", len(raw), t)
	}
	return eval.FromBytes(t, raw), nil
}

// tolerance is how far a float result may be from jax's: |got - want| <=
// Atol + Rtol*|want|. NaN must meet NaN and an infinity the same infinity;
// Exact programs compare every float bit for bit (signed zeros and NaN
// payloads aside, which jax's CPU does not keep stable either).
type tolerance struct {
	Rtol, Atol float64
	Exact      bool
}

// Float tolerances, by dtype, for elementwise programs. +, -, *, / and
// sqrt are correctly rounded on both sides (the interpreter computes in
// float64 and rounds once, which for these equals float32's own rounding),
// so they agree exactly. Transcendental functions differ: XLA's CPU uses
// its own approximations, the interpreter Go's math rounded to float32;
// measured, the worst is under 2 ulp (2^-23 = 1.2e-7 relative each), so
// 1e-6 (8 ulp) with an absolute floor of 1e-7 where a result nears 0 from
// a larger input (sin near pi; the floor is one ulp of 1). Half types are
// computed in float32 by XLA and rounded once, as the interpreter rounds
// its float64: one ulp of f16 (2^-10) and of bf16 (2^-7) covers a result
// on a rounding boundary (none differed, measured).
var dtypeTolerance = map[ir.DType]tolerance{
	ir.F32:  {Rtol: 1e-6, Atol: 1e-7},
	ir.F64:  {Rtol: 1e-13, Atol: 1e-300},
	ir.F16:  {Rtol: 1e-3, Atol: 6e-8},
	ir.BF16: {Rtol: 8e-3, Atol: 1e-38},
	ir.C64:  {Rtol: 1e-6, Atol: 1e-7},
}

// accumulated is the float32 tolerance of programs that sum products or
// chain many ops: XLA's CPU sums float32 in float32 (Eigen's blocked order),
// the interpreter in float64, so a sum of n terms of magnitude m differs by
// up to about n*m*2^-24; for these programs' sizes (16 to 40 terms of
// magnitude about 1, gradients through a few such sums) 4e-6 relative with
// a floor of 4e-7 holds with 3x to spare, measured.
var accumulated = tolerance{Rtol: 4e-6, Atol: 4e-7}

// programTolerance overrides the dtype's for programs whose results are
// exact (data movement, sorts, conversions) or accumulate rounding.
// Convolutions sum up to 54 products of normal inputs into results that
// cross zero, and their gradients sum those again, hence an absolute floor
// of 1e-5 (about 40 ulp of the typical magnitude of 2 to 8).
var programTolerance = map[string]tolerance{
	"converts":           {Exact: true},
	"reduce_precision":   {Exact: true},
	"random":             {Exact: true},
	"random_typed_key":   {Exact: true},
	"total_order":        {Exact: true},
	"sort":               {Exact: true},
	"indexing":           {Exact: true},
	"dynamic_slice":      {Exact: true},
	"sharding":           {Exact: true},
	"donation":           {Exact: true},
	"uint64_internal":    {Exact: true},
	"uint16_internal":    {Exact: true},
	"unsigned_boundary":  {Exact: true},
	"int64":              {Exact: true},
	"matmul":             accumulated,
	"einsum":             accumulated,
	"reductions":         accumulated,
	"softmax":            accumulated,
	"grad":               accumulated,
	"vmap":               accumulated,
	"scan":               accumulated,
	"loops":              accumulated,
	"mlp_adam":           accumulated,
	"cumulative":         accumulated,
	"pooling":            accumulated,
	"linalg_cholesky":    linalgTolerance,
	"linalg_triangular":  linalgTolerance,
	"linalg_qr":          linalgTolerance,
	"linalg_eigh":        linalgTolerance,
	"linalg_svd":         linalgTolerance,
	"linalg_eig":         linalgTolerance,
	"linalg_hessenberg":  linalgTolerance,
	"linalg_tridiagonal": linalgTolerance,
	"linalg_qr_pivoted":  linalgTolerance,
	"linalg_schur":       linalgTolerance,
	"fft":                accumulated,
	"bool_dot":           {Exact: true},
	"bool_conv":          {Exact: true},
	"conv_0d":            accumulated,
	"conv":               {Rtol: 1e-5, Atol: 1e-5},
	"conv_grad":          {Rtol: 1e-5, Atol: 1e-5},
	"narrow_convert":     {Exact: true},
	"narrow_ints":        {Exact: true},
	"narrow_bitcast":     {Exact: true},
}

// resultTolerance overrides the program's for single results. jax's
// random floats are made from the bits exactly (uniform, and bf16 and f16
// normals, agree bit for bit) except where a transcendental function is
// applied to them: normal is erf_inv(uniform), whose log1p differs from
// XLA's by an ulp now and then (1 of 6 values here, by 1 ulp);
// truncated_normal goes through erf and erf_inv, which amplify that
// (7 ulp of a value near 0.02), gumbel through log(-log(u)).
var resultTolerance = map[string]tolerance{
	"random/0": {Rtol: 2.4e-7},
	// Complex power is exp(y log x): the rounding of log x is scaled by
	// |y log x| (about 6 at the worst value here) on the way out.
	"complex_math/14":    {Rtol: 4e-6, Atol: 1e-7},
	"random_typed_key/3": {Rtol: 1e-6, Atol: 1e-7},
	"random_typed_key/4": {Rtol: 1e-6, Atol: 1e-7},
}

// ownBits are the programs whose values are the implementation's own
// (rng_bit_generator's bits, which StableHLO leaves to it and jax says
// differ between backends): their results keep jax's types and shapes, and
// a property replaces the comparison of values.
var ownBits = map[string]func(t *testing.T, args, got []eval.Tensor){
	"rbg": func(t *testing.T, args, got []eval.Tensor) {
		if slices.Equal(got[0].I, args[1].I) {
			t.Errorf("rng_bit_generator left its state as it was: %v", got[0].I)
		}
		for i, bits := range map[int]int{1: 8, 2: 16, 3: 32, 4: 32} {
			v := slices.Clone(got[i].I)
			for j := range v {
				v[j] &= 1<<bits - 1 // ui16 is held as int16 bits
			}
			if slices.Min(v) == slices.Max(v) {
				t.Errorf("result %d: %d equal draws %v", i, len(v), v[0])
			}
			for _, x := range v {
				if x < 0 || x >= 1<<bits {
					t.Fatalf("result %d: %d is not a %d-bit draw", i, x, bits)
				}
			}
			if i == 3 { // each bit of 256 draws is set about half the time
				for b := range bits {
					ones := 0
					for _, x := range v {
						ones += int(x >> b & 1)
					}
					if ones < 90 || ones > 166 {
						t.Errorf("bit %d is set in %d of 256 draws", b, ones)
					}
				}
			}
		}
		u, n := got[5].F, got[6].F
		var su, sn, sn2 float64
		for i := range u {
			if u[i] < 0 || u[i] >= 1 {
				t.Fatalf("uniform draw %v outside [0, 1)", u[i])
			}
			su, sn, sn2 = su+u[i], sn+n[i], sn2+n[i]*n[i]
		}
		m := float64(len(u))
		if mean := su / m; math.Abs(mean-0.5) > 0.02 {
			t.Errorf("the mean of %d uniform draws is %.4f", len(u), mean)
		}
		if mean, sd := sn/m, math.Sqrt(sn2/m-(sn/m)*(sn/m)); math.Abs(mean) > 0.06 || math.Abs(sd-1) > 0.05 {
			t.Errorf("%d normal draws have mean %.4f and deviation %.4f", len(n), mean, sd)
		}
	},
}

func loadFixtures(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in testdata/ (%v): run testdata/generate.py", err)
	}
	return files
}

func TestNumericsAgainstJaxCPU(t *testing.T) {
	for _, file := range loadFixtures(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var fx fixture
			if err := json.Unmarshal(raw, &fx); err != nil {
				t.Fatal(err)
			}
			code, err := os.ReadFile(strings.TrimSuffix(file, ".json") + ".mlir.bc")
			if err != nil {
				t.Fatal(err)
			}
			p, sig, err := Read(code)
			if err != nil {
				t.Fatalf("translate: %v", err)
			}
			if err := ir.Verify(p); err != nil {
				t.Fatalf("verify: %v", err)
			}
			args := make([]eval.Tensor, len(fx.Inputs))
			for i, in := range fx.Inputs {
				if args[i], err = in.tensor(); err != nil {
					t.Fatalf("input %d: %v", i, err)
				}
				if pt := p.Params[i]; pt.DType != args[i].Type.DType || !pt.Shape.Equal(args[i].Type.Shape) {
					t.Fatalf("input %d is %v, parameter %v", i, args[i].Type, pt)
				}
			}
			if len(sig.Args) != len(p.Params) || len(sig.Results) != len(p.Results) {
				t.Fatalf("signature %d args %d results, program %d and %d", len(sig.Args), len(sig.Results), len(p.Params), len(p.Results))
			}
			got, err := eval.Run(p, args)
			if err != nil {
				t.Fatalf("eval: %v", err)
			}
			if len(got) != len(fx.Outputs) {
				t.Fatalf("%d results, jax gave %d", len(got), len(fx.Outputs))
			}
			if prop, own := ownBits[name]; own {
				for i, o := range fx.Outputs {
					if want, err := o.tensor(); err != nil || !got[i].Type.Shape.Equal(want.Type.Shape) || got[i].Type.DType != want.Type.DType {
						t.Errorf("result %d is %v, jax's %v (%v)", i, got[i].Type, want.Type, err)
					}
				}
				prop(t, args, got)
				return
			}
			tol, ok := programTolerance[name]
			for i, o := range fx.Outputs {
				want, err := o.tensor()
				if err != nil {
					t.Fatalf("output %d: %v", i, err)
				}
				if g := got[i].Type; g.DType != want.Type.DType || !g.Shape.Equal(want.Type.Shape) {
					t.Errorf("result %d is %v, jax's %v", i, g, want.Type)
					continue
				}
				ti := tol
				if !ok {
					ti = dtypeTolerance[want.Type.DType]
				}
				if rt, ok := resultTolerance[fmt.Sprintf("%s/%d", name, i)]; ok {
					ti = rt
				}
				known := knownDifferences[fmt.Sprintf("%s/%d", name, i)]
				if n := fixtureNarrow(o.DType); n != nil && n.float {
					// Codes compare by what they stand for: any NaN
					// meets any NaN (XLA's sign of a computed NaN is
					// the machine's), other values exactly.
					got[i], want = decodeCodes(n, got[i]), decodeCodes(n, want)
					ti = tolerance{Exact: true}
				}
				msg, worst, seen := compareTensors(got[i], want, ti, known)
				if msg != "" {
					t.Errorf("result %d (%v): %s", i, want.Type, msg)
				}
				if known != nil && seen == 0 {
					t.Errorf("result %d: the known difference (%s) no longer shows: update knownDifferences", i, known.what)
				}
				if worst > 0 {
					t.Logf("result %d (%v): the worst difference uses %.2g of the tolerance", i, want.Type, worst)
				}
			}
		})
	}
}

// knownDiff is a difference between the IR's reference semantics and
// XLA's CPU that the translation does not paper over (see the README's
// "IR and XLA" section): where it shows, the interpreter's value is
// asserted instead of jax's.
type knownDiff struct {
	what string
	ok   func(got, want float64) bool // got is the interpreter's documented value
}

// knownDifferences, by program/result. XLA's CPU runs with
// subnormals flushed to zero (inputs and results of float32 arithmetic,
// and so of bf16, which it computes in float32); the interpreter keeps
// them: bf16(1e-38) * 3 is 3.0e-38 there, 0 in XLA.
//
// The interpreter holds f16 values as float64 and makes their bits again
// with ir.F32ToF16, which writes every NaN as 0x7e00: a bitcast through
// f16 keeps no NaN payload. Splitting a float32 NaN or infinity into two
// f16 and joining them back gives 0x7e000000 (4.25e37) where XLA gives the
// bits back.

var knownDifferences = map[string]*knownDiff{
	"converts/22": {"f16 NaN payloads are canonicalized to 0x7e00 by the interpreter", func(g, w float64) bool {
		return (math.IsNaN(w) || math.IsInf(w, 0)) && math.Float32bits(float32(g))&0x7fff0000 == 0x7e000000
	}},
	"elementwise_bf16/2":  {"a subnormal operand is flushed to zero by XLA", subnormalFlushed},
	"elementwise_bf16/13": {"a subnormal operand is flushed to zero by XLA", subnormalFlushed},
}

// subnormalFlushed: XLA gave 0 where the interpreter kept a result near
// float32's smallest normal, from a subnormal operand.
func subnormalFlushed(g, w float64) bool { return w == 0 && g != 0 && math.Abs(g) < 1e-37 }

// compareTensors reports the first mismatches (or ""), the worst float
// difference as a fraction of the tolerance, and how many elements a
// known difference covered.
func compareTensors(got, want eval.Tensor, tol tolerance, known *knownDiff) (string, float64, int) {
	d := want.Type.DType
	var bad []string
	n := want.Type.Shape.Size()
	worst := 0.0
	seen := 0
	for k := range n {
		var ok bool
		switch {
		case d.IsInt() || d == ir.Bool:
			ok = got.I[k] == want.I[k]
		case d == ir.C64:
			ok = closeFloat(real(got.C[k]), real(want.C[k]), tol, &worst) && closeFloat(imag(got.C[k]), imag(want.C[k]), tol, &worst)
		default:
			ok = closeFloat(got.F[k], want.F[k], tol, &worst)
			if !ok && known != nil && known.ok(got.F[k], want.F[k]) {
				ok = true
				seen++
			}
		}
		if !ok && len(bad) < 6 {
			idx := eval.Unravel(k, want.Type.Shape)
			switch {
			case d.IsInt() || d == ir.Bool:
				bad = append(bad, fmt.Sprintf("at %v got %d want %d", idx, got.I[k], want.I[k]))
			case d == ir.C64:
				bad = append(bad, fmt.Sprintf("at %v got %v want %v", idx, got.C[k], want.C[k]))
			default:
				bad = append(bad, fmt.Sprintf("at %v got %v want %v", idx, got.F[k], want.F[k]))
			}
		}
	}
	if len(bad) == 0 {
		return "", worst, seen
	}
	return strings.Join(bad, "; "), worst, seen
}

func closeFloat(g, w float64, tol tolerance, worst *float64) bool {
	switch {
	case math.IsNaN(w) || math.IsNaN(g):
		return math.IsNaN(w) && math.IsNaN(g)
	case math.IsInf(w, 0) || math.IsInf(g, 0):
		return g == w
	case tol.Exact:
		return g == w
	}
	diff := math.Abs(g - w)
	bound := tol.Atol + tol.Rtol*math.Abs(w)
	*worst = max(*worst, diff/bound)
	return diff <= bound
}

// linalgTolerance is the float32 tolerance of the linear algebra programs:
// jax's CPU runs LAPACK in float32 and the interpreter gonum's LAPACK in
// float64, rounded once, so the results differ by float32's rounding
// through an O(n^3) algorithm on matrices of up to 16 (condition numbers
// under 10), and svd goes through jax's QDWH iteration on this side.
var linalgTolerance = tolerance{Rtol: 1e-5, Atol: 1e-5}

// fixtureNarrow is the narrow type a fixture's numpy dtype name
// (ml_dtypes': float8_e4m3fn, int4) names, or nil.
func fixtureNarrow(name string) *narrowType {
	pjrt := map[string]string{"int4": "s4", "uint4": "u4", "int2": "s2", "uint2": "u2"}[name]
	for _, p := range []string{"float8_", "float6_", "float4_"} {
		if rest, ok := strings.CutPrefix(name, p); ok {
			pjrt = "f" + p[5:6] + rest
		}
	}
	for _, n := range narrowFloats {
		if n.name == pjrt {
			return n
		}
	}
	for _, n := range narrowInts {
		if n.name == pjrt {
			return n
		}
	}
	return nil
}

// decodeCodes is a tensor of a narrow float's codes as float32 values.
func decodeCodes(n *narrowType, t eval.Tensor) eval.Tensor {
	out := eval.New(ir.TensorType{DType: ir.F32, Shape: t.Type.Shape})
	for i, c := range t.I {
		out.F[i] = float64(n.table[int(c)&(len(n.table)-1)])
	}
	return out
}
