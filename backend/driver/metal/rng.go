package metal

import (
	"github.com/metalplug/metalplug/backend/driver/metal/gpu"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() { registerLowering(lowerRng, ir.OpRng) }

// Philox4x32-10's constants (the host driver's rng.go cites their source).
const (
	philoxW32A   = 0x9E3779B9
	philoxW32B   = 0xBB67AE85
	philoxM4x32A = 0xD2511F53
	philoxM4x32B = 0xCD9E8D57
)

// lowerRng runs Philox4x32-10 in the graph, bit for bit TensorFlow's (and
// the host driver's) stream: one generator block per group of outputs, block
// counter+g for group g. The 32-bit words live in int64 lanes, so that sums
// and 16-bit partial products never overflow and the 32x32->64 multiply is
// assembled exactly from four of them; xor, and and shifts are MPSGraph's
// bitwise ops (macOS 13). Uniform floats take the low mantissa bits as
// m/2^bits, exact in float32, which is TensorFlow's (1+m/2^bits)-1.
//
// Normal and truncated normal numbers run on the CPU: TensorFlow computes
// Box-Muller with the C library's logf, sinf and cosf, and the GPU's
// transcendental functions do not round the same way, so the bits, which
// the conformance suite checks, would differ.
func lowerRng(l *lowering, in ir.Instr, args []val) (tensor, error) {
	d := in.Type.DType
	if in.Rng.Distribution != ir.RngUniform {
		return tensor{}, fallback(in.Op, "%v numbers must match TensorFlow's CPU bit for bit", in.Rng.Distribution)
	}
	group := 4
	if d == ir.I64 {
		group = 2
	}
	n := in.Type.Shape.Size()
	groups := (n + group - 1) / group
	key := args[0].t
	ctr := args[1].t
	lo := l.slice(ctr, []int{0}, []int{1}, []int{1})
	hi := l.slice(ctr, []int{1}, []int{2}, []int{1})
	k0, k1 := l.word(key, 0), l.word(key, 1)
	w := [4]tensor{l.word(lo, 0), l.word(lo, 1), l.word(hi, 0), l.word(hi, 1)}

	// counter + g, as a 128-bit addition over the four words.
	g := l.iotaAlong(ir.Shape{groups}, 0, i64, groups)
	m32 := l.intConst(0xffffffff, i64)
	s32 := l.intConst(32, i64)
	var x [4]tensor
	carry := g
	for i := range 4 {
		sum := l.add(w[i], carry)
		x[i] = l.band(sum, m32)
		carry = l.shr(sum, s32)
	}
	for round := range 10 {
		if round > 0 {
			k0 = l.band(l.add(k0, l.intConst(philoxW32A, i64)), m32)
			k1 = l.band(l.add(k1, l.intConst(philoxW32B, i64)), m32)
		}
		hi0, lo0 := l.mulHiLo(x[0], philoxM4x32A)
		hi1, lo1 := l.mulHiLo(x[2], philoxM4x32B)
		x = [4]tensor{l.bxor(l.bxor(hi1, x[1]), k0), lo1, l.bxor(l.bxor(hi0, x[3]), k1), lo0}
	}

	var lanes []tensor
	switch d {
	case ir.I64:
		for i := 0; i < 4; i += 2 {
			lanes = append(lanes, l.bor(x[i], l.shl(x[i+1], s32))) // wraps into the sign bit
		}
	case ir.I32:
		for _, v := range x {
			// Two's complement: words from 2^31 up are negative.
			v = l.sel(l.ge(v, l.intConst(1<<31, i64)), l.sub(v, l.intConst(1<<32, i64)), v)
			lanes = append(lanes, l.cast(v, i32))
		}
	case ir.F32, ir.F16, ir.BF16:
		bits := map[ir.DType]int{ir.F32: 23, ir.F16: 10, ir.BF16: 7}[d]
		mask := l.intConst(1<<bits-1, i64)
		scale := l.scalar(1/float64(int64(1)<<bits), gpu.Float32)
		for _, v := range x {
			lanes = append(lanes, l.mul(l.cast(l.band(v, mask), gpu.Float32), scale))
		}
	default:
		return tensor{}, fallback(in.Op, "uniform %v", d)
	}
	cols := make([]tensor, len(lanes))
	for i, v := range lanes {
		cols[i] = l.reshape(v, []int{groups, 1})
	}
	all := l.reshape(l.concat(cols, 1), []int{groups * group})
	if groups*group != n {
		all = l.slice(all, []int{0}, []int{n}, []int{1})
	}
	return l.toShape(all, in.Type), nil
}

// word is the low (i == 0) or high (i == 1) 32-bit word of an int64 tensor,
// as a non-negative int64.
func (l *lowering) word(x tensor, i int) tensor {
	if i == 1 {
		x = l.shr(x, l.intConst(32, i64)) // arithmetic; the mask below drops the sign
	}
	return l.band(x, l.intConst(0xffffffff, i64))
}

// mulHiLo is the high and low 32-bit words of the 64-bit product of a
// 32-bit word a (int64 lanes) and the constant m, from 16-bit halves so that
// no intermediate reaches 2^63.
func (l *lowering) mulHiLo(a tensor, m int64) (hi, lo tensor) {
	c := func(v int64) tensor { return l.intConst(v, i64) }
	m16 := c(0xffff)
	s16 := c(16)
	al, ah := l.band(a, m16), l.shr(a, s16)
	ml, mh := c(m&0xffff), c(m>>16)
	ll, lh := l.mul(al, ml), l.mul(al, mh)
	hl, hh := l.mul(ah, ml), l.mul(ah, mh)
	mid := l.add(l.add(l.shr(ll, s16), l.band(lh, m16)), l.band(hl, m16))
	hi = l.add(l.add(l.add(hh, l.shr(lh, s16)), l.shr(hl, s16)), l.shr(mid, s16))
	lo = l.bor(l.shl(l.band(mid, m16), s16), l.band(ll, m16))
	return hi, lo
}
