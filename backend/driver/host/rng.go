package host

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	register(opKernel{make: func(in ir.Instr, _ []ir.TensorType) (kernel, error) { return rngKernel(in) }}, ir.OpRng)
}

// OpRng reproduces TensorFlow's stateless random kernels
// (StatelessRandomUniformV2, StatelessRandomUniformFullIntV2,
// StatelessRandomNormalV2, StatelessTruncatedNormalV2 with the Philox
// algorithm) so that a model draws the same numbers on the device as on
// TensorFlow's CPU. Every constant and formula below follows TensorFlow's
// sources, cited by file (xla/tsl/lib/random/ for the generator and the
// distributions, tensorflow/core/kernels/ for how the kernels fill a tensor).

// Philox4x32-10's round constants (philox_random.h, kPhiloxW32A/B and
// kPhiloxM4x32A/B, the Random123 paper's).
const (
	philoxW32A   = 0x9E3779B9
	philoxW32B   = 0xBB67AE85
	philoxM4x32A = 0xD2511F53
	philoxM4x32B = 0xCD9E8D57
)

// philoxCounter is Philox's 128-bit counter. TensorFlow holds it as four
// uint32 (counter_[0] least significant) and reads the op's counter input
// of two uint64 as lo = counter_[0] | counter_[1]<<32 and hi = counter_[2] |
// counter_[3]<<32 (random_ops_util.h, GetCounterFromMem via Uint64ToUint32s).
type philoxCounter struct{ lo, hi uint64 }

// add advances the counter by n blocks of four numbers. TensorFlow's
// PhiloxRandom::Skip is this 128-bit addition for any n below 2^64 - 2^32
// (its carry out of the high half of n is lost beyond that, which no tensor
// reaches).
func (c philoxCounter) add(n uint64) philoxCounter {
	lo, carry := bits.Add64(c.lo, n, 0)
	return philoxCounter{lo, c.hi + carry}
}

// philoxBlock is PhiloxRandom::operator() without the counter increment: ten
// rounds, the key raised between rounds. The key's uint64 splits low half
// first (GetKeyFromMem).
func philoxBlock(c philoxCounter, key uint64) [4]uint32 {
	x0, x1, x2, x3 := uint32(c.lo), uint32(c.lo>>32), uint32(c.hi), uint32(c.hi>>32)
	k0, k1 := uint32(key), uint32(key>>32)
	for r := range 10 {
		if r > 0 {
			k0 += philoxW32A
			k1 += philoxW32B
		}
		p0 := uint64(philoxM4x32A) * uint64(x0)
		p1 := uint64(philoxM4x32B) * uint64(x2)
		x0, x1, x2, x3 = uint32(p1>>32)^x1^k0, uint32(p1), uint32(p0>>32)^x3^k1, uint32(p0)
	}
	return [4]uint32{x0, x1, x2, x3}
}

// uint32ToFloat is Uint32ToFloat (random_distributions_utils.h): 23 random
// mantissa bits under exponent 0 give [1, 2); subtracting 1 is exact.
func uint32ToFloat(x uint32) float32 {
	return math.Float32frombits(x&0x7fffff|0x3f800000) - 1
}

