package lower

import (
	"encoding/binary"
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

// Indexing: gathers and scatters, OneHot, cumulative sums, products and
// log-sum-exps, TopKV2, InTopKV2, ReverseV2 and Where, and the V1 forms of
// Gather and Reverse.
//
// Out-of-range gather indices give zeros, as on TensorFlow's GPU
// (gather_functor_gpu.cu.h; its CPU kernel raises instead); out-of-range
// scatter indices are skipped.

func init() {
	idx := func(t []ir.DType) []Constraint { return []Constraint{{"T", t}, {"Tindices", Indices}} }
	register(Kernel{Op: "GatherV2", Constraints: []Constraint{{"Tparams", All}, {"Tindices", Indices}},
		Inputs: []string{"params", "indices", "axis"}, HostInputs: []string{"axis"},
		Attrs: []AttrSpec{{Name: "batch_dims", Kind: AttrInt, Optional: true}}, Lower: lowerGatherV2})
	register(Kernel{Op: "GatherNd", Constraints: []Constraint{{"Tparams", All}, {"Tindices", Indices}},
		Inputs: []string{"params", "indices"}, Lower: lowerGatherNd})
	register(Kernel{Op: "ScatterNd", Constraints: idx(FloatsInts), Inputs: []string{"indices", "updates", "shape"},
		HostInputs: []string{"shape"}, Lower: lowerScatterNd})
	register(Kernel{Op: "TensorScatterUpdate", Constraints: idx(All), Inputs: []string{"tensor", "indices", "updates"},
		Lower: lowerTensorScatter(ir.ScatterReplace)})
	register(Kernel{Op: "TensorScatterAdd", Constraints: idx(FloatsInts), Inputs: []string{"tensor", "indices", "updates"},
		Lower: lowerTensorScatter(ir.ScatterAdd)})
	register(Kernel{Op: "TensorScatterMax", Constraints: idx(FloatsInts), Inputs: []string{"tensor", "indices", "updates"},
		Lower: lowerTensorScatter(ir.ScatterMax)})
	register(Kernel{Op: "TensorScatterMin", Constraints: idx(FloatsInts), Inputs: []string{"tensor", "indices", "updates"},
		Lower: lowerTensorScatter(ir.ScatterMin)})
	// TensorScatterSub adds the negated updates.
	register(Kernel{Op: "TensorScatterSub", Constraints: idx(FloatsInts), Inputs: []string{"tensor", "indices", "updates"},
		Lower: lowerScatterUpdates(ir.ScatterAdd, true)})
	register(Kernel{Op: "ScatterNdNonAliasingAdd", Constraints: idx(FloatsInts), Inputs: []string{"input", "indices", "updates"},
		Lower: lowerTensorScatter(ir.ScatterAdd)})
	register(Kernel{Op: "OneHot", Constraints: []Constraint{{"T", All}, {"TI", []ir.DType{ir.U8, ir.I32, ir.I64}}},
		Inputs: []string{"indices", "depth", "on_value", "off_value"}, HostInputs: []string{"depth"},
		Attrs: []AttrSpec{{Name: "axis", Kind: AttrInt, Optional: true}}, Lower: lowerOneHot})
	scan := []AttrSpec{{Name: "exclusive", Kind: AttrBool, Optional: true}, {Name: "reverse", Kind: AttrBool, Optional: true}}
	register(Kernel{Op: "Cumsum", Constraints: T(FloatsInts), Inputs: []string{"x", "axis"}, HostInputs: []string{"axis"}, Attrs: scan, Lower: lowerScan(scanSum)})
	register(Kernel{Op: "Cumprod", Constraints: T(FloatsInts), Inputs: []string{"x", "axis"}, HostInputs: []string{"axis"}, Attrs: scan, Lower: lowerScan(scanProd)})
	register(Kernel{Op: "CumulativeLogsumexp", Constraints: T(Floats), Inputs: []string{"x", "axis"}, HostInputs: []string{"axis"}, Attrs: scan, Lower: lowerScan(scanLogSumExp)})
	register(Kernel{Op: "TopKV2", Constraints: T(FloatsInts), Inputs: []string{"input", "k"}, HostInputs: []string{"k"}, Attrs: []AttrSpec{{Name: "sorted", Kind: AttrBool, Optional: true}, {Name: "index_type", Kind: AttrType, Optional: true}},
		Lower: lowerTopK})
	// InTopKV2's GPU kernel takes float32 predictions and k in device
	// memory (in_topk_op.cc).
	register(Kernel{Op: "InTopKV2", Constraints: T(Indices), Inputs: []string{"predictions", "targets", "k"}, Lower: lowerInTopK})
	register(Kernel{Op: "ReverseV2", Constraints: T(All), Inputs: []string{"tensor", "axis"}, HostInputs: []string{"axis"}, Lower: lowerReverse})
	register(Kernel{Op: "Reverse", Constraints: T([]ir.DType{ir.F32, ir.F16, ir.BF16, ir.I32, ir.U8, ir.Bool}), Inputs: []string{"tensor", "dims"},
		HostInputs: []string{"dims"}, Lower: lowerReverseV1})
	register(Kernel{Op: "Gather", Constraints: []Constraint{{"Tparams", All}, {"Tindices", Indices}}, Inputs: []string{"params", "indices"},
		Attrs: []AttrSpec{{Name: "validate_indices", Kind: AttrBool, Optional: true}}, Lower: lowerGatherV1})
	register(Kernel{Op: "Where", Constraints: T(All), Inputs: []string{"input"}, ReadInputs: []int{0}, Lower: lowerWhere})
}

// intVector is a constant vector of integer dtype d.
func intVector(b *ir.Builder, d ir.DType, vals []int) ir.Value {
	v := make([]int64, len(vals))
	for i, x := range vals {
		v[i] = int64(x)
	}
	return b.Convert(i64Constant(b, ir.Shape{len(vals)}, v), d)
}

// inRange is 0 <= idx < limit elementwise, limit broadcast along the given
// dims of idx's shape.
func inRange(b *ir.Builder, idx, limit ir.Value, dims []int) ir.Value {
	t := b.Type(idx)
	ge := b.Compare(ir.CmpGE, idx, b.Full(t, 0))
	lt := b.Compare(ir.CmpLT, idx, b.BroadcastInDim(limit, t.Shape, dims))
	return b.Binary(ir.OpAnd, ge, lt)
}

func lowerGatherV2(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	tp, ti := c.Type(0), c.Type(1)
	pr, ir_ := tp.Shape.Rank(), ti.Shape.Rank()
	a, err := c.hostScalar(2, "axis")
	if err != nil {
		return err
	}
	axis, err := c.axis(a, pr, "axis")
	if err != nil {
		return err
	}
	bd := int(c.Attrs.Int("batch_dims", 0))
	if bd < 0 {
		bd += ir_
	}
	if bd < 0 || bd > ir_ || bd > axis {
		return c.Errorf("batch_dims %d must be in [-%d, %d] and at most axis %d (params %v, indices %v)", c.Attrs.Int("batch_dims", 0), ir_, ir_, axis, tp, ti)
	}
	for i := range bd {
		if tp.Shape[i] != ti.Shape[i] {
			return c.Errorf("params %v and indices %v must agree in their %d batch dims", tp, ti, bd)
		}
	}
	out := append(append(tp.Shape[:axis].Clone(), ti.Shape[bd:]...), tp.Shape[axis+1:]...)
	b := c.B
	if tp.Shape[axis] == 0 || ti.Shape.Size() == 0 || tp.Shape.Size() == 0 {
		if ti.Shape.Size() > 0 && out.Size() > 0 {
			return c.Errorf("indices %v index an empty axis %d of params %v", ti, axis, tp)
		}
		c.Out = []ir.Value{b.Full(ir.TensorType{DType: tp.DType, Shape: out}, 0)}
		return nil
	}
	// Index vectors: the batch position (for batch_dims), then the index.
	col := append(ti.Shape.Clone(), 1)
	parts := make([]ir.Value, 0, bd+1)
	for k := range bd {
		parts = append(parts, b.Iota(ir.TensorType{DType: ti.DType, Shape: col}, k))
	}
	parts = append(parts, b.Reshape(c.In[1], col))
	ids := b.Concat(ir_, parts...)
	mapDims := append(seq(bd), axis)
	sizes := tp.Shape.Clone()
	for _, d := range mapDims {
		sizes[d] = 1
	}
	offset := append(rangeInts(bd, axis), rangeInts(axis+ir_-bd, len(out))...)
	g := b.Gather(c.In[0], ids, ir.GatherDims{OffsetDims: offset, CollapsedSliceDims: mapDims, StartIndexMap: mapDims,
		IndexVectorDim: ir_, SliceSizes: sizes})
	batchPos := append(seq(bd), rangeInts(axis, axis+ir_-bd)...)
	limit := intVector(b, ti.DType, []int{tp.Shape[axis]})
	ok := inRange(b, c.In[1], b.Reshape(limit, nil), []int{})
	c.Out = []ir.Value{b.Select(b.BroadcastInDim(ok, out, batchPos), g, b.Full(b.Type(g), 0))}
	return nil
}

func lowerGatherNd(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	tp, ti := c.Type(0), c.Type(1)
	r := ti.Shape.Rank()
	if r < 1 || ti.Shape[r-1] > tp.Shape.Rank() {
		return c.Errorf("indices %v must have rank at least 1 and an inner dimension at most the rank of params %v", ti, tp)
	}
	k := ti.Shape[r-1]
	nb := r - 1
	out := append(ti.Shape[:nb].Clone(), tp.Shape[k:]...)
	b := c.B
	if k == 0 {
		c.Out = []ir.Value{b.BroadcastInDim(c.In[0], out, rangeInts(nb, len(out)))}
		return nil
	}
	if ti.Shape.Size() == 0 || tp.Shape.Size() == 0 {
		if ti.Shape.Size() > 0 && out.Size() > 0 {
			return c.Errorf("indices %v index an empty dimension of params %v", ti, tp)
		}
		c.Out = []ir.Value{b.Full(ir.TensorType{DType: tp.DType, Shape: out}, 0)}
		return nil
	}
	sizes := tp.Shape.Clone()
	for i := range k {
		sizes[i] = 1
	}
	g := b.Gather(c.In[0], c.In[1], ir.GatherDims{OffsetDims: rangeInts(nb, len(out)), CollapsedSliceDims: seq(k),
		StartIndexMap: seq(k), IndexVectorDim: nb, SliceSizes: sizes})
	ok := inRange(b, c.In[1], intVector(b, ti.DType, tp.Shape[:k]), []int{r - 1})
	all := b.Reduce(ok, ir.ReduceAnd, []int{r - 1})
	c.Out = []ir.Value{b.Select(b.BroadcastInDim(all, out, seq(nb)), g, b.Full(b.Type(g), 0))}
	return nil
}

// scatterInto combines updates into operand at indices [..., K] (the
// ScatterNd family's layout: updates are indices.shape[:-1] + shape[K:]).
func scatterInto(c *Call, operand, indices, updates ir.Value, kind ir.ScatterKind) (ir.Value, error) {
	b := c.B
	to, ti, tu := b.Type(operand), b.Type(indices), b.Type(updates)
	r := ti.Shape.Rank()
	if r < 1 || ti.Shape[r-1] > to.Shape.Rank() || tu.DType != to.DType {
		return 0, c.Errorf("indices must have rank at least 1 and an inner dimension at most the rank of the output %v, and updates its dtype; inputs %s", to, c.Inputs())
	}
	k := ti.Shape[r-1]
	nb := r - 1
	want := append(ti.Shape[:nb].Clone(), to.Shape[k:]...)
	if !tu.Shape.Equal(want) {
		return 0, c.Errorf("updates %v must have shape %v for indices %v and output %v", tu, want, ti, to)
	}
	if tu.Shape.Size() == 0 || to.Shape.Size() == 0 {
		return operand, nil
	}
	return b.Scatter(operand, indices, updates, ir.ScatterDims{UpdateWindowDims: rangeInts(nb, len(want)),
		InsertedWindowDims: seq(k), ScatterDimsToOperandDims: seq(k), IndexVectorDim: nb, Kind: kind}), nil
}

// lowerScatterNd adds updates (duplicates sum) into zeros of the host shape.
func lowerScatterNd(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	shape, err := c.hostShape(2, "shape")
	if err != nil {
		return err
	}
	zero := c.B.Full(ir.TensorType{DType: c.Type(1).DType, Shape: shape}, 0)
	y, err := scatterInto(c, zero, c.In[0], c.In[1], ir.ScatterAdd)
	if err != nil {
		return err
	}
	c.Out = []ir.Value{y}
	return nil
}

func lowerTensorScatter(kind ir.ScatterKind) func(c *Call) error {
	return lowerScatterUpdates(kind, false)
}

// lowerScatterUpdates combines the updates, negated if negate is set
// (TensorScatterSub), into the tensor.
func lowerScatterUpdates(kind ir.ScatterKind, negate bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(3); err != nil {
			return err
		}
		updates := c.In[2]
		if negate {
			updates = c.B.Unary(ir.OpNeg, updates)
		}
		y, err := scatterInto(c, c.In[0], c.In[1], updates, kind)
		if err != nil {
			return err
		}
		c.Out = []ir.Value{y}
		return nil
	}
}

