package drivertest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// RngGolden is one draw of OpRng whose numbers TensorFlow's CPU kernels
// produced for the same key and counter. Drivers must reproduce them, bit
// for bit unless the row's MaxULP allows more: the IR promises that
// stateless random ops agree with TensorFlow's CPU.
type RngGolden struct {
	Source  string    `json:"source"` // where the numbers come from
	Dist    string    `json:"dist"`   // "uniform", "normal" or "truncated_normal"
	DType   string    `json:"dtype"`  // "float32", "float16", "bfloat16", "int32" or "int64"
	Shape   []int     `json:"shape"`
	Key     uint64    `json:"key"`     // TensorFlow's uint64 key
	Counter [2]uint64 `json:"counter"` // TensorFlow's uint64 counter, low word first
	Want    []float64 `json:"want"`    // row-major; float types compare as the float32 nearest
	WantInt []int64   `json:"want_int,omitempty"`
	// MaxULP allows float results this many ulps (of DType) from Want; 0
	// demands the exact bits. Normal and truncated normal values pass
	// through the C library's logf, sinf and cosf, which are not correctly
	// rounded: rows captured on glibc 2.36 differ from the correctly rounded
	// functions in about 1.5% of normal values, by at most 3 ulp (measured
	// over 4e7 Box-Muller pairs), so such rows need 3 here.
	MaxULP int64 `json:"max_ulp,omitempty"`
}

// TensorFlowRngGolden is the built-in table. The stateful RandomUniform and
// RandomNormal ops with attributes seed and seed2 start Philox at key = seed
// and counter = [0, seed2] (GuardedPhiloxRandom::Init builds
// PhiloxRandom(seed, seed2), whose constructor puts seed2 in the counter's
// high word) and fill exactly as the stateless V2 kernels do, so their
// published outputs serve.
//
// More rows can come without editing this file: point the environment
// variable TensorFlowRngGoldenEnv at a JSON array of RngGolden. To capture
// rows from TensorFlow's CPU:
//
//	import json, tensorflow as tf
//	rows = []
//	for dist, op in [("uniform", tf.raw_ops.StatelessRandomUniformV2),
//	                 ("normal", tf.raw_ops.StatelessRandomNormalV2),
//	                 ("truncated_normal", tf.raw_ops.StatelessTruncatedNormalV2)]:
//	    for dtype in [tf.float32, tf.float16, tf.bfloat16]:
//	        key, counter, shape = [123456789], [7, 2**40 + 3], [5, 7]
//	        with tf.device("CPU"):
//	            x = op(shape=shape, key=tf.constant(key, tf.uint64),
//	                   counter=tf.constant(counter, tf.uint64), alg=1, dtype=dtype)
//	        rows.append(dict(source="TF " + tf.__version__, dist=dist, dtype=dtype.name,
//	                         shape=shape, key=key[0], counter=counter,
//	                         max_ulp=0 if dist == "uniform" else 3,  # see RngGolden.MaxULP
//	                         want=[float(v) for v in tf.reshape(tf.cast(x, tf.float32), [-1]).numpy()]))
//	# integers: tf.raw_ops.StatelessRandomUniformFullIntV2(..., dtype=tf.int32 or tf.int64),
//	# dist="uniform", want_int=[int(v) for v in x.numpy().ravel()]
//	json.dump(rows, open("tf_rng_golden.json", "w"))
var TensorFlowRngGolden = []RngGolden{
	{
		Source: "TensorFlow CPU, RandomUniform seed=1 seed2=2 (a TF C++ client test, github.com/zhuge20100104/cppwork _tf/test_tf_session/tf_random_uniform_test.cpp)",
		Dist:   "uniform", DType: "float32", Shape: []int{2, 2}, Key: 1, Counter: [2]uint64{0, 2},
		Want: []float64{0.4063967466354370117, 0.8575996160507202148, 0.05539584159851074219, 0.08587229251861572266},
	},
	{
		Source: "TensorFlow CPU, RandomNormal seed=1 seed2=2 (same test suite, tf_random_normal_test.cpp)",
		Dist:   "normal", DType: "float32", Shape: []int{2, 2}, Key: 1, Counter: [2]uint64{0, 2},
		Want: []float64{-1.046779274940490723, 0.8397045731544494629, 1.235836386680603027, 2.063785314559936523},
	},
	{
		Source: "OpenVINO RandomUniform-8 specification, example 1 (TensorFlow-compatible), seed=150 seed2=10",
		Dist:   "uniform", DType: "float32", Shape: []int{3, 3}, Key: 150, Counter: [2]uint64{0, 10},
		Want: []float64{0.7011236, 0.30539632, 0.93931055, 0.9456035, 0.11694777, 0.50770056, 0.5197197, 0.22727466, 0.991374},
	},
}

