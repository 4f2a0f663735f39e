package ir

import (
	"encoding/binary"
	"math"
)

// The forms frontends write the bodies of reduce_region and the
// comparators of sort_region in. A driver that cannot run an arbitrary
// body (the Metal driver, which builds one graph of whole-tensor
// primitives) recognises these and runs them its own way; any other body
// it hands to the CPU. Each recogniser accepts a body only when it computes
// exactly what the form says, for every input.

// KeyOrder is how a sort comparator orders the elements of one operand.
type KeyOrder uint8

const (
	// KeyPlain is OpCompare's order of the operand's dtype: integers by
	// value (uint8 and uint32 unsigned), false before true; floats as IEEE
	// compares them, -0 tied with +0 and a NaN unordered with everything,
	// so that a comparator over floats is a strict weak order only while
	// no NaN occurs.
	KeyPlain KeyOrder = iota + 1
	// KeyFlipped is an integer's order with its top bit flipped: a signed
	// type's bits in unsigned order, uint8's and uint32's in signed order.
	// The StableHLO reader compares so the unsigned types the IR holds as
	// signed bits (ui16 as int16, ui64 as int64).
	KeyFlipped
	// KeyTotal is the total order of a float's bits that StableHLO's
	// TOTALORDER compare gives (and XLA's top_k): -NaN < -inf < ... < -0 <
	// +0 < ... < +inf < +NaN, NaNs of one sign by their payloads; two
	// elements tie only when their bits are equal.
	KeyTotal
	// KeyCanonical is KeyTotal after -0 became +0 and every NaN one NaN, as
	// jax's sort compares floats: the order of OpSort, -0 tied with +0 and
	// every NaN tied with every other, above +inf.
	KeyCanonical
)

func (o KeyOrder) String() string {
	switch o {
	case KeyPlain:
		return "plain"
	case KeyFlipped:
		return "flipped"
	case KeyTotal:
		return "total"
	case KeyCanonical:
		return "canonical"
	}
	return "KeyOrder(?)"
}

// KeyPart is which part of an operand's elements a key compares: the
// element itself, or the real or imaginary part of a complex64 one (jax
// sorts complex numbers by their real parts, then their imaginary parts).
type KeyPart uint8

const (
	PartWhole KeyPart = iota
	PartReal
	PartImag
)

// SortKey is one level of a lexicographic comparator: the elements (or
// their Part) of operand Operand in Order, ascending or Descending.
type SortKey struct {
	Operand    int
	Part       KeyPart
	Order      KeyOrder
	Descending bool
}

// SortKeysOf recognises a sort_region comparator that orders its operands
// lexicographically by keys, the most significant first: each level a
// strict comparison (LT or GT, operands either way round) of one operand's
// key, and the next level taken only where the two keys are equal (an EQ of
// the same key), as jax writes lax.sort with num_keys (or(lt(k), and(eq(k),
// next))) and XLA writes top_k. A key is the operand itself (KeyPlain), its
// bits with the top one flipped (KeyFlipped), or a float's total-order key
// bits ^ ((bits >>a w-1) >>l 1), of the operand (KeyTotal) or of the
// operand with -0 made +0 and NaN made one NaN (KeyCanonical); of a
// complex64 operand, of its real or imaginary part (Part). Operands
// that no level names are carried along. Since OpSortRegion is stable,
// elements equal on every key keep their order.
func SortKeysOf(cmp *Program) ([]SortKey, bool) {
	if cmp == nil || len(cmp.Params) == 0 || len(cmp.Params)%2 != 0 || len(cmp.Results) != 1 {
		return nil, false
	}
	m := matcher{p: cmp}
	return m.levels(cmp.Results[0])
}

type matcher struct{ p *Program }

func (m matcher) in(v Value) Instr { return m.p.Instrs[v] }