// lowerOneHot puts on_value where the new axis's position equals the index
// and off_value elsewhere (so out-of-range indices give a row of off_value).
func lowerOneHot(c *Call) error {
	if err := c.arity(4); err != nil {
		return err
	}
	ti, ton, toff := c.Type(0), c.Type(2), c.Type(3)
	depth, err := c.hostScalar(1, "depth")
	if err != nil {
		return err
	}
	if depth < 0 || ton.Shape.Rank() != 0 || toff.Shape.Rank() != 0 || ton.DType != toff.DType {
		return c.Errorf("depth %d must be non-negative and on_value %v, off_value %v scalars of one dtype (indices %v)", depth, ton, toff, ti)
	}
	r := ti.Shape.Rank()
	a := c.Attrs.Int("axis", -1)
	if a < -1 || a > int64(r) {
		return c.Errorf("axis %d must be in [-1, %d] (indices %v)", a, r, ti)
	}
	axis := int(a)
	if axis == -1 {
		axis = r
	}
	out := append(append(ti.Shape[:axis].Clone(), int(depth)), ti.Shape[axis:]...)
	b := c.B
	pos := b.Iota(ir.TensorType{DType: ir.I64, Shape: out}, axis)
	keep := append(seq(axis), rangeInts(axis+1, r+1)...)
	ids := b.BroadcastInDim(b.Convert(c.In[0], ir.I64), out, keep)
	on := b.BroadcastInDim(c.In[2], out, []int{})
	off := b.BroadcastInDim(c.In[3], out, []int{})
	c.Out = []ir.Value{b.Select(b.Compare(ir.CmpEQ, pos, ids), on, off)}
	return nil
}

