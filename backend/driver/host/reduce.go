package host

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() { register(opKernel{make: reduceKernel}, ir.OpReduce) }

// bounds are a type's lowest and highest values: the identities of max and
// min (-inf and +inf for floats, so that reducing nothing gives them, as
// StableHLO says).
func bounds[T numT]() (lo, hi T) {
	var z T
	switch any(z).(type) {
	case float32:
		return any(float32(math.Inf(-1))).(T), any(float32(math.Inf(1))).(T)
	case float64:
		return any(math.Inf(-1)).(T), any(math.Inf(1)).(T)
	case int8:
		return any(int8(math.MinInt8)).(T), any(int8(math.MaxInt8)).(T)
	case int16:
		return any(int16(math.MinInt16)).(T), any(int16(math.MaxInt16)).(T)
	case int32:
		return any(int32(math.MinInt32)).(T), any(int32(math.MaxInt32)).(T)
	case int64:
		return any(int64(math.MinInt64)).(T), any(int64(math.MaxInt64)).(T)
	case uint8:
		return 0, any(uint8(math.MaxUint8)).(T)
	case uint32:
		return 0, any(uint32(math.MaxUint32)).(T)
	}
	panic("host: bounds of an unknown type")
}

// identity is the value reducing zero elements gives.
func identity[T numT](kind ir.ReduceKind) T {
	lo, hi := bounds[T]()
	switch kind {
	case ir.ReduceProd:
		return 1
	case ir.ReduceMax:
		return lo
	case ir.ReduceMin:
		return hi
	}
	return 0
}

// fold reduces x into acc. Sums use four partial accumulators, which both
// breaks the dependency chain and halves the rounding error's growth.
func fold[T numT](kind ir.ReduceKind, acc T, x []T) T {
	switch kind {
	case ir.ReduceSum:
		var s0, s1, s2, s3 T
		i := 0
		for ; i+4 <= len(x); i += 4 {
			s0 += x[i]
			s1 += x[i+1]
			s2 += x[i+2]
			s3 += x[i+3]
		}
		for ; i < len(x); i++ {
			s0 += x[i]
		}
		return acc + ((s0 + s1) + (s2 + s3))
	case ir.ReduceProd:
		for _, v := range x {
			acc *= v
		}
	case ir.ReduceMax: // the builtin propagates NaN
		for _, v := range x {
			acc = max(acc, v)
		}
	case ir.ReduceMin:
		for _, v := range x {
			acc = min(acc, v)
		}
	}
	return acc
}

// foldInto combines x into z elementwise.
func foldInto[T numT](kind ir.ReduceKind, z, x []T) {
	x = x[:len(z)]
	switch kind {
	case ir.ReduceSum:
		for j, v := range x {
			z[j] += v
		}
	case ir.ReduceProd:
		for j, v := range x {
			z[j] *= v
		}
	case ir.ReduceMax:
		for j, v := range x {
			z[j] = max(z[j], v)
		}
	case ir.ReduceMin:
		for j, v := range x {
			z[j] = min(z[j], v)
		}
	}
}

// Bool reductions fold bytes as truth values.
func foldBool(kind ir.ReduceKind, acc uint8, x []uint8) uint8 {
	for _, v := range x {
		if kind == ir.ReduceAnd {
			acc = b2u(acc != 0 && v != 0)
		} else {
			acc = b2u(acc != 0 || v != 0)
		}
	}
	return acc
}

func foldIntoBool(kind ir.ReduceKind, z, x []uint8) {
	x = x[:len(z)]
	for j, v := range x {
		if kind == ir.ReduceAnd {
			z[j] = b2u(z[j] != 0 && v != 0)
		} else {
			z[j] = b2u(z[j] != 0 || v != 0)
		}
	}
}

// reducePlan is the operand's shape with neighbouring dims of the same kind
// merged; outStrides are 0 along reduced dims.
type reducePlan struct {
	shape      []int
	inStrides  []int
	outStrides []int
	empty      bool // the operand has no elements: the output is all identity
}