// levels matches a comparison of keys, or or(strict(k), and(eq(k), rest))
// in any order of the operands of or and and.
func (m matcher) levels(v Value) ([]SortKey, bool) {
	if k, strict, ok := m.keyCompare(v); ok {
		return []SortKey{k}, strict
	}
	in := m.in(v)
	if in.Op != OpOr || len(in.Args) != 2 {
		return nil, false
	}
	for _, first := range []int{0, 1} {
		k, strict, ok := m.keyCompare(in.Args[first])
		and := m.in(in.Args[1-first])
		if !ok || !strict || and.Op != OpAnd || len(and.Args) != 2 {
			continue
		}
		for _, eq := range []int{0, 1} {
			e, isEq, ok := m.keyCompare(and.Args[eq])
			if !ok || isEq || e.Operand != k.Operand || e.Part != k.Part || e.Order != k.Order {
				continue
			}
			if rest, ok := m.levels(and.Args[1-eq]); ok {
				return append([]SortKey{k}, rest...), true
			}
		}
	}
	return nil, false
}

// keyCompare matches compare(key(lhs_j), key(rhs_j)) (or the two the other
// way round): strict is true for LT and GT, which give the level's
// direction, false for EQ (Descending then means nothing).
func (m matcher) keyCompare(v Value) (k SortKey, strict, ok bool) {
	in := m.in(v)
	if in.Op != OpCompare || len(in.Args) != 2 {
		return SortKey{}, false, false
	}
	pa, parta, oa, okA := m.key(in.Args[0])
	pb, partb, ob, okB := m.key(in.Args[1])
	if !okA || !okB || oa != ob || parta != partb || pa/2 != pb/2 || pa == pb {
		return SortKey{}, false, false
	}
	k = SortKey{Operand: pa / 2, Part: parta, Order: oa}
	lhsFirst := pa%2 == 0
	switch in.Compare {
	case CmpLT:
		k.Descending = !lhsFirst
	case CmpGT:
		k.Descending = lhsFirst
	case CmpEQ:
		return k, false, true
	default:
		return SortKey{}, false, false
	}
	return k, true, true
}

// key matches a key expression of one comparator parameter (or of a part
// of a complex64 one).
func (m matcher) key(v Value) (param int, part KeyPart, order KeyOrder, ok bool) {
	in := m.in(v)
	if p, part, ok := m.leaf(v); ok {
		return p, part, KeyPlain, true
	}
	switch in.Op {
	case OpSelect:
		// IEEE compares a canonicalized float as it does the float.
		if p, part, ok := m.canonical(v); ok {
			return p, part, KeyPlain, true
		}
	case OpXor:
		if p, part, canon, ok := m.totalKey(v); ok {
			if canon {
				return p, part, KeyCanonical, true
			}
			return p, part, KeyTotal, true
		}
		for _, i := range []int{0, 1} {
			x, c := m.in(in.Args[i]), in.Args[1-i]
			if x.Op != OpParameter || !x.Type.DType.IsInt() {
				continue
			}
			top := uint64(1) << (8*x.Type.DType.Size() - 1)
			if b, ok := m.constBits(c); ok && b == top {
				return x.Param, PartWhole, KeyFlipped, true
			}
		}
	}
	return 0, 0, 0, false
}

// leaf matches what a key is made from: a parameter that is not complex,
// or the real or imaginary part of a complex64 one.
func (m matcher) leaf(v Value) (param int, part KeyPart, ok bool) {
	in := m.in(v)
	switch in.Op {
	case OpParameter:
		return in.Param, PartWhole, in.Type.DType != C64
	case OpReal, OpImag:
		x := m.in(in.Args[0])
		if x.Op != OpParameter {
			return 0, 0, false
		}
		if in.Op == OpReal {
			return x.Param, PartReal, true
		}
		return x.Param, PartImag, true
	}
	return 0, 0, false
}

// totalKey matches xor(b, shr_logical(shr_arith(b, w-1), 1)) (xor's
// operands either way round), b the bits of a float parameter (or of its
// canonical form) as the signed integer of its width.
func (m matcher) totalKey(v Value) (param int, part KeyPart, canon, ok bool) {
	in := m.in(v)
	for _, i := range []int{0, 1} {
		bits, mask := in.Args[i], m.in(in.Args[1-i])
		p, part, canon, w, ok := m.floatBits(bits)
		if !ok || mask.Op != OpShiftRightLogical {
			continue
		}
		sign := m.in(mask.Args[0])
		if one, ok := m.constBits(mask.Args[1]); !ok || one != 1 || sign.Op != OpShiftRightArithmetic {
			continue
		}
		if s, ok := m.constBits(sign.Args[1]); !ok || s != uint64(w-1) {
			continue
		}
		if p2, part2, canon2, _, ok := m.floatBits(sign.Args[0]); ok && p2 == p && part2 == part && canon2 == canon {
			return p, part, canon, true
		}
	}
	return 0, 0, false, false
}