// shiftAlong pads x by one element of v before, dropping the last: the
// exclusive scan's input.
func shiftAlong(b *ir.Builder, x ir.Value, axis, by int, v float64) ir.Value {
	t := b.Type(x)
	r := t.Shape.Rank()
	low, high := make([]int, r), make([]int, r)
	low[axis], high[axis] = by, -by
	return b.Pad(x, b.Scalar(t.DType, v), low, high, make([]int, r))
}

// scanKind is what a cumulative op combines with.
type scanKind int

const (
	scanSum scanKind = iota
	scanProd
	scanLogSumExp
)

// logAddExp is log(exp(a) + exp(b)) as max + log1p(exp(min - max))
// (functor::LogSumExp in scan_ops.h), -inf where both are.
func logAddExp(b *ir.Builder, x, y ir.Value) ir.Value {
	hi, lo := b.Binary(ir.OpMax, x, y), b.Binary(ir.OpMin, x, y)
	sum := b.Binary(ir.OpAdd, hi, b.Unary(ir.OpLog1p, b.Unary(ir.OpExp, b.Binary(ir.OpSub, lo, hi))))
	negInf := like(b, x, math.Inf(-1))
	return b.Select(b.Compare(ir.CmpEQ, hi, negInf), negInf, sum)
}

// lowerScan is Cumsum (a reduce_window whose window covers the whole axis,
// padded in front so each output sums its prefix), Cumprod or
// CumulativeLogsumexp (reduce_window has neither, so a doubling scan:
// log2(n) combinations with the sequence shifted 1, 2, 4, ... places).
// exclusive shifts the input one place; reverse scans from the end
// (scan_ops.cc). The 16-bit floats accumulate in float32.
func lowerScan(kind scanKind) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(2); err != nil {
			return err
		}
		t := c.Type(0)
		a, err := c.hostScalar(1, "axis")
		if err != nil {
			return err
		}
		axis, err := c.axis(a, t.Shape.Rank(), "axis")
		if err != nil {
			return err
		}
		n := t.Shape[axis]
		b := c.B
		if n == 0 || t.Shape.Size() == 0 {
			c.Out = []ir.Value{c.In[0]}
			return nil
		}
		rev := []int{}
		if c.Attrs.Bool("reverse") {
			rev = []int{axis}
		}
		identity := map[scanKind]float64{scanSum: 0, scanProd: 1, scanLogSumExp: math.Inf(-1)}[kind]
		x := b.Reverse(b.Convert(c.In[0], accType(t.DType)), rev)
		if c.Attrs.Bool("exclusive") {
			x = shiftAlong(b, x, axis, 1, identity)
		}
		switch kind {
		case scanSum:
			r := t.Shape.Rank()
			w := ir.WindowAttrs{Dims: filled(r, 1), Padding: make([][2]int, r)}
			w.Dims[axis] = n
			w.Padding[axis] = [2]int{n - 1, 0}
			x = b.ReduceWindow(x, ir.ReduceSum, w)
		case scanProd:
			for k := 1; k < n; k *= 2 {
				x = b.Binary(ir.OpMul, x, shiftAlong(b, x, axis, k, 1))
			}
		case scanLogSumExp:
			for k := 1; k < n; k *= 2 {
				x = logAddExp(b, x, shiftAlong(b, x, axis, k, identity))
			}
		}
		c.Out = []ir.Value{b.Convert(b.Reverse(x, rev), t.DType)}
		return nil
	}
}

