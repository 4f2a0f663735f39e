// Package philox defines the numbers OpRng draws: TensorFlow's stateless
// random kernels (StatelessRandomUniformV2, StatelessRandomUniformFullIntV2,
// StatelessRandomNormalV2, StatelessTruncatedNormalV2 with the Philox
// algorithm), so that a model draws the same numbers on the device as on
// TensorFlow's CPU. It is the one definition the host driver and the IR's
// reference interpreter share. Every constant and formula follows
// TensorFlow's sources, cited by file (xla/tsl/lib/random/ for the generator
// and the distributions, tensorflow/core/kernels/ for how a kernel fills a
// tensor).
package philox

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/metalplug/metalplug/backend/ir"
)

// Philox4x32-10's round constants (philox_random.h, kPhiloxW32A/B and
// kPhiloxM4x32A/B, the Random123 paper's).
const (
	w32A   = 0x9E3779B9
	w32B   = 0xBB67AE85
	m4x32A = 0xD2511F53
	m4x32B = 0xCD9E8D57
)

// Counter is Philox's 128-bit counter. TensorFlow holds it as four uint32
// (counter_[0] least significant) and reads the op's counter input of two
// uint64 as Lo = counter_[0] | counter_[1]<<32 and Hi = counter_[2] |
// counter_[3]<<32 (random_ops_util.h, GetCounterFromMem via Uint64ToUint32s).
type Counter struct{ Lo, Hi uint64 }

// Add advances the counter by n blocks of four numbers. TensorFlow's
// PhiloxRandom::Skip is this 128-bit addition for any n below 2^64 - 2^32
// (its carry out of the high half of n is lost beyond that, which no tensor
// reaches).
func (c Counter) Add(n uint64) Counter {
	lo, carry := bits.Add64(c.Lo, n, 0)
	return Counter{lo, c.Hi + carry}
}

// Block is PhiloxRandom::operator() without the counter increment: ten
// rounds, the key raised between rounds. The key's uint64 splits low half
// first (GetKeyFromMem).
func Block(c Counter, key uint64) [4]uint32 {
	x0, x1, x2, x3 := uint32(c.Lo), uint32(c.Lo>>32), uint32(c.Hi), uint32(c.Hi>>32)
	k0, k1 := uint32(key), uint32(key>>32)
	for r := range 10 {
		if r > 0 {
			k0 += w32A
			k1 += w32B
		}
		p0 := uint64(m4x32A) * uint64(x0)
		p1 := uint64(m4x32B) * uint64(x2)
		x0, x1, x2, x3 = uint32(p1>>32)^x1^k0, uint32(p1), uint32(p0>>32)^x3^k1, uint32(p0)
	}
	return [4]uint32{x0, x1, x2, x3}
}

// Stream hands out a generator's numbers one at a time, block after block:
// SingleSampleAdapter's order, and the order the fixed distributions read
// one block in.
type Stream struct {
	ctr  Counter
	key  uint64
	buf  [4]uint32
	used int
}

// NewStream starts a stream at counter c.
func NewStream(c Counter, key uint64) *Stream { return &Stream{ctr: c, key: key, used: 4} }

// Next is the stream's next number.
func (s *Stream) Next() uint32 {
	if s.used == 4 {
		s.buf = Block(s.ctr, s.key)
		s.ctr = s.ctr.Add(1)
		s.used = 0
	}
	s.used++
	return s.buf[s.used-1]
}

// uint32ToFloat is Uint32ToFloat (random_distributions_utils.h): 23 random
// mantissa bits under exponent 0 give [1, 2); subtracting 1 is exact.
func uint32ToFloat(x uint32) float32 {
	return math.Float32frombits(x&0x7fffff|0x3f800000) - 1
}

// boxMuller is BoxMullerFloat (random_distributions_utils.h) step by step in
// float32: u1 is clamped to 1e-7f so log never sees 0; v1 = 2.0f*M_PI*u is
// computed in double (M_PI is a double) and rounded to float; u2 =
// sqrt(-2*log(u1)) and sin, cos are the float functions (logf, sqrtf,
// sincosf). Go's package math is float64 only, so each float function is the
// float64 one rounded to float32: the correctly rounded result (but for
// double-rounding ties, of probability ~2^-29). sqrtf is correctly rounded by
// IEEE 754, so it always agrees; logf, sinf and cosf agree wherever the C
// library TensorFlow ran on rounds them correctly. glibc and Apple's libm
// promise under one ulp, not correct rounding, so on rare arguments a normal
// value may differ from TensorFlow's in its last bit. The published
// TensorFlow values in drivertest's golden table match bit for bit.
func boxMuller(x0, x1 uint32) (float32, float32) {
	const epsilon = float32(1.0e-7)
	u1 := uint32ToFloat(x0)
	if u1 < epsilon {
		u1 = epsilon
	}
	v1 := float32(2 * math.Pi * float64(uint32ToFloat(x1)))
	u2 := float32(math.Sqrt(float64(-2 * float32(math.Log(float64(u1))))))
	s, c := math.Sincos(float64(v1))
	return float32(s) * u2, float32(c) * u2
}