// floatBits matches bitcast_convert of a float parameter (or of its
// canonical form) to the signed integer of its width w.
func (m matcher) floatBits(v Value) (param int, part KeyPart, canon bool, w int, ok bool) {
	in := m.in(v)
	if in.Op != OpBitcastConvert {
		return 0, 0, false, 0, false
	}
	want := map[DType]DType{F32: I32, F16: I16, BF16: I16}
	x := m.in(in.Args[0])
	if want[x.Type.DType] != in.Type.DType || x.Type.DType == 0 {
		return 0, 0, false, 0, false
	}
	w = 8 * in.Type.DType.Size()
	if p, part, ok := m.leaf(in.Args[0]); ok {
		return p, part, false, w, true
	}
	if p, part, ok := m.canonical(in.Args[0]); ok {
		return p, part, true, w, true
	}
	return 0, 0, false, 0, false
}

// canonical matches jax's canonical float for sorting,
// select(ne(x, x), NaN, select(eq(x, +0), +0, x)), or the two selects
// nested the other way round, x a float parameter or a part of a complex64
// one.
func (m matcher) canonical(v Value) (int, KeyPart, bool) {
	outer := m.in(v)
	if outer.Op != OpSelect || !outer.Type.DType.IsFloat() {
		return 0, 0, false
	}
	inner := m.in(outer.Args[2])
	if inner.Op != OpSelect {
		return 0, 0, false
	}
	param, part, ok := m.leaf(inner.Args[2])
	if !ok {
		return 0, 0, false
	}
	x := m.in(inner.Args[2])
	p := inner.Args[2]
	isNaN := func(s Instr) bool { // select(ne(x, x), NaN, ...)
		c := m.in(s.Args[0])
		b, ok := m.constBits(s.Args[1])
		return ok && c.Op == OpCompare && c.Compare == CmpNE && c.Args[0] == p && c.Args[1] == p && isNaNBits(x.Type.DType, b)
	}
	isZero := func(s Instr) bool { // select(eq(x, +0), +0, ...), the +0 constants maybe two
		c := m.in(s.Args[0])
		if c.Op != OpCompare || c.Compare != CmpEQ || len(c.Args) != 2 {
			return false
		}
		z := c.Args[1]
		if c.Args[1] == p {
			z = c.Args[0]
		} else if c.Args[0] != p {
			return false
		}
		b1, ok1 := m.constBits(z)
		b2, ok2 := m.constBits(s.Args[1])
		return ok1 && ok2 && b1 == 0 && b2 == 0
	}
	if (isNaN(outer) && isZero(inner)) || (isZero(outer) && isNaN(inner)) {
		return param, part, true
	}
	return 0, 0, false
}

// isNaNBits reports whether b are the bits of a NaN of float dtype d.
func isNaNBits(d DType, b uint64) bool {
	switch d {
	case F32:
		return math.IsNaN(float64(math.Float32frombits(uint32(b))))
	case F16:
		return b&0x7c00 == 0x7c00 && b&0x3ff != 0
	case BF16:
		return b&0x7f80 == 0x7f80 && b&0x7f != 0
	}
	return false
}

// constBits is a scalar constant's bits, zero-extended.
func (m matcher) constBits(v Value) (uint64, bool) {
	in := m.in(v)
	if in.Op != OpConstant || in.Type.Shape.Rank() != 0 || len(in.Literal) == 0 || len(in.Literal) > 8 {
		return 0, false
	}
	var buf [8]byte
	copy(buf[:], in.Literal)
	return binary.LittleEndian.Uint64(buf[:]), true
}