// lowerTopK sorts the last axis descending (stably, so of equal values the
// lower index comes first, as TensorFlow's TopK promises), keeps the first
// k indices and gathers their values.
func lowerTopK(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	t := c.Type(0)
	r := t.Shape.Rank()
	if r < 1 {
		return c.Errorf("input must have rank at least 1, got %v", t)
	}
	k64, err := c.hostScalar(1, "k")
	if err != nil {
		return err
	}
	n := t.Shape[r-1]
	if k64 < 0 || k64 > int64(n) {
		return c.Errorf("k %d must be in [0, %d], the last dimension of %v", k64, n, t)
	}
	k := int(k64)
	index := c.Attrs.Type("index_type", ir.I32)
	if index != ir.I32 && index != ir.I64 {
		return c.Errorf("index_type %v is not supported; use int32 or int64 (input %v)", index, t)
	}
	b := c.B
	out := append(t.Shape[:r-1].Clone(), k)
	if out.Size() == 0 {
		c.Out = []ir.Value{b.Full(ir.TensorType{DType: t.DType, Shape: out}, 0), b.Full(ir.TensorType{DType: index, Shape: out}, 0)}
		return nil
	}
	order := b.ArgSort(c.In[0], ir.SortAttrs{Dim: r - 1, Descending: true}, index)
	start := make([]int, r)
	idx := b.Slice(order, start, out, filled(r, 1))
	rows := out.Size() / k
	flat := b.Reshape(c.In[0], ir.Shape{rows, n})
	col := b.Reshape(idx, ir.Shape{rows, k, 1})
	row := b.Iota(ir.TensorType{DType: index, Shape: ir.Shape{rows, k, 1}}, 0)
	vals := b.Gather(flat, b.Concat(2, row, col), ir.GatherDims{CollapsedSliceDims: []int{0, 1}, StartIndexMap: []int{0, 1},
		IndexVectorDim: 2, SliceSizes: []int{1, 1}})
	c.Out = []ir.Value{b.Reshape(vals, out), idx}
	return nil
}

