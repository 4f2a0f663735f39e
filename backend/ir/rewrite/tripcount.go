package rewrite

import (
	"encoding/binary"
	"math"
	"math/big"

	"github.com/metalplug/metalplug/backend/ir"
)

// TripCount reports whether the while loop at p.Instrs[i] runs a number
// of times known when the program is compiled, and that number (0 when
// its condition is false from the start).
//
// It recognises the loops jax writes for fori_loop with Python-int bounds
// and for scan: among the carried values a counter k of an integer dtype
// (int8 to int64, uint8, uint32), which
//   - starts from a constant of p, directly or through ops that fold
//     (convert between integer dtypes, broadcast_in_dim, reshape, add,
//     subtract, multiply, negate, maximum, minimum of such values);
//   - is compared by the condition, which is that comparison alone:
//     compare(k, N) or compare(N, k), any direction (LT, LE, GT, GE, NE,
//     EQ), where N folds to a constant inside the condition, or is another
//     carried value that starts from a constant of p and that the body
//     hands on unchanged;
//   - is set by the body to k + s, s + k or k - s, s a (folding) constant
//     of the body, positive or negative.
//
// The count is exact, in the dtype's own arithmetic: a loop whose counter
// would wrap around before the condition fails (k < N stepping by -1, or
// past the dtype's largest value) is not recognised, nor is a step of 0
// under a condition true at the start. Anything else (a condition that
// also tests data, an and of two comparisons, a bound computed from the
// program's inputs, a counter the body computes otherwise, float
// counters) gives ok false, and so does a count above 2^31-1.
//
// For a loop inside a region, p is the region: a region sees only its
// parameters, so such a loop's count is known only from the region's own
// constants (Unroll tries again where it inlines the region).
func TripCount(p *ir.Program, i int) (n int, ok bool) {
	if p == nil || i < 0 || i >= len(p.Instrs) {
		return 0, false
	}
	in := p.Instrs[i]
	if in.Op != ir.OpWhile || len(in.Regions) != 2 {
		return 0, false
	}
	return tripCount(newFolder(p.Instrs), in)
}

// tripCount is TripCount of the loop in, whose operands are values of the
// program outer folds.
func tripCount(outer *folder, in ir.Instr) (int, bool) {
	cond, body := in.Regions[0], in.Regions[1]
	if cond == nil || body == nil || len(cond.Results) != 1 || len(body.Results) != len(in.Args) {
		return 0, false
	}
	c := cond.Instrs[cond.Results[0]]
	if c.Op != ir.OpCompare || len(c.Args) != 2 {
		return 0, false
	}
	cf, bf := newFolder(cond.Instrs), newFolder(body.Instrs)
	// Either side may be the counter; with both sides carried, the one
	// that steps is.
	for side := range 2 {
		k, other := c.Args[side], c.Args[1-side]
		dir := c.Compare
		if side == 1 {
			dir = flip(dir)
		}
		kp := cond.Instrs[k]
		if kp.Op != ir.OpParameter || kp.Type.Shape.Rank() != 0 || !kp.Type.DType.IsInt() {
			continue
		}
		j := kp.Param
		if j < 0 || j >= len(in.Args) {
			continue
		}
		k0, ok := outer.scalar(in.Args[j])
		if !ok {
			continue
		}
		bound, ok := boundOf(outer, cf, cond, body, in, other)
		if !ok {
			continue
		}
		step, ok := stepOf(bf, body, j)
		if !ok {
			continue
		}
		if n, ok := count(kp.Type.DType, dir, k0, bound, step); ok {
			return n, true
		}
	}
	return 0, false
}

// boundOf is the value of N, the condition's other operand v: a constant
// the condition folds, or a carried value that starts from a constant and
// that the body hands on as it came.
func boundOf(outer, cf *folder, cond, body *ir.Program, in ir.Instr, v ir.Value) (int64, bool) {
	if n, ok := cf.scalar(v); ok {
		return n, true
	}
	p := cond.Instrs[v]
	if p.Op != ir.OpParameter || p.Param < 0 || p.Param >= len(in.Args) {
		return 0, false
	}
	l := p.Param
	if r := body.Instrs[body.Results[l]]; r.Op != ir.OpParameter || r.Param != l {
		return 0, false
	}
	return outer.scalar(in.Args[l])
}

// stepOf is s where the body's result j is its parameter j plus s (or
// minus -s).
func stepOf(bf *folder, body *ir.Program, j int) (int64, bool) {
	r := body.Instrs[body.Results[j]]
	if len(r.Args) != 2 {
		return 0, false
	}
	isK := func(v ir.Value) bool {
		p := body.Instrs[v]
		return p.Op == ir.OpParameter && p.Param == j
	}
	switch {
	case r.Op == ir.OpAdd && isK(r.Args[0]):
		return bf.scalar(r.Args[1])
	case r.Op == ir.OpAdd && isK(r.Args[1]):
		return bf.scalar(r.Args[0])
	case r.Op == ir.OpSub && isK(r.Args[0]):
		s, ok := bf.scalar(r.Args[1])
		if !ok || s == math.MinInt64 {
			return 0, false
		}
		return -s, true
	}
	return 0, false
}

// flip is the direction d seen from the other side: N < k is k > N.
func flip(d ir.CompareDir) ir.CompareDir {
	switch d {
	case ir.CmpLT:
		return ir.CmpGT
	case ir.CmpGT:
		return ir.CmpLT
	case ir.CmpLE:
		return ir.CmpGE
	case ir.CmpGE:
		return ir.CmpLE
	}
	return d
}

// maxTrips bounds a count: beyond it no unrolling is conceivable, and an
// int holds it on every platform Go runs on.
const maxTrips = math.MaxInt32