// ArgReduce is the form of an argmax or argmin body (ArgReduceOf).
type ArgReduce struct {
	// Max: argmax; else argmin.
	Max bool
	// Flipped: integer values compared with their top bit flipped
	// (KeyFlipped's order), as the StableHLO reader compares ui16 and ui64
	// held as int16 and int64.
	Flipped bool
}

// ArgReduceOf recognises the body of a reduce_region over (value, index)
// pairs that jax writes for argmax and argmin: from the accumulator (v, i)
// and the element (w, j) it keeps v where v > w (v < w for argmin) or v is
// NaN, else w; and it keeps i where it keeps v or where v == w and i < j,
// else j. The fold from the init is then the extreme value (a NaN above
// every number, the first NaN staying), and of the elements holding it the
// least index. The values may be of any real or bool dtype, the indices of
// an integer one. The body may be written any way that computes the same
// selections for every input: it is evaluated on a grid of values that
// meets every outcome its compares can have, which is proof for bodies of
// the ops allowed (compares of two values or of two indices, the values
// maybe with their top bit flipped; and, or, xor and not of bools; bool
// constants; selects of parameters).
func ArgReduceOf(body *Program) (ArgReduce, bool) {
	if body == nil || len(body.Params) != 4 || len(body.Results) != 2 {
		return ArgReduce{}, false
	}
	vt, it := body.Params[0].DType, body.Params[1].DType
	if !(vt.IsNumeric() || vt == Bool) || !it.IsInt() || body.Params[2].DType != vt || body.Params[3].DType != it {
		return ArgReduce{}, false
	}
	values := gridValues(vt)
	indices := []float64{0, 1, 2}
	for _, form := range []ArgReduce{{true, false}, {false, false}, {true, true}, {false, true}} {
		if form.Flipped && !vt.IsInt() {
			continue
		}
		good := true
		for _, v := range values {
			for _, w := range values {
				for _, i := range indices {
					for _, j := range indices {
						if good && !selectsLike(body, form, vt, []float64{v, i, w, j}) {
							good = false
						}
					}
				}
			}
		}
		if good {
			return form, true
		}
	}
	return ArgReduce{}, false
}

// gridValues are values of d that meet every outcome of a compare between
// two of them, and of a float's NaN test, with both zeros.
func gridValues(d DType) []float64 {
	switch {
	case d.IsFloat():
		return []float64{math.Inf(-1), -1, math.Copysign(0, -1), 0, 1, math.Inf(1), math.NaN()}
	case d == Bool:
		return []float64{0, 1}
	case d.IsUnsigned():
		_, hi, _ := d.IntRange()
		return []float64{0, 1, float64(hi)}
	}
	return []float64{-1, 0, 1}
}

// flippedOf is a number whose order among the grid's is that of the
// integer x of d with its top bit flipped: signed values in unsigned order,
// unsigned ones in signed order. (Not the flipped bits themselves, which
// float64 cannot hold for int64.)
func flippedOf(d DType, x float64) float64 {
	w := float64(8 * d.Size())
	switch {
	case !d.IsUnsigned() && x < 0:
		return x + math.Exp2(w)
	case d.IsUnsigned() && x >= math.Exp2(w-1):
		return x - math.Exp2(w)
	}
	return x
}

// selectsLike runs the argmax body on the scalars x (v, i, w, j) and
// reports whether it picks what form picks. Equal bits make either pick
// right.
func selectsLike(body *Program, form ArgReduce, vt DType, x []float64) bool {
	res, ok := runSelection(body, vt, x)
	if !ok {
		return false
	}
	v, i, w, j := x[0], x[1], x[2], x[3]
	kv, kw := v, w
	if form.Flipped {
		kv, kw = flippedOf(vt, v), flippedOf(vt, w)
	}
	keep := kv > kw || math.IsNaN(v)
	if !form.Max {
		keep = kv < kw || math.IsNaN(v)
	}
	wantV, wantI := 2, 3
	if keep {
		wantV = 0
	}
	if keep || (v == w && i < j) {
		wantI = 1
	}
	sameBits := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	}
	okV := res[0] == wantV || (sameBits(v, w) && (res[0] == 0 || res[0] == 2))
	okI := res[1] == wantI || (i == j && (res[1] == 1 || res[1] == 3))
	return okV && okI
}