// lowerInTopK says whether each row's target class is among its k largest
// predictions: fewer than k predictions are greater than the target's. A
// target out of range, or a row with a non-finite prediction, is false.
func lowerInTopK(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	tp, tt, tk := c.Type(0), c.Type(1), c.Type(2)
	if tp.DType != ir.F32 || tp.Shape.Rank() != 2 || tt.Shape.Rank() != 1 || tt.Shape[0] != tp.Shape[0] || tk.Shape.Rank() != 0 || tk.DType != tt.DType {
		return c.Errorf("predictions must be float32 [batch, classes], targets [batch] and k a scalar of targets' dtype: got %s", c.Inputs())
	}
	b := c.B
	n, classes := tp.Shape[0], tp.Shape[1]
	out := ir.TensorType{DType: ir.Bool, Shape: ir.Shape{n}}
	if n == 0 || classes == 0 {
		c.Out = []ir.Value{b.Full(out, 0)}
		return nil
	}
	col := ir.Shape{n, 1}
	ids := b.Concat(1, b.Iota(ir.TensorType{DType: tt.DType, Shape: col}, 0), b.Reshape(c.In[1], col))
	target := b.Gather(c.In[0], ids, ir.GatherDims{CollapsedSliceDims: []int{0, 1}, StartIndexMap: []int{0, 1}, IndexVectorDim: 1,
		SliceSizes: []int{1, 1}})
	greater := b.Compare(ir.CmpGT, c.In[0], b.BroadcastInDim(target, tp.Shape, []int{0}))
	count := b.Reduce(b.Convert(greater, tt.DType), ir.ReduceSum, []int{1})
	finite := b.Reduce(b.Compare(ir.CmpLT, b.Unary(ir.OpAbs, c.In[0]), like(b, c.In[0], math.Inf(1))), ir.ReduceAnd, []int{1})
	ok := b.Binary(ir.OpAnd, inRange(b, c.In[1], b.Reshape(intVector(b, tt.DType, []int{classes}), nil), []int{}), finite)
	in := b.Compare(ir.CmpLT, count, b.BroadcastInDim(c.In[2], out.Shape, nil))
	c.Out = []ir.Value{b.Binary(ir.OpAnd, ok, in)}
	return nil
}