// count is the number of times compare(k, bound) holds for k = k0, k0 +
// step, ..., stopping at the first k for which it fails. The count is
// only given when every k up to that one is within d's range (so no step
// wraps around, and the arithmetic of integers is the dtype's).
func count(d ir.DType, dir ir.CompareDir, k0, bound, step int64) (int, bool) {
	lo, hi, ok := d.IntRange()
	if !ok {
		return 0, false
	}
	if !ir.Compare(dir, k0, bound) {
		return 0, true
	}
	if step == 0 {
		return 0, false // true at the start and for ever
	}
	bk, bn, bs := big.NewInt(k0), big.NewInt(bound), big.NewInt(step)
	gap := new(big.Int).Sub(bn, bk) // bound - k0
	var t *big.Int
	switch {
	case (dir == ir.CmpLT || dir == ir.CmpLE) && step > 0:
		// The first t with k0 + t*step >= bound (LT) or > bound (LE).
		if dir == ir.CmpLT {
			t = ceilDiv(gap, bs)
		} else {
			t = new(big.Int).Add(new(big.Int).Div(gap, bs), big.NewInt(1))
		}
	case (dir == ir.CmpGT || dir == ir.CmpGE) && step < 0:
		neg := new(big.Int).Neg(gap) // k0 - bound > 0
		ns := new(big.Int).Neg(bs)
		if dir == ir.CmpGT {
			t = ceilDiv(neg, ns)
		} else {
			t = new(big.Int).Add(new(big.Int).Div(neg, ns), big.NewInt(1))
		}
	case dir == ir.CmpNE:
		// Stops only by landing on the bound exactly.
		q, m := new(big.Int).QuoRem(gap, bs, new(big.Int))
		if m.Sign() != 0 || q.Sign() <= 0 {
			return 0, false
		}
		t = q
	case dir == ir.CmpEQ:
		t = big.NewInt(1) // k0 == bound, and k0 + step is not
	default:
		return 0, false // stepping away from the bound: wraps, or never ends
	}
	last := new(big.Int).Add(bk, new(big.Int).Mul(t, bs))
	if last.Cmp(big.NewInt(lo)) < 0 || last.Cmp(big.NewInt(hi)) > 0 || !t.IsInt64() || t.Int64() > maxTrips {
		return 0, false
	}
	return int(t.Int64()), true
}

// ceilDiv is a / b rounded up, for a >= 0 and b > 0.
func ceilDiv(a, b *big.Int) *big.Int {
	q, m := new(big.Int).QuoRem(a, b, new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// folder folds the integer values each of whose elements is one known
// number (a scalar constant, a broadcast of one, arithmetic on them), as
// the interpreter computes them: integers as int64 wrapped to their
// dtype, unsigned ones as their non-negative value.
type folder struct {
	instrs []ir.Instr
	memo   map[ir.Value]folded
}

type folded struct {
	n  int64
	ok bool
}

func newFolder(instrs []ir.Instr) *folder {
	return &folder{instrs: instrs, memo: map[ir.Value]folded{}}
}

// scalar is the number every element of v holds, if v folds.
func (f *folder) scalar(v ir.Value) (int64, bool) {
	if int(v) < 0 || int(v) >= len(f.instrs) {
		return 0, false
	}
	if r, seen := f.memo[v]; seen {
		return r.n, r.ok
	}
	n, ok := f.compute(f.instrs[v])
	f.memo[v] = folded{n: n, ok: ok}
	return n, ok
}

func (f *folder) compute(in ir.Instr) (int64, bool) {
	d := in.Type.DType
	if !d.IsInt() || in.Tuple != nil || in.Type.Shape.Size() == 0 {
		return 0, false
	}
	arg := func(j int) (int64, bool) {
		if j >= len(in.Args) {
			return 0, false
		}
		return f.scalar(in.Args[j])
	}
	switch in.Op {
	case ir.OpConstant:
		return uniform(in.Type, in.Literal)
	case ir.OpConvert:
		if j := in.Args; len(j) != 1 || !f.instrs[j[0]].Type.DType.IsInt() {
			return 0, false
		}
		x, ok := arg(0)
		return d.Wrap(x), ok
	case ir.OpBroadcastInDim, ir.OpReshape:
		return arg(0)
	case ir.OpNeg:
		x, ok := arg(0)
		return d.Wrap(-x), ok
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpMax, ir.OpMin:
		x, ok := arg(0)
		if !ok {
			return 0, false
		}
		y, ok := arg(1)
		if !ok {
			return 0, false
		}
		switch in.Op {
		case ir.OpAdd:
			return d.Wrap(x + y), true
		case ir.OpMul:
			return d.Wrap(x * y), true
		case ir.OpMax:
			return max(x, y), true
		case ir.OpMin:
			return min(x, y), true
		}
		return d.Wrap(x - y), true
	}
	return 0, false
}

// uniform is the one value every element of a constant holds.
func uniform(t ir.TensorType, lit []byte) (int64, bool) {
	size := t.DType.Size()
	n := t.Shape.Size()
	if n == 0 || len(lit) != n*size {
		return 0, false
	}
	first := lit[:size]
	for k := 1; k < n; k++ {
		if string(lit[k*size:(k+1)*size]) != string(first) {
			return 0, false
		}
	}
	var u uint64
	switch size {
	case 1:
		u = uint64(first[0])
	case 2:
		u = uint64(binary.LittleEndian.Uint16(first))
	case 4:
		u = uint64(binary.LittleEndian.Uint32(first))
	case 8:
		u = binary.LittleEndian.Uint64(first)
	default:
		return 0, false
	}
	return t.DType.Wrap(int64(u)), true
}
