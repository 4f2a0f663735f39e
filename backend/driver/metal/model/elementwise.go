package model

import (
	"math"
	"slices"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// Elementwise primitives: computed in float64 (or int64) and rounded (or
// wrapped) to the result type, operands broadcast NumPy's way.

// unaryFloat are the one-operand float primitives. The contract takes them
// on float32 and float16 only.
var unaryFloat = map[gpu.Op]func(float64) float64{
	gpu.OpNegative:             func(x float64) float64 { return -x },
	gpu.OpAbsolute:             math.Abs,
	gpu.OpExponent:             math.Exp,
	gpu.OpLogarithm:            math.Log,
	gpu.OpSquareRoot:           math.Sqrt,
	gpu.OpReverseSquareRoot:    func(x float64) float64 { return 1 / math.Sqrt(x) },
	gpu.OpReciprocalSquareRoot: func(x float64) float64 { return 1 / math.Sqrt(x) },
	gpu.OpTanh:                 math.Tanh,
	gpu.OpSigmoid:              func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
	gpu.OpErf:                  math.Erf,
	gpu.OpSin:                  math.Sin,
	gpu.OpCos:                  math.Cos,
	gpu.OpFloor:                math.Floor,
	gpu.OpCeil:                 math.Ceil,
}

func evalUnary(n *gpu.Node, x *value) (*value, error) {
	switch n.Op {
	case gpu.OpIdentity:
		return x.clone(), nil
	case gpu.OpNot:
		if x.dt != gpu.Bool {
			return nil, opError(n.Op, "%v is not bool", x)
		}
		out := newValue(x.shape, gpu.Bool)
		for k, b := range x.i {
			out.i[k] = 1 - b
		}
		return out, nil
	}
	if !x.dt.IsFloat() {
		return nil, opError(n.Op, "%v operands are outside the contract", x.dt)
	}
	switch n.Op {
	case gpu.OpIsNaN, gpu.OpIsFinite:
		out := newValue(x.shape, gpu.Bool)
		for k, f := range x.f {
			if n.Op == gpu.OpIsNaN {
				out.i[k] = b2i(math.IsNaN(f))
			} else {
				out.i[k] = b2i(!math.IsNaN(f) && !math.IsInf(f, 0))
			}
		}
		return out, nil
	}
	f := unaryFloat[n.Op]
	if f == nil {
		return nil, opError(n.Op, "not modelled")
	}
	out := newValue(x.shape, x.dt)
	for k, v := range x.f {
		out.f[k] = arith(x.dt, f(v))
	}
	return out, nil
}

func isComparison(op gpu.Op) bool { return op >= gpu.OpEqual && op <= gpu.OpGreaterThanOrEqual }

func evalBinary(n *gpu.Node, a, b *value) (*value, error) {
	if a.dt != b.dt {
		return nil, opError(n.Op, "operands %v and %v", a, b)
	}
	out := newValue(n.Out.Shape, n.Out.DType)
	ma, mb := operandMap(a.shape, out.shape), operandMap(b.shape, out.shape)
	count := out.size()
	switch {
	case isComparison(n.Op) && a.dt.IsFloat():
		cmp := floatCompare[n.Op]
		for k := range count {
			out.i[k] = b2i(cmp(a.f[at(ma, k)], b.f[at(mb, k)]))
		}
	case isComparison(n.Op):
		cmp := intCompare(n.Op, a.dt)
		for k := range count {
			out.i[k] = b2i(cmp(a.i[at(ma, k)], b.i[at(mb, k)]))
		}
	case a.dt.IsFloat():
		f := floatBinary[n.Op]
		if f == nil {
			return nil, opError(n.Op, "%v operands are outside the contract", a.dt)
		}
		for k := range count {
			out.f[k] = arith(a.dt, f(a.f[at(ma, k)], b.f[at(mb, k)]))
		}
	default:
		f := intBinary(n.Op, a.dt)
		if f == nil {
			return nil, opError(n.Op, "%v operands are outside the contract", a.dt)
		}
		for k := range count {
			out.i[k] = wrap(a.dt, f(a.i[at(ma, k)], b.i[at(mb, k)]))
		}
	}
	return out, nil
}

// operandMap is broadcastMap, or nil where from is to's shape and each
// element is its own (the common case, which then costs nothing).
func operandMap(from, to []int) []int {
	if slices.Equal(from, to) {
		return nil
	}
	return broadcastMap(from, to)
}

// at is element k's source under an operandMap.
func at(m []int, k int) int {
	if m == nil {
		return k
	}
	return m[k]
}

var floatCompare = map[gpu.Op]func(a, b float64) bool{
	gpu.OpEqual:              func(a, b float64) bool { return a == b },
	gpu.OpNotEqual:           func(a, b float64) bool { return a != b }, // true for NaN, as IEEE says
	gpu.OpLessThan:           func(a, b float64) bool { return a < b },
	gpu.OpLessThanOrEqual:    func(a, b float64) bool { return a <= b },
	gpu.OpGreaterThan:        func(a, b float64) bool { return a > b },
	gpu.OpGreaterThanOrEqual: func(a, b float64) bool { return a >= b },
}

func intCompare(op gpu.Op, dt gpu.DataType) func(a, b int64) bool {
	less := func(a, b int64) bool { return intLess(dt, a, b) }
	switch op {
	case gpu.OpEqual:
		return func(a, b int64) bool { return a == b }
	case gpu.OpNotEqual:
		return func(a, b int64) bool { return a != b }
	case gpu.OpLessThan:
		return less
	case gpu.OpLessThanOrEqual:
		return func(a, b int64) bool { return !less(b, a) }
	case gpu.OpGreaterThan:
		return func(a, b int64) bool { return less(b, a) }
	}
	return func(a, b int64) bool { return !less(a, b) }
}

var floatBinary = map[gpu.Op]func(a, b float64) float64{
	gpu.OpAddition:       func(a, b float64) float64 { return a + b },
	gpu.OpSubtraction:    func(a, b float64) float64 { return a - b },
	gpu.OpMultiplication: func(a, b float64) float64 { return a * b },
	gpu.OpDivision:       func(a, b float64) float64 { return a / b }, // IEEE: ±Inf or NaN by zero
	gpu.OpFloorModulo:    floorModFloat,
	gpu.OpMaximum:        maxDropNaN,
	gpu.OpMinimum:        minDropNaN,
	gpu.OpMaximumNaN:     maxNaN,
	gpu.OpMinimumNaN:     minNaN,
	gpu.OpPower:          math.Pow,
}

// floorModFloat is a - floor(a/b)*b, with the divisor's sign, computed from
// the exact remainder (math.Mod) so that only the final rounding is inexact.
// Apple's header says modulo "returns 0 if divisor is 0".
func floorModFloat(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	r := math.Mod(a, b)
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	if r == 0 {
		r = math.Copysign(0, b)
	}
	return r
}

// maxDropNaN is maximum's: when an operand is NaN MPSGraph leaves the
// result unspecified, and the model returns the other operand (dropping the
// NaN, against a lowering that expects propagation). Of equal operands
// (-0 and +0) the first is returned.
func maxDropNaN(a, b float64) float64 {
	switch {
	case a != a:
		return b
	case b != b || a >= b:
		return a
	}
	return b
}

func minDropNaN(a, b float64) float64 {
	switch {
	case a != a:
		return b
	case b != b || a <= b:
		return a
	}
	return b
}

// maxNaN and minNaN are the NaN-propagating variants: NaN if either is.
func maxNaN(a, b float64) float64 {
	if a != a || b != b {
		return math.NaN()
	}
	return maxDropNaN(a, b)
}

func minNaN(a, b float64) float64 {
	if a != a || b != b {
		return math.NaN()
	}
	return minDropNaN(a, b)
}

// intBinary is the integer kernel of op for dt, on held values; the caller
// wraps the result. nil where the contract has no integer form.
func intBinary(op gpu.Op, dt gpu.DataType) func(a, b int64) int64 {
	unsigned := !dt.IsSigned()
	width := int64(dt.Size() * 8)
	poison := intMax(dt)
	if dt == gpu.Bool { // the logical ops are bool's only binary ones
		switch op {
		case gpu.OpLogicalAND:
			return func(a, b int64) int64 { return a & b }
		case gpu.OpLogicalOR:
			return func(a, b int64) int64 { return a | b }
		case gpu.OpLogicalXOR:
			return func(a, b int64) int64 { return a ^ b }
		}
		return nil
	}
	switch op {
	case gpu.OpAddition:
		return func(a, b int64) int64 { return a + b }
	case gpu.OpSubtraction:
		return func(a, b int64) int64 { return a - b }
	case gpu.OpMultiplication:
		return func(a, b int64) int64 { return a * b } // the low bits are the same signed or not
	case gpu.OpDivision:
		// Truncation toward zero; by zero undefined: the poison.
		return func(a, b int64) int64 {
			switch {
			case b == 0:
				return poison
			case unsigned:
				return int64(uint64(a) / uint64(b))
			}
			return a / b // MinInt64 / -1 is MinInt64 in Go, the wrapped result
		}
	case gpu.OpFloorModulo:
		return func(a, b int64) int64 {
			switch {
			case b == 0:
				return 0 // documented: "returns 0 if divisor is 0"
			case unsigned:
				return int64(uint64(a) % uint64(b))
			}
			r := a % b
			if r != 0 && (r < 0) != (b < 0) {
				r += b
			}
			return r
		}
	case gpu.OpMaximum:
		return intMaximum(dt)
	case gpu.OpMinimum:
		return intMinimum(dt)
	}
	// A shift by a negative amount or by the width or more is undefined:
	// the poison, not 0 nor the amount modulo the width.
	badShift := func(s int64) bool {
		if unsigned {
			return uint64(s) >= uint64(width)
		}
		return s < 0 || s >= width
	}
	switch op {
	case gpu.OpBitwiseAND:
		return func(a, b int64) int64 { return a & b }
	case gpu.OpBitwiseOR:
		return func(a, b int64) int64 { return a | b }
	case gpu.OpBitwiseXOR:
		return func(a, b int64) int64 { return a ^ b }
	case gpu.OpBitwiseLeftShift:
		return func(a, s int64) int64 {
			if badShift(s) {
				return poison
			}
			return a << s
		}
	case gpu.OpBitwiseRightShift:
		// Arithmetic for signed types (held sign-extended), logical for
		// unsigned ones.
		return func(a, s int64) int64 {
			switch {
			case badShift(s):
				return poison
			case unsigned:
				return int64(uint64(a) >> s)
			}
			return a >> s
		}
	}
	return nil
}

// evalSelect is p ? a : b, all three broadcast.
func evalSelect(n *gpu.Node, p, a, b *value) *value {
	out := newValue(n.Out.Shape, n.Out.DType)
	mp := broadcastMap(p.shape, out.shape)
	ma, mb := broadcastMap(a.shape, out.shape), broadcastMap(b.shape, out.shape)
	for k := range mp {
		if p.i[mp[k]] != 0 {
			out.set(k, a, ma[k])
		} else {
			out.set(k, b, mb[k])
		}
	}
	return out
}

// evalCast converts each element to n.To (see numeric.go for the choices
// where MPSGraph leaves the result undefined).
func evalCast(n *gpu.Node, x *value) *value {
	to := n.To
	out := newValue(x.shape, to)
	for k := range x.size() {
		switch {
		case x.dt.IsFloat() && to.IsFloat():
			out.f[k] = roundTo(to, x.f[k])
		case x.dt.IsFloat():
			out.i[k] = floatToInt(x.f[k], to)
		case to.IsFloat():
			out.f[k] = intToFloat(x.i[k], x.dt, to)
		default:
			out.i[k] = intToInt(x.i[k], x.dt, to)
		}
	}
	return out
}

// evalReinterpret reads each element's bits as n.To, of the same size.
func evalReinterpret(n *gpu.Node, x *value) (*value, error) {
	if x.dt.Size() != n.To.Size() {
		return nil, opError(n.Op, "%v to %v: the sizes differ", x, n.To)
	}
	out := newValue(x.shape, n.To)
	for k := range x.size() {
		out.setBits(k, x.bits(k))
	}
	return out, nil
}

// intMaximum and intMinimum pick between two held integers of dt, the
// first on a tie (elementwise and in reductions).
func intMaximum(dt gpu.DataType) func(a, b int64) int64 {
	return func(a, b int64) int64 {
		if intLess(dt, a, b) {
			return b
		}
		return a
	}
}

func intMinimum(dt gpu.DataType) func(a, b int64) int64 {
	return func(a, b int64) int64 {
		if intLess(dt, b, a) {
			return b
		}
		return a
	}
}