// TensorFlowRngGoldenEnv names the environment variable holding the path of
// extra golden rows (a JSON array of RngGolden).
const TensorFlowRngGoldenEnv = "METALPLUG_TF_RNG_GOLDEN"

func rngDist(name string) (ir.RngDistribution, error) {
	for d := ir.RngUniform; d <= ir.RngTruncatedNormal; d++ {
		if d.String() == name {
			return d, nil
		}
	}
	return 0, fmt.Errorf("unknown distribution %q", name)
}

// rngDraw runs OpRng with the key and counter passed as parameters, as a
// frontend passes them, and returns the result's bytes.
func rngDraw(t *testing.T, h *harness, dist ir.RngDistribution, d ir.DType, shape []int, key uint64, ctr [2]uint64) []byte {
	t.Helper()
	kb := binary.LittleEndian.AppendUint64(nil, key)
	cb := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, ctr[0]), ctr[1])
	kt := tensor{T: tt(ir.I64, 1), Raw: kb}
	ct := tensor{T: tt(ir.I64, 2), Raw: cb}
	b := ir.NewBuilder()
	r := b.Rng(b.Parameter(kt.T), b.Parameter(ct.T), dist, tt(d, shape...))
	p, err := b.Build(r)
	if err != nil {
		t.Fatalf("build %v %v%v: %v", dist, d, shape, err)
	}
	return h.runBytes(t, p, kt, ct)[0]
}