// boxMullerFloat is BoxMullerFloat (random_distributions_utils.h) step by
// step in float32: u1 is clamped to 1e-7f so log never sees 0; v1 =
// 2.0f*M_PI*u is computed in double (M_PI is a double) and rounded to float;
// u2 = sqrt(-2*log(u1)) and sin, cos are the float functions (logf, sqrtf,
// sincosf). Go's package math is float64 only, so each float function is the
// float64 one rounded to float32: the correctly rounded result (but for
// double-rounding ties, of probability ~2^-29). sqrtf is correctly rounded
// by IEEE 754, so it always agrees; logf, sinf and cosf agree wherever the C
// library TensorFlow ran on rounds them correctly. glibc and Apple's libm
// promise under one ulp, not correct rounding, so on rare arguments a normal
// value may differ from TensorFlow's in its last bit. The published
// TensorFlow values in drivertest's golden table match bit for bit.
func boxMullerFloat(x0, x1 uint32) (float32, float32) {
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

// rngGen fills one group of a distribution's outputs from the generator.
type rngGen struct {
	group int    // outputs per group (Distribution::kResultElementCount)
	skip  uint64 // Philox blocks between the starts of consecutive groups
	// fill writes one group; next yields the group's uint32 stream, block
	// after block.
	fill func(dst []byte, next func() uint32)
	size int // bytes per output element
}

// rngKernel picks TensorFlow's distribution for the dtype:
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
// fixed-count distributions is block counter+g, whichever thread computes it;
// the truncated normal's group g starts its stream at counter+256g
// (kReservedSamplesPerOutput = 256 uint32 per output, 4 per block) and reads
// on past that only in the astronomically rare case of 1024 uint32 yielding
// fewer than 4 values. A last partial group keeps its first outputs. Hence
// the sharding TensorFlow chooses never shows in the result, and neither
// does ours.
func rngKernel(in ir.Instr) (kernel, error) {
	d, dist := in.Type.DType, in.Rng.Distribution
	var g rngGen
	switch {
	case dist == ir.RngUniform && d == ir.F32:
		g = rngGen{group: 4, skip: 1, size: 4, fill: func(dst []byte, next func() uint32) {
			z := view[float32](dst)
			for i := range z {
				z[i] = uint32ToFloat(next())
			}
		}}
	case dist == ir.RngUniform && isHalf(d):
		// (1 + m/2^k) - 1 in the half type is m/2^k exactly, computed here
		// in float32 and narrowed without rounding.
		mask, scale := uint32(0x7f), float32(1.0/128)
		if d == ir.F16 {
			mask, scale = 0x3ff, 1.0/1024
		}
		g = rngGen{group: 4, skip: 1, size: 2, fill: func(dst []byte, next func() uint32) {
			var f [4]float32
			for i := range f {
				f[i] = float32(next()&mask) * scale
			}
			narrow(d, dst, f[:len(dst)/2])
		}}
	case dist == ir.RngUniform && d == ir.I32:
		g = rngGen{group: 4, skip: 1, size: 4, fill: func(dst []byte, next func() uint32) {
			z := view[int32](dst)
			for i := range z {
				z[i] = int32(next())
			}
		}}
	case dist == ir.RngUniform && d == ir.I64:
		g = rngGen{group: 2, skip: 1, size: 8, fill: func(dst []byte, next func() uint32) {
			z := view[int64](dst)
			for i := range z {
				lo := next()
				z[i] = int64(uint64(lo) | uint64(next())<<32)
			}
		}}
	case dist == ir.RngNormal && (d == ir.F32 || isHalf(d)):
		g = rngGen{group: 4, skip: 1, size: d.Size(), fill: func(dst []byte, next func() uint32) {
			var f [4]float32
			for i := 0; i < 4; i += 2 {
				a := next()
				f[i], f[i+1] = boxMullerFloat(a, next())
			}
			storeFloat(d, dst, f[:])
		}}
	case dist == ir.RngTruncatedNormal && (d == ir.F32 || isHalf(d)):
		g = rngGen{group: 4, skip: 256, size: d.Size(), fill: func(dst []byte, next func() uint32) {
			var f [4]float32
			for n := 0; n < 4; {
				a := next()
				f0, f1 := boxMullerFloat(a, next())
				if abs32(f0) < 2 {
					f[n] = f0
					n++
				}
				if n < 4 && abs32(f1) < 2 {
					f[n] = f1
					n++
				}
			}
			storeFloat(d, dst, f[:])
		}}
	default:
		return nil, fmt.Errorf("op rng: %v numbers of type %v are not implemented", dist, d)
	}
	return func(out []byte, ins [][]byte) {
		key := binary.LittleEndian.Uint64(ins[0])
		ctr := philoxCounter{binary.LittleEndian.Uint64(ins[1]), binary.LittleEndian.Uint64(ins[1][8:])}
		n := len(out) / g.size
		groups := (n + g.group - 1) / g.group
		parallelFor(groups, max(1, grainMath/(4*g.group)), func(lo, hi int) {
			for grp := lo; grp < hi; grp++ {
				s := philoxStream{ctr: ctr.add(uint64(grp) * g.skip), key: key, used: 4}
				end := min((grp+1)*g.group, n)
				g.fill(out[grp*g.group*g.size:end*g.size], s.next)
			}
		})
	}, nil
}

// philoxStream hands out a generator's numbers one at a time, block after
// block: SingleSampleAdapter's order, and the order the fixed distributions
// read one block in.
type philoxStream struct {
	ctr  philoxCounter
	key  uint64
	buf  [4]uint32
	used int
}

func (s *philoxStream) next() uint32 {
	if s.used == 4 {
		s.buf = philoxBlock(s.ctr, s.key)
		s.ctr = s.ctr.add(1)
		s.used = 0
	}
	s.used++
	return s.buf[s.used-1]
}

func abs32(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// storeFloat writes the leading values of f that fit dst, rounding to
// nearest even for half types, as Eigen::half and bfloat16 construct from
// float.
func storeFloat(d ir.DType, dst []byte, f []float32) {
	if d == ir.F32 {
		copy(view[float32](dst), f)
		return
	}
	narrow(d, dst, f[:len(dst)/2])
}