// runSelection evaluates a body of compares, bool logic and selects of
// parameters on the scalars x (values of vt at even parameters, indices
// at odd ones): each result is the parameter it selects. ok is false for a
// body with any other op, or with a compare across the two roles or
// between a value and a flipped one.
func runSelection(body *Program, vt DType, x []float64) (res []int, ok bool) {
	type sv struct {
		param   int // >= 0: this parameter's value
		flipped bool
		b       bool
	}
	vals := make([]sv, len(body.Instrs))
	m := matcher{p: body}
	for k, in := range body.Instrs {
		arg := func(a int) sv { return vals[in.Args[a]] }
		switch in.Op {
		case OpParameter:
			vals[k] = sv{param: in.Param}
		case OpConstant:
			if in.Type.DType != Bool || in.Type.Shape.Rank() != 0 {
				// A constant flipping values' top bit is read by the xor.
				if _, ok := m.constBits(Value(k)); !ok {
					return nil, false
				}
			}
			vals[k] = sv{param: -1, b: len(in.Literal) > 0 && in.Literal[0] != 0}
		case OpCompare:
			a, b := arg(0), arg(1)
			if a.param < 0 || b.param < 0 || a.param%2 != b.param%2 || a.flipped != b.flipped {
				return nil, false
			}
			p, q := x[a.param], x[b.param]
			if a.flipped {
				p, q = flippedOf(vt, p), flippedOf(vt, q)
			}
			r := map[CompareDir]bool{CmpEQ: p == q, CmpNE: p != q, CmpLT: p < q, CmpLE: p <= q, CmpGT: p > q, CmpGE: p >= q}[in.Compare]
			vals[k] = sv{param: -1, b: r}
		case OpXor, OpAnd, OpOr, OpNot:
			if in.Type.DType != Bool {
				// Only a value's top bit flipped: xor(value, top).
				for _, i := range []int{0, 1} {
					v, c := arg(i), in.Args[1-i]
					top := uint64(1) << (8*in.Type.DType.Size() - 1)
					if b, ok := m.constBits(c); in.Op == OpXor && ok && b == top && v.param >= 0 && v.param%2 == 0 && !v.flipped {
						vals[k] = sv{param: v.param, flipped: true}
						break
					}
				}
				if !vals[k].flipped {
					return nil, false
				}
				continue
			}
			a := arg(0)
			var r bool
			switch in.Op {
			case OpNot:
				r = !a.b
			case OpAnd:
				r = a.b && arg(1).b
			case OpOr:
				r = a.b || arg(1).b
			default:
				r = a.b != arg(1).b
			}
			if a.param >= 0 || (in.Op != OpNot && arg(1).param >= 0) {
				return nil, false // logic on a bool-typed parameter
			}
			vals[k] = sv{param: -1, b: r}
		case OpSelect:
			p := arg(0)
			if p.param >= 0 || arg(1).param < 0 || arg(2).param < 0 || arg(1).flipped || arg(2).flipped {
				return nil, false
			}
			if p.b {
				vals[k] = arg(1)
			} else {
				vals[k] = arg(2)
			}
		default:
			return nil, false
		}
	}
	res = make([]int, len(body.Results))
	for r, v := range body.Results {
		if vals[v].param < 0 || vals[v].flipped {
			return nil, false
		}
		res[r] = vals[v].param
	}
	return res, true
}

// Monoid is how one result of a reduce_region body folds its operand
// (MonoidsOf): by Op, add, mul, max, min, and, or or xor; Flipped max and
// min (of integers) in the order of the bits with the top one flipped, as
// the StableHLO reader compares ui16 and ui64 held as int16 and int64.
type Monoid struct {
	Op      Op
	Flipped bool
}