func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// Distribution is how one (distribution, dtype) pair consumes the
// generator. Outputs come in groups: group g is computed from a stream that
// starts at counter + g*Skip, whichever thread computes it, so a driver may
// fill groups in any order and in parallel.
//
//   - uniform floats: UniformDistribution, 4 outputs per Philox block, each
//     from one uint32's low mantissa bits (23 for float, 10 for half, 7 for
//     bfloat16, Uint16ToHalf and Uint16ToGfloat16);
//   - uniform int32/int64: UniformFullIntDistribution32/64, a uint32 as is,
//     or two per int64 (the first low), so 2 int64 per block;
//   - normal: NormalDistribution, Box-Muller on pairs, 4 per block, rounded
//     to half or bfloat16 afterwards;
//   - truncated normal: TruncatedNormalDistribution over a
//     SingleSampleAdapter: pairs of uint32 in stream order, Box-Muller,
//     keeping each value with |x| < 2 (tested in float, before any rounding
//     to half), until 4 are kept.
//
// The fill order is FillPhiloxRandomTask's (random_op_cpu.h): group g of the
// fixed-count distributions is block counter+g; the truncated normal's group
// g starts its stream at counter+256g (kReservedSamplesPerOutput = 256
// uint32 per output, 4 per block) and reads on past that only in the
// astronomically rare case of 1024 uint32 yielding fewer than 4 values. A
// last partial group keeps its first outputs. Hence the sharding TensorFlow
// chooses never shows in the result.
type Distribution struct {
	Group int    // outputs per group (Distribution::kResultElementCount)
	Skip  uint64 // Philox blocks between the starts of consecutive groups
	// Floats is set for float dtypes: it writes a group's values, as
	// float32, before any rounding to a half type (f has Group elements).
	Floats func(f []float32, s *Stream)
	// Ints is set for integer dtypes.
	Ints func(v []int64, s *Stream)
}

// Of is the distribution OpRng uses for dist and d.
func Of(dist ir.RngDistribution, d ir.DType) (Distribution, error) {
	half := d == ir.F16 || d == ir.BF16
	switch {
	case dist == ir.RngUniform && d == ir.F32:
		return Distribution{Group: 4, Skip: 1, Floats: func(f []float32, s *Stream) {
			for i := range f {
				f[i] = uint32ToFloat(s.Next())
			}
		}}, nil
	case dist == ir.RngUniform && half:
		// (1 + m/2^k) - 1 in the half type is m/2^k exactly, computed in
		// float32 and narrowed without rounding.
		mask, scale := uint32(0x7f), float32(1.0/128)
		if d == ir.F16 {
			mask, scale = 0x3ff, 1.0/1024
		}
		return Distribution{Group: 4, Skip: 1, Floats: func(f []float32, s *Stream) {
			for i := range f {
				f[i] = float32(s.Next()&mask) * scale
			}
		}}, nil
	case dist == ir.RngUniform && d == ir.I32:
		return Distribution{Group: 4, Skip: 1, Ints: func(v []int64, s *Stream) {
			for i := range v {
				v[i] = int64(int32(s.Next()))
			}
		}}, nil
	case dist == ir.RngUniform && d == ir.I64:
		return Distribution{Group: 2, Skip: 1, Ints: func(v []int64, s *Stream) {
			for i := range v {
				lo := s.Next()
				v[i] = int64(uint64(lo) | uint64(s.Next())<<32)
			}
		}}, nil
	case dist == ir.RngNormal && (d == ir.F32 || half):
		return Distribution{Group: 4, Skip: 1, Floats: func(f []float32, s *Stream) {
			for i := 0; i < 4; i += 2 {
				a := s.Next()
				f[i], f[i+1] = boxMuller(a, s.Next())
			}
		}}, nil
	case dist == ir.RngTruncatedNormal && (d == ir.F32 || half):
		return Distribution{Group: 4, Skip: 256, Floats: func(f []float32, s *Stream) {
			for n := 0; n < 4; {
				a := s.Next()
				f0, f1 := boxMuller(a, s.Next())
				if abs32(f0) < 2 {
					f[n] = f0
					n++
				}
				if n < 4 && abs32(f1) < 2 {
					f[n] = f1
					n++
				}
			}
		}}, nil
	}
	return Distribution{}, fmt.Errorf("%v numbers of type %v are not defined", dist, d)
}

// Stream is the stream group g reads, for the op's key and counter.
func (d Distribution) Stream(key uint64, c Counter, g int) *Stream {
	return NewStream(c.Add(uint64(g)*d.Skip), key)
}