func u32s(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

func u16s(b []byte) []uint16 {
	v := make([]uint16, len(b)/2)
	for i := range v {
		v[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return v
}

// ulps is how many representable float32 values lie between a and b.
func ulps(a, b float32) int64 {
	key := func(f float32) int64 {
		u := int64(math.Float32bits(f))
		if u&(1<<31) != 0 {
			return -(u &^ (1 << 31))
		}
		return u
	}
	d := key(a) - key(b)
	return max(d, -d)
}

// ulpsIn is how many values of dtype d (a float type) lie between a and b,
// which must be representable in it.
func ulpsIn(d ir.DType, a, b float64) int64 {
	if d == ir.F32 || !d.IsFloat() {
		return ulps(float32(a), float32(b))
	}
	key := func(v float64) int64 {
		h := int64(u16s(encode(d, []float64{v}))[0])
		if h&0x8000 != 0 {
			return -(h &^ 0x8000)
		}
		return h
	}
	diff := key(a) - key(b)
	return max(diff, -diff)
}

// checkGolden compares a draw with TensorFlow's numbers, exactly unless the
// row allows ulps.
func checkGolden(t *testing.T, h *harness, g RngGolden) {
	t.Helper()
	dist, err := rngDist(g.Dist)
	if err != nil {
		t.Errorf("%s: %v", g.Source, err)
		return
	}
	d, err := ir.ParseDType(g.DType)
	if err != nil {
		t.Errorf("%s: %v", g.Source, err)
		return
	}
	got := rngDraw(t, h, dist, d, g.Shape, g.Key, g.Counter)
	vals := decode(d, got)
	n := ir.Shape(g.Shape).Size()
	bad, inexact := 0, 0
	for i := range n {
		var ok bool
		var want, have any = nil, vals[i]
		switch {
		case d == ir.I64 && g.WantInt != nil:
			v := int64(binary.LittleEndian.Uint64(got[8*i:]))
			ok, want, have = v == g.WantInt[i], g.WantInt[i], v
		case g.WantInt != nil:
			ok, want, have = vals[i] == float64(g.WantInt[i]), g.WantInt[i], int64(vals[i])
		case i < len(g.Want):
			// The stored values are float32 (or narrower) printed in
			// decimal; the float32 nearest is the exact value.
			u := ulpsIn(d, vals[i], g.Want[i])
			ok, want = u <= g.MaxULP, float32(g.Want[i])
			if u != 0 {
				inexact++
			}
		default:
			want = "a value"
		}
		if !ok {
			if bad < 5 {
				t.Errorf("%s: %s %v%v key %#x counter %#x: element %d = %v, want %v",
					g.Source, g.Dist, d, g.Shape, g.Key, g.Counter, i, have, want)
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d elements differ", g.Source, bad)
	}
	if inexact > 0 {
		t.Logf("%s: %d of %d elements within %d ulp but not exact", g.Source, inexact, n, g.MaxULP)
	}
}

// philoxKAT are the Random123 known-answer vectors for Philox4x32-10
// (counter words, key words, output words, all least significant first).
var philoxKAT = []struct {
	ctr [4]uint32
	key [2]uint32
	out [4]uint32
}{
	{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
	{[4]uint32{^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0)}, [2]uint32{^uint32(0), ^uint32(0)},
		[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
	{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
		[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
}

func testRng(t *testing.T, h *harness) {
	t.Run("philox known answers", func(t *testing.T) {
		for _, v := range philoxKAT {
			// TensorFlow's uint64 key and counter words are the Philox
			// words in pairs, low first.
			key := uint64(v.key[0]) | uint64(v.key[1])<<32
			ctr := [2]uint64{uint64(v.ctr[0]) | uint64(v.ctr[1])<<32, uint64(v.ctr[2]) | uint64(v.ctr[3])<<32}
			got := u32s(rngDraw(t, h, ir.RngUniform, ir.I32, []int{4}, key, ctr))
			if !slices.Equal(got, v.out[:]) {
				t.Errorf("Philox4x32-10(counter %08x, key %08x) = %08x, want %08x", v.ctr, v.key, got, v.out)
			}
		}
		// OpenVINO's TensorFlow-compatible RandomUniform-8, example 3:
		// int32 in [50, 100) with seed=80 seed2=100 is 50 + bits % 50.
		bits := u32s(rngDraw(t, h, ir.RngUniform, ir.I32, []int{6}, 80, [2]uint64{0, 100}))
		var got []uint32
		for _, b := range bits {
			got = append(got, 50+b%50)
		}
		if want := []uint32{65, 70, 56, 59, 82, 92}; !slices.Equal(got, want) {
			t.Errorf("50 + bits %% 50 with key 80 counter [0 100] = %v, want %v", got, want)
		}
	})
	t.Run("tensorflow golden", func(t *testing.T) {
		rows := slices.Clone(TensorFlowRngGolden)
		if path := os.Getenv(TensorFlowRngGoldenEnv); path != "" {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%s: %v", TensorFlowRngGoldenEnv, err)
			}
			var extra []RngGolden
			if err := json.Unmarshal(data, &extra); err != nil {
				t.Fatalf("%s=%s: %v", TensorFlowRngGoldenEnv, path, err)
			}
			rows = append(rows, extra...)
			t.Logf("%d golden rows from %s", len(extra), path)
		}
		for _, g := range rows {
			checkGolden(t, h, g)
		}
	})
	t.Run("size and counter", func(t *testing.T) { testRngPrefix(t, h) })
	t.Run("statistics", func(t *testing.T) { testRngStatistics(t, h) })
}

// testRngPrefix checks what the counter-based layout implies: a draw's
// numbers do not depend on its size, and advancing the counter by one block
// shifts the fixed-size distributions by one group, carrying across the
// counter's 64-bit words.
func testRngPrefix(t *testing.T, h *harness) {
	type kind struct {
		dist  ir.RngDistribution
		d     ir.DType
		group int // outputs per Philox block, 0 when not fixed
	}
	kinds := []kind{
		{ir.RngUniform, ir.F32, 4}, {ir.RngUniform, ir.F16, 4}, {ir.RngUniform, ir.BF16, 4},
		{ir.RngUniform, ir.I32, 4}, {ir.RngUniform, ir.I64, 2},
		{ir.RngNormal, ir.F32, 4}, {ir.RngNormal, ir.BF16, 4}, {ir.RngNormal, ir.F16, 4},
		{ir.RngTruncatedNormal, ir.F32, 0}, {ir.RngTruncatedNormal, ir.F16, 0}, {ir.RngTruncatedNormal, ir.BF16, 0},
	}
	key := uint64(987654321)
	for _, k := range kinds {
		size := k.d.Size()
		long := rngDraw(t, h, k.dist, k.d, []int{5, 7}, key, [2]uint64{^uint64(0), 7})
		short := rngDraw(t, h, k.dist, k.d, []int{5}, key, [2]uint64{^uint64(0), 7})
		if !slices.Equal(long[:len(short)], short) {
			t.Errorf("%v %v: a draw of 5 is not the start of a draw of 35", k.dist, k.d)
		}
		if k.group == 0 {
			continue
		}
		next := rngDraw(t, h, k.dist, k.d, []int{5, 7}, key, [2]uint64{0, 8})
		if !slices.Equal(long[k.group*size:], next[:len(long)-k.group*size]) {
			t.Errorf("%v %v: counter [2^64-1, 7] + 1 block does not continue as counter [0, 8]", k.dist, k.d)
		}
		other := rngDraw(t, h, k.dist, k.d, []int{5, 7}, key+1, [2]uint64{^uint64(0), 7})
		if slices.Equal(long, other) {
			t.Errorf("%v %v: keys %d and %d draw the same numbers", k.dist, k.d, key, key+1)
		}
	}
}

func meanStd(v []float64) (mean, std float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(v)))
}

// testRngStatistics checks ranges exactly and moments loosely: each bound
// is over four standard errors for 8192 draws, and the draws are fixed, so
// the checks cannot flake.
func testRngStatistics(t *testing.T, h *harness) {
	const n = 8192
	key, ctr := uint64(20240611), [2]uint64{3, 0}
	for _, d := range h.keep([]ir.DType{ir.F32, ir.F16, ir.BF16}) {
		u := decode(d, rngDraw(t, h, ir.RngUniform, d, []int{n}, key, ctr))
		for i, v := range u {
			if !(v >= 0 && v < 1) {
				t.Errorf("uniform %v element %d = %v, outside [0, 1)", d, i, v)
				break
			}
		}
		if m, s := meanStd(u); math.Abs(m-0.5) > 0.015 || math.Abs(s-math.Sqrt(1.0/12)) > 0.015 {
			t.Errorf("uniform %v: mean %.4f, std %.4f; want 0.5 and %.4f", d, m, s, math.Sqrt(1.0/12))
		}
		z := decode(d, rngDraw(t, h, ir.RngNormal, d, []int{n}, key, ctr))
		if m, s := meanStd(z); math.Abs(m) > 0.045 || math.Abs(s-1) > 0.035 {
			t.Errorf("normal %v: mean %.4f, std %.4f; want 0 and 1", d, m, s)
		}
		tn := decode(d, rngDraw(t, h, ir.RngTruncatedNormal, d, []int{n}, key, ctr))
		for i, v := range tn {
			// float32 values are strictly inside; rounding to a half type
			// may reach ±2 itself.
			if math.IsNaN(v) || math.Abs(v) > 2 || (d == ir.F32 && math.Abs(v) >= 2) {
				t.Errorf("truncated normal %v element %d = %v, outside (-2, 2)", d, i, v)
				break
			}
		}
		// The standard normal truncated to (-2, 2) has std 0.8796.
		if m, s := meanStd(tn); math.Abs(m) > 0.04 || math.Abs(s-0.8796) > 0.03 {
			t.Errorf("truncated normal %v: mean %.4f, std %.4f; want 0 and 0.8796", d, m, s)
		}
	}
	for _, d := range h.keep([]ir.DType{ir.I32, ir.I64}) {
		b := rngDraw(t, h, ir.RngUniform, d, []int{n}, key, ctr)
		// Every bit of the full-range integers is a fair coin.
		size := d.Size()
		for bit := range 8 * size {
			ones := 0
			for i := 0; i < n; i++ {
				if b[i*size+bit/8]>>(bit%8)&1 != 0 {
					ones++
				}
			}
			if math.Abs(float64(ones)/n-0.5) > 0.025 {
				t.Errorf("uniform %v: bit %d is set in %d of %d draws", d, bit, ones, n)
			}
		}
	}
}