func lowerReverse(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	t := c.Type(0)
	vals, err := c.hostInts(1, "axis")
	if err != nil {
		return err
	}
	seen := make([]bool, t.Shape.Rank())
	var axes []int
	for _, v := range vals {
		a, err := c.axis(v, t.Shape.Rank(), "axis")
		if err != nil {
			return err
		}
		if seen[a] {
			return c.Errorf("axis %d specified more than once (axis %v, tensor %v)", a, vals, t)
		}
		seen[a] = true
		axes = append(axes, a)
	}
	c.Out = []ir.Value{c.B.Reverse(c.In[0], axes)}
	return nil
}

// lowerWhere lists the coordinates of the non-zero (true) elements, in
// row-major order, as an int64 [n, rank] constant computed on the host from
// the input's bytes (Kernel.ReadInputs). NaN counts as non-zero, -0 as zero.
func lowerWhere(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	t := c.Type(0)
	raw, ok := c.Raw[0]
	if !ok || len(raw) != t.Bytes() {
		return c.Errorf("needs the contents of input %v (%d bytes), got %d bytes", t, t.Bytes(), len(raw))
	}
	size := t.DType.Size()
	var mask uint64 = ^uint64(0)
	switch t.DType {
	case ir.F32:
		mask = 0x7fffffff
	case ir.F16, ir.BF16:
		mask = 0x7fff
	}
	r := t.Shape.Rank()
	strides := t.Shape.Strides()
	var coords []int64
	n := 0
	for i := range t.Shape.Size() {
		var v uint64
		switch size {
		case 1:
			v = uint64(raw[i])
		case 2:
			v = uint64(binary.LittleEndian.Uint16(raw[2*i:]))
		case 4:
			v = uint64(binary.LittleEndian.Uint32(raw[4*i:]))
		case 8:
			v = binary.LittleEndian.Uint64(raw[8*i:])
		}
		if v&mask == 0 {
			continue
		}
		n++
		for d := range r {
			coords = append(coords, int64(i/strides[d]%t.Shape[d]))
		}
	}
	c.Out = []ir.Value{i64Constant(c.B, ir.Shape{n, r}, coords)}
	return nil
}