// MonoidsOf recognises a reduce_region body whose every result folds one
// operand by itself: result i is add, mul, max, min, and, or or xor of
// accumulator i and element i (either way round), or, for integers, the
// select of the larger or the smaller of the two by a compare of them
// (maybe both with the top bit flipped), as jax writes max and min of
// unsigned types held as signed.
func MonoidsOf(body *Program) ([]Monoid, bool) {
	if body == nil || len(body.Params)%2 != 0 || len(body.Results) != len(body.Params)/2 || len(body.Results) == 0 {
		return nil, false
	}
	n := len(body.Results)
	m := matcher{p: body}
	ms := make([]Monoid, n)
	for i, v := range body.Results {
		pair := func(a, b Value) bool {
			x, y := body.Instrs[a], body.Instrs[b]
			return x.Op == OpParameter && y.Op == OpParameter && ((x.Param == i && y.Param == n+i) || (x.Param == n+i && y.Param == i))
		}
		r := body.Instrs[v]
		switch r.Op {
		case OpAdd, OpMul, OpMax, OpMin, OpAnd, OpOr, OpXor:
			if !pair(r.Args[0], r.Args[1]) {
				return nil, false
			}
			ms[i] = Monoid{Op: r.Op}
		case OpSelect:
			mo, ok := m.extremeSelect(r, pair)
			if !ok {
				return nil, false
			}
			ms[i] = mo
		default:
			return nil, false
		}
	}
	return ms, true
}

// extremeSelect matches select(compare(k(x), k(y)), s, t) over integers,
// {x, y} and {s, t} both the pair of parameters, k nothing or a flip of
// the top bit: the max where a strict compare's true side selects its
// greater operand, else the min.
func (m matcher) extremeSelect(r Instr, pair func(a, b Value) bool) (Monoid, bool) {
	c := m.in(r.Args[0])
	if c.Op != OpCompare || !pair(r.Args[1], r.Args[2]) || !r.Type.DType.IsInt() {
		return Monoid{}, false
	}
	unflip := func(v Value) (Value, bool, bool) {
		in := m.in(v)
		if in.Op == OpParameter {
			return v, false, true
		}
		if in.Op != OpXor {
			return 0, false, false
		}
		top := uint64(1) << (8*in.Type.DType.Size() - 1)
		for _, i := range []int{0, 1} {
			if b, ok := m.constBits(in.Args[1-i]); ok && b == top && m.in(in.Args[i]).Op == OpParameter {
				return in.Args[i], true, true
			}
		}
		return 0, false, false
	}
	x, fx, okX := unflip(c.Args[0])
	y, fy, okY := unflip(c.Args[1])
	if !okX || !okY || fx != fy || !pair(x, y) {
		return Monoid{}, false
	}
	var greater Value // the operand the compare holds greater when true
	switch c.Compare {
	case CmpGT, CmpGE:
		greater = x
	case CmpLT, CmpLE:
		greater = y
	default:
		return Monoid{}, false
	}
	chosen := m.in(r.Args[1]).Param // selected where the compare holds
	op := OpMin
	if chosen == m.in(greater).Param {
		op = OpMax
	}
	return Monoid{Op: op, Flipped: fx}, true
}

// ComplexSumOf says whether body is the sum of two complex64 scalars as
// the frontends write it, the IR having no complex add:
// complex(real(a) + real(b), imag(a) + imag(b)), either way round. A
// reduction by it is a float sum of the real parts and one of the
// imaginary parts.
func ComplexSumOf(body *Program) bool {
	if body == nil || len(body.Params) != 2 || len(body.Results) != 1 ||
		body.Params[0].DType != C64 || body.Params[1].DType != C64 {
		return false
	}
	r := body.Instrs[body.Results[0]]
	if r.Op != OpComplex {
		return false
	}
	part := func(v Value, op Op) bool { // op(a) + op(b), the two parameters
		s := body.Instrs[v]
		if s.Op != OpAdd {
			return false
		}
		seen := map[int]bool{}
		for _, a := range s.Args {
			x := body.Instrs[a]
			if x.Op != op || body.Instrs[x.Args[0]].Op != OpParameter {
				return false
			}
			seen[body.Instrs[x.Args[0]].Param] = true
		}
		return seen[0] && seen[1]
	}
	return part(r.Args[0], OpReal) && part(r.Args[1], OpImag)
}
