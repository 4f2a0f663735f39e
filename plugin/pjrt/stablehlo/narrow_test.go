package stablehlo

import (
	"math"
	"slices"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// runNarrow builds a program of one parameter of dtype in (shape [n]) and
// the result f makes of it, and runs it on the reference interpreter.
func runNarrow(t *testing.T, in ir.DType, data []byte, f func(b *ir.Builder, x ir.Value) ir.Value) eval.Tensor {
	t.Helper()
	b := ir.NewBuilder()
	typ := ir.TensorType{DType: in, Shape: ir.Shape{len(data) / in.Size()}}
	x := b.Parameter(typ)
	p, err := b.Build(f(b, x))
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(p); err != nil {
		t.Fatal(err)
	}
	out, err := eval.Run(p, []eval.Tensor{eval.FromBytes(typ, data)})
	if err != nil {
		t.Fatal(err)
	}
	return out[0]
}

func f32Bytes(xs []float32) []byte {
	out := make([]byte, 0, 4*len(xs))
	for _, x := range xs {
		u := math.Float32bits(x)
		out = append(out, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	}
	return out
}

// canonicalNaN is the code a NaN of sign neg encodes to (as ml_dtypes
// writes it).
func canonicalNaN(n *narrowType, neg bool) int64 {
	var sign int64
	if neg {
		sign = 1 << (n.bits - 1)
	}
	switch n.spec {
	case ieee:
		return sign | int64(1<<n.exp-1)<<n.mant | 1<<(n.mant-1)
	case fn:
		return sign | (1<<(n.bits-1) - 1)
	case fnuz:
		return 1 << (n.bits - 1)
	}
	return 0xFF
}

// TestNarrowTables: every code of every format decodes (through the IR's
// gather) to the table's value and encodes back to itself, NaNs with their
// sign and payload (a bitcast gives them back); rounding a decoded value to its format
// changes nothing; the largest finite value and the smallest subnormal are
// ml_dtypes' (finfo max and smallest_subnormal).
func TestNarrowTables(t *testing.T) {
	known := map[mlir.FloatKind][2]float64{
		mlir.F8E5M2: {57344, 0x1p-16}, mlir.F8E4M3FN: {448, 0x1p-9}, mlir.F8E4M3B11FNUZ: {30, 0x1p-13},
		mlir.F8E5M2FNUZ: {57344, 0x1p-17}, mlir.F8E4M3FNUZ: {240, 0x1p-10}, mlir.F8E4M3: {240, 0x1p-9},
		mlir.F8E3M4: {15.5, 0x1p-6}, mlir.F8E8M0FNU: {0x1p127, 0x1p-127}, mlir.F6E2M3FN: {7.5, 0.125},
		mlir.F6E3M2FN: {28, 0.0625}, mlir.F4E2M1FN: {6, 0.5},
	}
	for kind, n := range narrowFloats {
		t.Run(n.name, func(t *testing.T) {
			codes := make([]byte, 1<<n.bits)
			for i := range codes {
				codes[i] = byte(i)
			}
			dec := runNarrow(t, ir.U8, codes, n.fromBits)
			back := runNarrow(t, ir.U8, codes, func(b *ir.Builder, x ir.Value) ir.Value { return n.toBits(b, n.fromBits(b, x)) })
			held := runNarrow(t, ir.U8, codes, func(b *ir.Builder, x ir.Value) ir.Value { return n.toBits(b, n.hold(b, n.fromBits(b, x))) })
			minSub := math.Inf(1)
			for c := range codes {
				v := float64(n.table[c])
				if g := dec.F[c]; g != v && !(math.IsNaN(g) && math.IsNaN(v)) {
					t.Errorf("code %#x decodes to %v, the table says %v", c, g, v)
				}
				want := int64(c) // NaNs too: their sign and payload are kept
				if back.I[c] != want {
					t.Errorf("code %#x (%v) encodes back to %#x, want %#x", c, v, back.I[c], want)
				}
				if held.I[c] != want {
					t.Errorf("code %#x (%v) rounded to its format is %#x, want %#x", c, v, held.I[c], want)
				}
				if v > 0 && v < minSub {
					minSub = v
				}
			}
			if k := known[kind]; float64(n.maxFinite) != k[0] || minSub != k[1] {
				t.Errorf("largest finite %v, smallest positive %v; ml_dtypes has %v and %v", n.maxFinite, minSub, k[0], k[1])
			}
		})
	}
}

// TestNarrowRounding: float32 values between two neighbouring values of a
// format round to the nearer, a tie to the even code (E8M0: away from
// zero), values beyond the largest finite one to the format's overflow,
// and NaN, infinities and zeros as ml_dtypes converts them.
func TestNarrowRounding(t *testing.T) {
	for _, n := range narrowFloats {
		t.Run(n.name, func(t *testing.T) {
			code := map[float32]int64{}
			var pos []float32
			for c, v := range n.table {
				f := float64(v)
				if math.IsNaN(f) || math.IsInf(f, 0) || (v == 0 && math.Signbit(f)) {
					continue
				}
				code[v] = int64(c)
				if v >= 0 {
					pos = append(pos, v)
				}
			}
			slices.Sort(pos)
			var in []float32
			var want []int64
			add := func(x float32, c int64) { in, want = append(in, x), append(want, c) }
			signs := []float32{1, -1}
			if n.spec == e8m0 {
				signs = signs[:1]
			}
			for _, sg := range signs {
				for i := 0; i+1 < len(pos); i++ {
					lo, hi := pos[i], pos[i+1]
					mid := (lo + hi) / 2
					clo, chi := code[sg*lo], code[sg*hi]
					if sg*lo == 0 {
						clo = 0 // -0 is +0's code here; fixed below
						if n.spec != fnuz && sg < 0 {
							clo = 1 << (n.bits - 1)
						}
					}
					tie := clo
					if chi%2 == 0 || n.spec == e8m0 {
						tie = chi
					}
					add(sg*math.Nextafter32(mid, lo), clo)
					add(sg*mid, tie)
					add(sg*math.Nextafter32(mid, float32(math.Inf(1))), chi)
				}
				top := pos[len(pos)-1]
				over := map[special]int64{ieee: int64(1<<n.exp-1) << n.mant, fn: canonicalNaN(n, false), fnuz: canonicalNaN(n, false),
					e8m0: 0xFF, finite: code[top]}[n.spec]
				if sg < 0 && n.spec != fnuz {
					over |= 1 << (n.bits - 1)
				}
				add(sg*top*4, over)
				add(sg*float32(math.Inf(1)), over)
			}
			nan := float32(math.NaN())
			switch n.spec {
			case e8m0:
				add(0, 0xFF)
				add(float32(math.Copysign(0, -1)), 0xFF)
				add(-1, 0xFF)
				add(nan, 0xFF)
				add(0x1p-130, 0) // a float32 subnormal: the smallest value
			case fnuz:
				add(float32(math.Copysign(0, -1)), 0)
				add(-pos[1]/4, 0) // rounds to -0, which is +0
				add(nan, canonicalNaN(n, false))
			case finite:
				add(nan, 1<<(n.bits-1)) // ml_dtypes: a zero of the opposite sign
			default:
				add(float32(math.Copysign(0, -1)), 1<<(n.bits-1))
				add(nan, canonicalNaN(n, false))
			}
			got := runNarrow(t, ir.F32, f32Bytes(in), func(b *ir.Builder, x ir.Value) ir.Value { return n.toBits(b, n.hold(b, x)) })
			bad := 0
			for i := range in {
				if got.I[i] != want[i] && bad < 8 {
					bad++
					t.Errorf("%v (%#08x) rounds to code %#x, want %#x", in[i], math.Float32bits(in[i]), got.I[i], want[i])
				}
			}
		})
	}
}

// TestNarrowInts: the held value of an s4, u4, s2 or u2 byte is its low
// bits (sign-extended when signed), and its code those bits again.
func TestNarrowInts(t *testing.T) {
	codes := make([]byte, 256)
	for i := range codes {
		codes[i] = byte(i)
	}
	for _, n := range narrowInts {
		got := runNarrow(t, n.held(), codes, n.fromBits)
		back := runNarrow(t, n.held(), codes, func(b *ir.Builder, x ir.Value) ir.Value { return n.toBits(b, n.fromBits(b, x)) })
		for c := range codes {
			low := int64(c) & (1<<n.bits - 1)
			want := low
			if n.signed && low >= 1<<(n.bits-1) {
				want -= 1 << n.bits
			}
			if got.I[c] != want || back.I[c]&0xFF != low {
				t.Errorf("%s: byte %#x holds %d and gives back %#x, want %d and %#x", n.name, c, got.I[c], back.I[c], want, low)
			}
		}
	}
}