// lowerReverseV1 reverses the dims whose entry of the bool vector dims is
// true.
func lowerReverseV1(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	t := c.Type(0)
	dims, err := c.hostInts(1, "dims")
	if err != nil {
		return err
	}
	if c.Type(1).DType != ir.Bool || len(dims) != t.Shape.Rank() {
		return c.Errorf("dims %v must be a bool vector of one entry per dim of tensor %v", c.Type(1), t)
	}
	var axes []int
	for i, d := range dims {
		if d != 0 {
			axes = append(axes, i)
		}
	}
	c.Out = []ir.Value{c.B.Reverse(c.In[0], axes)}
	return nil
}

// lowerGatherV1 is GatherV2 along axis 0: out-of-range indices give zeros,
// as on TensorFlow's GPU.
func lowerGatherV1(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	tp, ti := c.Type(0), c.Type(1)
	if tp.Shape.Rank() < 1 {
		return c.Errorf("params must have rank at least 1, got %v", tp)
	}
	b := c.B
	n := ti.Shape.Size()
	out := append(ti.Shape.Clone(), tp.Shape[1:]...)
	if n == 0 || tp.Shape.Size() == 0 {
		if n > 0 && out.Size() > 0 {
			return c.Errorf("indices %v index an empty params %v", ti, tp)
		}
		c.Out = []ir.Value{zeros(b, ir.TensorType{DType: tp.DType, Shape: out})}
		return nil
	}
	sizes := tp.Shape.Clone()
	sizes[0] = 1
	ids := b.Reshape(c.In[1], ir.Shape{n, 1})
	g := b.Gather(c.In[0], ids, ir.GatherDims{OffsetDims: rangeInts(1, tp.Shape.Rank()), CollapsedSliceDims: []int{0}, StartIndexMap: []int{0},
		IndexVectorDim: 1, SliceSizes: sizes})
	ok := inRange(b, b.Reshape(c.In[1], ir.Shape{n}), b.Reshape(intVector(b, ti.DType, []int{tp.Shape[0]}), nil), []int{})
	g = b.Select(b.BroadcastInDim(ok, b.Type(g).Shape, []int{0}), g, zeros(b, b.Type(g)))
	c.Out = []ir.Value{b.Reshape(g, out)}
	return nil
}