func newReducePlan(s ir.Shape, axes []int) reducePlan {
	if s.Size() == 0 {
		return reducePlan{empty: true}
	}
	outStrides := make([]int, len(s))
	n := 1
	for d := len(s) - 1; d >= 0; d-- {
		reduced := false
		for _, a := range axes {
			reduced = reduced || a == d
		}
		if !reduced {
			outStrides[d] = n
			n *= s[d]
		}
	}
	sh, st := coalesce(s, s.Strides(), outStrides)
	return reducePlan{shape: sh, inStrides: st[0], outStrides: st[1]}
}

func reduceKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	p := newReducePlan(at[0].Shape, in.Axes)
	kind := in.Reduce
	switch at[0].DType {
	case ir.F32, ir.F64, ir.F16, ir.BF16:
		return forFloat(in, at, true, reduceOf[float32](p, kind), reduceOf[float64](p, kind))
	case ir.I8:
		return reduceOf[int8](p, kind), nil
	case ir.I16:
		return reduceOf[int16](p, kind), nil
	case ir.I32:
		return reduceOf[int32](p, kind), nil
	case ir.I64:
		return reduceOf[int64](p, kind), nil
	case ir.U8:
		return reduceOf[uint8](p, kind), nil
	case ir.U32:
		return reduceOf[uint32](p, kind), nil
	case ir.Bool:
		return reduceGeneric(p, b2u(kind == ir.ReduceAnd),
			func(acc uint8, x []uint8) uint8 { return foldBool(kind, acc, x) },
			func(z, x []uint8) { foldIntoBool(kind, z, x) }), nil
	}
	return nil, errUnsupported(in, at)
}

func reduceOf[T numT](p reducePlan, kind ir.ReduceKind) kernel {
	var zero T
	if _, ok := any(zero).(float32); ok && kind == ir.ReduceSum {
		return reduceGeneric(p, 0,
			func(acc float32, x []float32) float32 { return acc + sumF32(x) },
			func(z, x []float32) { foldInto(kind, z, x) })
	}
	return reduceGeneric(p, identity[T](kind),
		func(acc T, x []T) T { return fold(kind, acc, x) },
		func(z, x []T) { foldInto(kind, z, x) })
}

// reduceGeneric walks the operand once in memory order. After coalescing, the
// innermost dim is either reduced (fold a contiguous run into one output) or
// kept (foldInto a contiguous output row). Work is split on a kept dim, so
// goroutines own disjoint outputs, or, for a reduction to a single value,
// into chunks whose partial results are combined in a fixed order.
func reduceGeneric[T any](p reducePlan, id T, fold func(T, []T) T, foldInto func(z, x []T)) kernel {
	return func(out []byte, ins [][]byte) {
		z, x := view[T](out), view[T](ins[0])
		for i := range z {
			z[i] = id
		}
		if p.empty {
			return
		}
		if len(z) == 1 { // everything reduced; the operand is contiguous
			chunks := make([]T, 0, 64)
			n := len(x)
			workers := max(1, min(64, n/grainCheap))
			size := (n + workers - 1) / workers
			for lo := 0; lo < n; lo += size {
				chunks = append(chunks, id)
			}
			parallelFor(len(chunks), 1, func(a, b int) {
				for c := a; c < b; c++ {
					chunks[c] = fold(id, x[c*size:min((c+1)*size, n)])
				}
			})
			z[0] = fold(z[0], chunks)
			return
		}
		split := -1
		for d, s := range p.outStrides {
			if s != 0 && p.shape[d] > 1 {
				split = d
				break
			}
		}
		box := func(lo, hi int) {
			sh := append([]int(nil), p.shape...)
			sh[split] = hi - lo
			reduceBox(z, lo*p.outStrides[split], x, lo*p.inStrides[split], sh, p.outStrides, p.inStrides, fold, foldInto)
		}
		perIndex := len(x) / p.shape[split]
		parallelFor(p.shape[split], max(1, grainCheap/max(perIndex, 1)), box)
	}
}

func reduceBox[T any](z []T, outBase int, x []T, inBase int, sh, ost, ist []int, fold func(T, []T) T, foldInto func(z, x []T)) {
	last := len(sh) - 1
	n := sh[last]
	if ost[last] != 0 {
		reduceRows(z, outBase, x, inBase, sh, ost, ist, foldInto)
		return
	}
	it := newStrideIter(sh[:last], ost[:last], ist[:last])
	for {
		o, i := outBase+it.off[0], inBase+it.off[1]
		z[o] = fold(z[o], x[i:i+n])
		if !it.next() {
			return
		}
	}
}

// cascadeLeaf is how many rows reduceRows folds one after another before
// starting a new partial row. Four keeps a sum over a batch of 16 (an outer
// dim of a few rows) as accurate as TensorFlow's CPU; the extra partial
// rows cost about 2% on a column sum of 4096 rows.
const cascadeLeaf = 4

// reduceRows is reduceBox when the innermost dim is kept: each output row
// folds in one contiguous input row per index of the reduced outer dims. A
// running sum over those rows would let a float32 output's rounding error
// grow with their number, and the reductions that keep the channels of NHWC
// (batch norm statistics and their gradients, bias and offset gradients)
// fold N*H*W rows, tens of thousands. So the kept outer dims are walked
// outside and the reduced ones inside, and each output's rows are summed
// pairwise: runs of cascadeLeaf rows into partial rows, partial rows of
// equal weight merged like the digits of a binary counter, the error then
// growing with cascadeLeaf + log2(rows) instead.
func reduceRows[T any](z []T, outBase int, x []T, inBase int, sh, ost, ist []int, foldInto func(z, x []T)) {
	last := len(sh) - 1
	n := sh[last]
	var ksh, kost, kist, rsh, rist []int
	rows := 1
	for d := range last {
		if ost[d] != 0 {
			ksh, kost, kist = append(ksh, sh[d]), append(kost, ost[d]), append(kist, ist[d])
		} else {
			rsh, rist = append(rsh, sh[d]), append(rist, ist[d])
			rows *= sh[d]
		}
	}
	kept := newStrideIter(ksh, kost, kist)
	red := newStrideIter(rsh, rist) // back at its start after each walk
	var c rowCascade[T]
	for {
		o, i := outBase+kept.off[0], inBase+kept.off[1]
		zr := z[o : o+n]
		if rows <= cascadeLeaf {
			for {
				j := i + red.off[0]
				foldInto(zr, x[j:j+n])
				if !red.next() {
					break
				}
			}
		} else {
			c.fold(zr, x, i, red, foldInto)
		}
		if !kept.next() {
			return
		}
	}
}

// rowCascade holds reduceRows' partial rows, reused across output rows.
type rowCascade[T any] struct {
	rows   [][]T
	weight []int // leaves summed into each of rows
	spare  [][]T
}

// fold folds into zr the rows of x at base plus each offset red walks.
func (c *rowCascade[T]) fold(zr, x []T, base int, red *strideIter, foldInto func(z, x []T)) {
	n := len(zr)
	for done := false; !done; {
		var p []T
		if k := len(c.spare); k > 0 {
			p, c.spare = c.spare[k-1], c.spare[:k-1]
		} else {
			p = make([]T, n)
		}
		j := base + red.off[0]
		copy(p, x[j:j+n])
		done = !red.next()
		for r := 1; r < cascadeLeaf && !done; r++ {
			j := base + red.off[0]
			foldInto(p, x[j:j+n])
			done = !red.next()
		}
		c.rows, c.weight = append(c.rows, p), append(c.weight, 1)
		for k := len(c.rows); k >= 2 && c.weight[k-1] == c.weight[k-2]; k-- {
			foldInto(c.rows[k-2], c.rows[k-1])
			c.weight[k-2] *= 2
			c.spare = append(c.spare, c.rows[k-1])
			c.rows, c.weight = c.rows[:k-1], c.weight[:k-1]
		}
	}
	// The smallest partial rows first.
	for k := len(c.rows) - 1; k > 0; k-- {
		foldInto(c.rows[k-1], c.rows[k])
		c.spare = append(c.spare, c.rows[k])
	}
	foldInto(zr, c.rows[0])
	c.spare = append(c.spare, c.rows[0])
	c.rows, c.weight = c.rows[:0], c.weight[:0]
}
