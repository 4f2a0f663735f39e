package lower

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/status"
)

// Array and indexing ops: counting (Bincount, DenseBincount, Bucketize,
// HistogramFixedWidth, LowerBound, UpperBound), the ops whose output sizes
// come from their data (UniqueWithCounts, DynamicStitch, DynamicPartition:
// Kernel.ReadInputs hands the lowering the bytes, as for Where), the
// numerics checks, the data-format maps, Bitcast, Empty, DeepCopy, the
// in-place row updates and TensorStridedSliceUpdate.

func init() {
	counts := []ir.DType{ir.F32, ir.I32}
	register(Kernel{Op: "Bincount", Constraints: T(counts), Inputs: []string{"arr", "size", "weights"},
		HostInputs: []string{"size"}, Lower: lowerBincount})
	register(Kernel{Op: "DenseBincount", Constraints: []Constraint{{"Tidx", Indices}, {"T", counts}}, Inputs: []string{"input", "size", "weights"},
		HostInputs: []string{"size"}, Attrs: []AttrSpec{{Name: "binary_output", Kind: AttrBool, Optional: true}},
		Lower: lowerDenseBincount})
	register(Kernel{Op: "Bucketize", Constraints: T([]ir.DType{ir.F32, ir.I32, ir.I64}), Inputs: []string{"input"},
		Attrs: []AttrSpec{{Name: "boundaries", Kind: AttrFloats}}, Lower: lowerBucketize})
	// The op def allows float32 of the floats the GPU registers (not the
	// 16-bit ones).
	register(Kernel{Op: "HistogramFixedWidth", Constraints: []Constraint{{"T", []ir.DType{ir.F32}}, {"dtype", []ir.DType{ir.I32}}},
		Inputs: []string{"values", "value_range", "nbins"}, HostInputs: []string{"nbins"},
		Attrs: []AttrSpec{{Name: "dtype", Kind: AttrType, Optional: true}}, Lower: lowerHistogram})
	bound := func(name string, upper bool) {
		register(Kernel{Op: name, Constraints: []Constraint{{"T", Numeric}, {"out_type", Indices}}, Inputs: []string{"sorted_inputs", "values"},
			Attrs: []AttrSpec{{Name: "out_type", Kind: AttrType, Optional: true}}, Lower: lowerBound(upper)})
	}
	bound("LowerBound", false)
	bound("UpperBound", true)
	register(Kernel{Op: "UniqueWithCounts", Constraints: []Constraint{{"T", All}, {"out_idx", Indices}}, Inputs: []string{"x"},
		ReadInputs: []int{0}, Attrs: []AttrSpec{{Name: "out_idx", Kind: AttrType, Optional: true}}, Lower: lowerUniqueWithCounts})
	stitch := FloatsInts
	register(Kernel{Op: "DynamicStitch", Constraints: T(stitch), Inputs: []string{"indices", "data"},
		ReadInputsOf: func(n int) []int { return seq(n / 2) }, Lower: lowerDynamicStitch})
	register(Kernel{Op: "DynamicPartition", Constraints: T(stitch), Inputs: []string{"data", "partitions"}, ReadInputs: []int{1},
		Attrs: []AttrSpec{{Name: "num_partitions", Kind: AttrInt}}, Lower: lowerDynamicPartition})
	numerics := []ir.DType{ir.F32, ir.F16}
	register(Kernel{Op: "CheckNumerics", Constraints: T(numerics), Inputs: []string{"tensor"}, ReadInputs: []int{0},
		Attrs: []AttrSpec{{Name: "message", Kind: AttrString, Optional: true}}, Lower: lowerCheckNumerics(false)})
	register(Kernel{Op: "CheckNumericsV2", Constraints: T(numerics), Inputs: []string{"tensor"}, ReadInputs: []int{0},
		Attrs: []AttrSpec{{Name: "message", Kind: AttrString, Optional: true}}, Lower: lowerCheckNumerics(true)})
	formats := []AttrSpec{{Name: "src_format", Kind: AttrString, Optional: true}, {Name: "dst_format", Kind: AttrString, Optional: true}}
	register(Kernel{Op: "DataFormatDimMap", Constraints: T(Indices), Inputs: []string{"x"}, Attrs: formats, Lower: lowerDataFormatDimMap})
	register(Kernel{Op: "DataFormatVecPermute", Constraints: T(Indices), Inputs: []string{"x"}, Attrs: formats, Lower: lowerDataFormatVecPermute})
	bitcast := []ir.DType{ir.F32, ir.F16, ir.BF16, ir.I32, ir.I64, ir.U8}
	register(Kernel{Op: "Bitcast", Constraints: []Constraint{{"T", bitcast}, {"type", bitcast}}, Inputs: []string{"input"},
		Attrs: []AttrSpec{{Name: "type", Kind: AttrType}}, Lower: lowerBitcast})
	register(Kernel{Op: "Empty", Constraints: []Constraint{{"dtype", Numeric}}, Inputs: []string{"shape"}, HostInputs: []string{"shape"}, Attrs: []AttrSpec{{Name: "dtype", Kind: AttrType}, {Name: "init", Kind: AttrBool, Optional: true}},
		Lower: lowerEmpty})
	register(Kernel{Op: "DeepCopy", Constraints: T(Numeric), Inputs: []string{"x"}, Lower: lowerDeepCopy})
	inplace := func(name string, types []ir.DType, kind ir.ScatterKind, negate bool) {
		register(Kernel{Op: name, Constraints: T(types), Inputs: []string{"x", "i", "v"}, Lower: lowerInplace(kind, negate)})
	}
	inplace("InplaceAdd", Numeric, ir.ScatterAdd, false)
	inplace("InplaceSub", Numeric, ir.ScatterAdd, true)
	inplace("InplaceUpdate", All, ir.ScatterReplace, false)
	masks := []AttrSpec{{Name: "begin_mask", Kind: AttrInt, Optional: true}, {Name: "end_mask", Kind: AttrInt, Optional: true},
		{Name: "ellipsis_mask", Kind: AttrInt, Optional: true}, {Name: "new_axis_mask", Kind: AttrInt, Optional: true},
		{Name: "shrink_axis_mask", Kind: AttrInt, Optional: true}}
	register(Kernel{Op: "TensorStridedSliceUpdate", Constraints: T(All), Inputs: []string{"input", "begin", "end", "strides", "value"},
		HostInputs: []string{"begin", "end", "strides"}, Attrs: masks,
		Lower: lowerTensorStridedSliceUpdate})
}

// rawBytes returns the contents of read input i, checked against its type.
func rawBytes(c *Call, i int, name string) ([]byte, error) {
	t := c.Type(i)
	raw, ok := c.Raw[i]
	if !ok || len(raw) != t.Bytes() {
		return nil, c.Errorf("needs the contents of %s %v (%d bytes), got %d bytes", name, t, t.Bytes(), len(raw))
	}
	return raw, nil
}

// rawInts decodes little-endian int32 or int64 values.
func rawInts(raw []byte, d ir.DType) []int64 {
	n := d.Size()
	out := make([]int64, len(raw)/max(n, 1))
	for i := range out {
		if d == ir.I32 {
			out[i] = int64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
		} else {
			out[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	}
	return out
}

// rawFloat decodes element i of a float tensor's bytes.
func rawFloat(raw []byte, d ir.DType, i int) float64 {
	switch d {
	case ir.F32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
	case ir.F16:
		return float64(ir.F16ToF32(binary.LittleEndian.Uint16(raw[2*i:])))
	case ir.BF16:
		return float64(ir.BF16ToF32(binary.LittleEndian.Uint16(raw[2*i:])))
	}
	return math.NaN()
}

// rawBits is element i's bits, zero-extended.
func rawBits(raw []byte, d ir.DType, i int) uint64 {
	switch d.Size() {
	case 1:
		return uint64(raw[i])
	case 2:
		return uint64(binary.LittleEndian.Uint16(raw[2*i:]))
	case 4:
		return uint64(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return binary.LittleEndian.Uint64(raw[8*i:])
}

// indexConstant is a constant of integer dtype d.
func indexConstant(b *ir.Builder, d ir.DType, shape ir.Shape, vals []int64) ir.Value {
	v := i64Constant(b, shape, vals)
	if d != ir.I64 {
		v = b.Convert(v, d)
	}
	return v
}

// takeRows gathers rows (leading-dim slices) of x at the given constant
// positions.
func takeRows(b *ir.Builder, x ir.Value, rows []int64) ir.Value {
	t := b.Type(x)
	out := append(ir.Shape{len(rows)}, t.Shape[1:]...)
	if len(rows) == 0 || t.Shape.Size() == 0 {
		return zeros(b, ir.TensorType{DType: t.DType, Shape: out})
	}
	sizes := t.Shape.Clone()
	sizes[0] = 1
	ids := i64Constant(b, ir.Shape{len(rows), 1}, rows)
	return b.Gather(x, ids, ir.GatherDims{OffsetDims: rangeInts(1, len(out)), CollapsedSliceDims: []int{0}, StartIndexMap: []int{0},
		IndexVectorDim: 1, SliceSizes: sizes})
}

// countInto adds weights (or ones) into zeros of shape out at the index
// vectors ids [n, k]; out-of-range ids are skipped, as TensorFlow's GPU
// kernels skip values at or past size.
func countInto(c *Call, d ir.DType, out ir.Shape, ids, weights ir.Value, n int) (ir.Value, error) {
	b := c.B
	acc := b.Full(ir.TensorType{DType: d, Shape: out}, 0)
	if n == 0 || out.Size() == 0 {
		return acc, nil
	}
	if weights < 0 {
		weights = b.Full(ir.TensorType{DType: d, Shape: ir.Shape{n}}, 1)
	}
	return scatterInto(c, acc, ids, weights, ir.ScatterAdd)
}

func lowerBincount(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	ta, tw := c.Type(0), c.Type(2)
	size, err := c.hostScalar(1, "size")
	if err != nil {
		return err
	}
	if size < 0 || size > 1<<40 {
		return c.Errorf("size (%d) must be non-negative (arr %v)", size, ta)
	}
	if ta.DType != ir.I32 {
		return c.Errorf("arr must be int32, got %v", ta)
	}
	n := ta.Shape.Size()
	weights := ir.Value(-1)
	if tw.Shape.Size() > 0 {
		if !tw.Shape.Equal(ta.Shape) {
			return c.Errorf("weights %v must have the shape of arr %v, or no elements", tw, ta)
		}
		weights = c.B.Reshape(c.In[2], ir.Shape{n})
	}
	ids := c.B.Reshape(c.In[0], ir.Shape{n, 1})
	out, err := countInto(c, tw.DType, ir.Shape{int(size)}, ids, weights, n)
	if err != nil {
		return err
	}
	c.Out = []ir.Value{out}
	return nil
}

// lowerDenseBincount counts a vector's values, or each row's of a matrix;
// binary_output says only whether a value occurs (and ignores weights, as
// TensorFlow's kernels do).
func lowerDenseBincount(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	ti, tw := c.Type(0), c.Type(2)
	size, err := c.hostScalar(1, "size")
	if err != nil {
		return err
	}
	r := ti.Shape.Rank()
	if size < 0 || size > 1<<40 || r < 1 || r > 2 {
		return c.Errorf("input %v must be a vector or matrix and size (%d) non-negative", ti, size)
	}
	b := c.B
	binaryOut := c.Attrs.Bool("binary_output")
	n := ti.Shape.Size()
	weights := ir.Value(-1)
	if tw.Shape.Size() > 0 && !binaryOut {
		if !tw.Shape.Equal(ti.Shape) {
			return c.Errorf("weights %v must have the shape of input %v, or no elements", tw, ti)
		}
		weights = b.Reshape(c.In[2], ir.Shape{n})
	}
	out := ir.Shape{int(size)}
	var ids ir.Value
	if r == 1 {
		ids = b.Reshape(c.In[0], ir.Shape{n, 1})
	} else {
		out = ir.Shape{ti.Shape[0], int(size)}
		row := b.Iota(ir.TensorType{DType: ti.DType, Shape: append(ti.Shape.Clone(), 1)}, 0)
		ids = b.Reshape(b.Concat(2, row, b.Reshape(c.In[0], append(ti.Shape.Clone(), 1))), ir.Shape{n, 2})
	}
	y, err := countInto(c, tw.DType, out, ids, weights, n)
	if err != nil {
		return err
	}
	if binaryOut {
		y = b.Select(b.Compare(ir.CmpGT, y, like(b, y, 0)), like(b, y, 1), like(b, y, 0))
	}
	c.Out = []ir.Value{y}
	return nil
}

// lowerBucketize counts the boundaries each value is not below:
// std::upper_bound's index, as bucketize_op.cc finds it, comparing in
// float32 (the boundaries' type). NaN is below no boundary.
func lowerBucketize(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	t := c.Type(0)
	bs := c.Attrs.FloatList("boundaries")
	for i := 1; i < len(bs); i++ {
		if bs[i] < bs[i-1] {
			return c.Errorf("expected sorted boundaries, got %v (input %v)", bs, t)
		}
	}
	b := c.B
	out := ir.TensorType{DType: ir.I32, Shape: t.Shape}
	n := t.Shape.Size()
	if n == 0 || len(bs) == 0 {
		c.Out = []ir.Value{b.Full(out, 0)}
		return nil
	}
	vals := make([]float64, len(bs))
	for i, v := range bs {
		vals[i] = float64(v)
	}
	grid := ir.Shape{n, len(bs)}
	x := b.BroadcastInDim(b.Reshape(b.Convert(c.In[0], ir.F32), ir.Shape{n}), grid, []int{0})
	bound := b.BroadcastInDim(f32Constant(b, vals), grid, []int{1})
	below := b.Compare(ir.CmpLT, x, bound)
	notBelow := b.Select(below, b.Full(ir.TensorType{DType: ir.I32, Shape: grid}, 0), b.Full(ir.TensorType{DType: ir.I32, Shape: grid}, 1))
	c.Out = []ir.Value{b.Reshape(b.Reduce(notBelow, ir.ReduceSum, []int{1}), t.Shape)}
	return nil
}

// lowerHistogram bins values into nbins equal bins over value_range, as
// histogram_op.cc does: (max(x, lo) - lo) in the values' dtype, divided by
// the bin width and clamped to the last bin, the division in float32 (the
// CPU's is in float64: the bin of a value within rounding of an edge may
// differ).
func lowerHistogram(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	tv, tr := c.Type(0), c.Type(1)
	nbins, err := c.hostScalar(2, "nbins")
	if err != nil {
		return err
	}
	if nbins <= 0 || nbins > 1<<30 {
		return c.Errorf("nbins should be a positive number, but got '%d' (values %v)", nbins, tv)
	}
	if tr.Shape.Size() != 2 || tr.DType != tv.DType {
		return c.Errorf("value_range %v must have 2 elements of the values' dtype %v", tr, tv)
	}
	if d := c.Attrs.Type("dtype", ir.I32); d != ir.I32 {
		return c.Errorf("dtype %v is not supported; use int32", d)
	}
	b := c.B
	n := tv.Shape.Size()
	if n == 0 {
		c.Out = []ir.Value{b.Full(ir.TensorType{DType: ir.I32, Shape: ir.Shape{int(nbins)}}, 0)}
		return nil
	}
	vr := b.Reshape(c.In[1], ir.Shape{2})
	lo := b.Reshape(b.Slice(vr, []int{0}, []int{1}, []int{1}), nil)
	hi := b.Reshape(b.Slice(vr, []int{1}, []int{2}, []int{1}), nil)
	step := b.Binary(ir.OpDiv, b.Convert(b.Binary(ir.OpSub, hi, lo), ir.F32), b.Scalar(ir.F32, float64(nbins)))
	x := b.Reshape(c.In[0], ir.Shape{n})
	los := b.BroadcastInDim(lo, ir.Shape{n}, nil)
	off := b.Convert(b.Binary(ir.OpSub, b.Binary(ir.OpMax, x, los), los), ir.F32)
	pos := b.Binary(ir.OpDiv, off, b.BroadcastInDim(step, ir.Shape{n}, nil))
	pos = b.Binary(ir.OpMin, pos, b.Full(ir.TensorType{DType: ir.F32, Shape: ir.Shape{n}}, float64(nbins-1)))
	idx := b.Reshape(b.Convert(pos, ir.I32), ir.Shape{n, 1})
	out, err := countInto(c, ir.I32, ir.Shape{int(nbins)}, idx, -1, n)
	if err != nil {
		return err
	}
	c.Out = []ir.Value{out}
	return nil
}

// lowerBound finds, in each row of sorted_inputs, where each value of the
// same row of values would go: the count of elements below it (LowerBound)
// or not above it (UpperBound), which for a sorted row is the index
// std::lower_bound and std::upper_bound return.
func lowerBound(upper bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(2); err != nil {
			return err
		}
		ts, tv := c.Type(0), c.Type(1)
		if ts.Shape.Rank() != 2 || tv.Shape.Rank() != 2 || ts.Shape[0] != tv.Shape[0] || ts.DType != tv.DType {
			return c.Errorf("sorted_inputs %v and values %v must be matrices of one dtype with the same number of rows", ts, tv)
		}
		out := c.Attrs.Type("out_type", ir.I32)
		if out != ir.I32 && out != ir.I64 {
			return c.Errorf("out_type %v is not supported; use int32 or int64", out)
		}
		b := c.B
		rows, n, m := ts.Shape[0], ts.Shape[1], tv.Shape[1]
		shape := ir.Shape{rows, m}
		if rows*m == 0 || n == 0 {
			c.Out = []ir.Value{b.Full(ir.TensorType{DType: out, Shape: shape}, 0)}
			return nil
		}
		grid := ir.Shape{rows, m, n}
		s := b.BroadcastInDim(c.In[0], grid, []int{0, 2})
		v := b.BroadcastInDim(c.In[1], grid, []int{0, 1})
		one, zero := b.Full(ir.TensorType{DType: out, Shape: grid}, 1), b.Full(ir.TensorType{DType: out, Shape: grid}, 0)
		var hit ir.Value
		if upper {
			hit = b.Select(b.Compare(ir.CmpLT, v, s), zero, one) // !(v < s)
		} else {
			hit = b.Select(b.Compare(ir.CmpLT, s, v), one, zero)
		}
		c.Out = []ir.Value{b.Reduce(hit, ir.ReduceSum, []int{2})}
		return nil
	}
}

// uniqueKey is an element's identity for Unique, as unique_op.cc's hash
// map sees it: float32 values compare as numbers (-0 is 0) and the 16-bit
// floats by their bits (their hash tells -0 from 0, so equal values never
// meet); every NaN is new; the rest compare by their bits.
type uniqueKey struct {
	f    float64
	bits uint64
}

// lowerUniqueWithCounts finds the distinct values of x in first-occurrence
// order on the host, from x's bytes: their positions in x (the device
// gathers y from them), each element's index into y and each value's count.
func lowerUniqueWithCounts(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	t := c.Type(0)
	if t.Shape.Rank() != 1 {
		return c.Errorf("x must be a vector, got %v", t)
	}
	out := c.Attrs.Type("out_idx", ir.I32)
	if out != ir.I32 && out != ir.I64 {
		return c.Errorf("out_idx %v is not supported; use int32 or int64", out)
	}
	raw, err := rawBytes(c, 0, "x")
	if err != nil {
		return err
	}
	n := t.Shape[0]
	seen := map[uniqueKey]int64{}
	var first, counts []int64
	idx := make([]int64, n)
	for i := range n {
		var k uniqueKey
		switch f := rawFloat(raw, t.DType, i); {
		case t.DType.IsFloat() && math.IsNaN(f):
			k = uniqueKey{f: math.Inf(1), bits: uint64(i) + 1} // a NaN equals nothing, itself included
		case t.DType == ir.F32:
			k.f = f
		default:
			k.bits = rawBits(raw, t.DType, i)
		}
		j, ok := seen[k]
		if !ok {
			j = int64(len(first))
			seen[k] = j
			first = append(first, int64(i))
			counts = append(counts, 0)
		}
		idx[i] = j
		counts[j]++
	}
	b := c.B
	u := len(first)
	c.Out = []ir.Value{takeRows(b, c.In[0], first), indexConstant(b, out, ir.Shape{n}, idx), indexConstant(b, out, ir.Shape{u}, counts)}
	return nil
}

// lowerDynamicStitch interleaves the data rows into merged[index]: the
// host reads every index (Kernel.ReadInputsOf), sizes the output by the
// largest, and picks for each output row the last data row naming it, as
// dynamic_stitch_op.cc's kernels do; the device gathers those rows. Rows
// no index names are zero.
func lowerDynamicStitch(c *Call) error {
	if len(c.In) == 0 || len(c.In)%2 != 0 {
		return c.Errorf("takes N indices and N data tensors, got %d inputs (%s)", len(c.In), c.Inputs())
	}
	n := len(c.In) / 2
	t0, d0 := c.Type(0), c.Type(n)
	if d0.Shape.Rank() < t0.Shape.Rank() {
		return c.Errorf("data[0] %v must have indices[0] %v's shape as a prefix", d0, t0)
	}
	rest := d0.Shape[t0.Shape.Rank():]
	winner := map[int64]int64{} // output row -> flattened data row
	var parts []ir.Value
	total := int64(0)
	maxID := int64(-1)
	b := c.B
	for m := range n {
		ti, td := c.Type(m), c.Type(n+m)
		if ti.DType != ir.I32 {
			return c.Errorf("indices[%d] must be int32, got %v", m, ti)
		}
		k := ti.Shape.Rank()
		if td.DType != d0.DType || td.Shape.Rank() != k+rest.Rank() || !td.Shape[:k].Equal(ti.Shape) || !td.Shape[k:].Equal(rest) {
			return c.Errorf("data[%d] %v must be indices[%d] %v's shape followed by %v (from data[0] %v and indices[0] %v)", m, td, m, ti, rest, d0, t0)
		}
		raw, err := rawBytes(c, m, fmt.Sprintf("indices[%d]", m))
		if err != nil {
			return err
		}
		for i, id := range rawInts(raw, ir.I32) {
			if id < 0 {
				return c.Errorf("indices[%d][%d] = %d must be non-negative", m, i, id)
			}
			winner[id] = total + int64(i)
			maxID = max(maxID, id)
		}
		rows := ti.Shape.Size()
		total += int64(rows)
		if rows > 0 {
			parts = append(parts, b.Reshape(c.In[n+m], append(ir.Shape{rows}, rest...)))
		}
	}
	out := append(ir.Shape{int(maxID + 1)}, rest...)
	if maxID < 0 || rest.Size() == 0 {
		c.Out = []ir.Value{zeros(b, ir.TensorType{DType: d0.DType, Shape: out})}
		return nil
	}
	all := parts[0]
	if len(parts) > 1 {
		all = b.Concat(0, parts...)
	}
	src := make([]int64, maxID+1)
	covered := make([]int64, maxID+1)
	gaps := false
	for r := range src {
		if w, ok := winner[int64(r)]; ok {
			src[r], covered[r] = w, 1
		} else {
			gaps = true
		}
	}
	y := takeRows(b, all, src)
	if gaps {
		mask := b.BroadcastInDim(b.Compare(ir.CmpNE, i64Constant(b, ir.Shape{len(src)}, covered), b.Full(ir.TensorType{DType: ir.I64, Shape: ir.Shape{len(src)}}, 0)), out, []int{0})
		y = b.Select(mask, y, zeros(b, b.Type(y)))
	}
	c.Out = []ir.Value{y}
	return nil
}

// lowerDynamicPartition sends each row of data (a slice under one element
// of partitions) to the output its partition names, in order: the host
// reads partitions and lists each output's rows, which the device gathers.
func lowerDynamicPartition(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	td, tp := c.Type(0), c.Type(1)
	num := c.Attrs.Int("num_partitions", -1)
	if num < 1 || num > 1<<16 {
		return c.Errorf("num_partitions must be at least 1, got %d", num)
	}
	k := tp.Shape.Rank()
	if tp.DType != ir.I32 || td.Shape.Rank() < k || !td.Shape[:k].Equal(tp.Shape) {
		return c.Errorf("partitions %v must be int32 with a shape that is a prefix of data %v's", tp, td)
	}
	raw, err := rawBytes(c, 1, "partitions")
	if err != nil {
		return err
	}
	rows := make([][]int64, num)
	for i, p := range rawInts(raw, ir.I32) {
		if p < 0 || p >= num {
			return c.Errorf("partitions[%d] = %d is not in [0, %d)", i, p, num)
		}
		rows[p] = append(rows[p], int64(i))
	}
	b := c.B
	rest := td.Shape[k:]
	flat := b.Reshape(c.In[0], append(ir.Shape{tp.Shape.Size()}, rest...))
	for _, r := range rows {
		c.Out = append(c.Out, takeRows(b, flat, r))
	}
	return nil
}

// lowerCheckNumerics passes the tensor through, or fails with TensorFlow's
// message when it holds NaN or an infinity (check_numerics_op.cc; V2 tells
// the infinities' signs apart). The host reads the tensor's bytes.
func lowerCheckNumerics(v2 bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(1); err != nil {
			return err
		}
		t := c.Type(0)
		if !t.DType.IsFloat() {
			return c.Errorf("tensor must be a float, got %v", t)
		}
		raw, err := rawBytes(c, 0, "tensor")
		if err != nil {
			return err
		}
		var nan, pos, neg bool
		for i := range t.Shape.Size() {
			v := rawFloat(raw, t.DType, i)
			nan = nan || math.IsNaN(v)
			pos = pos || math.IsInf(v, 1)
			neg = neg || math.IsInf(v, -1)
		}
		var found []string
		if v2 {
			if neg {
				found = append(found, "-Inf")
			}
			if pos {
				found = append(found, "+Inf")
			}
		} else if neg || pos {
			found = append(found, "Inf")
		}
		if nan {
			found = append(found, "NaN")
		}
		if len(found) > 0 {
			what := strings.Join(found, " and ")
			if len(found) == 3 {
				what = found[0] + ", " + found[1] + ", and " + found[2]
			}
			// TensorFlow's own message, which users and tests match on; it
			// names the op itself ([Op:CheckNumerics]).
			return status.Invalidf("%s : Tensor had %s values", c.Attrs.String("message", ""), what)
		}
		c.Out = []ir.Value{c.In[0]}
		return nil
	}
}

// dataFormats reads src_format and dst_format: permutations of one another,
// of 4 or 5 letters.
func dataFormats(c *Call) (src, dst string, err error) {
	src, dst = c.Attrs.String("src_format", "NHWC"), c.Attrs.String("dst_format", "NCHW")
	if len(src) != 4 && len(src) != 5 || len(dst) != len(src) {
		return "", "", c.Errorf("source format %q and destination format %q must both have 4 or 5 letters", src, dst)
	}
	a, b := []byte(src), []byte(dst)
	slices.Sort(a)
	slices.Sort(b)
	if string(a) != string(b) || len(slices.Compact(a)) != len(src) {
		return "", "", c.Errorf("destination format %q must be a permutation of source format %q", dst, src)
	}
	return src, dst, nil
}

// lowerDataFormatDimMap maps each dim index of src_format (negative counts
// from the end) to where dst_format puts that letter.
func lowerDataFormatDimMap(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	src, dst, err := dataFormats(c)
	if err != nil {
		return err
	}
	b := c.B
	r := len(src)
	x := c.In[0]
	rk := like(b, x, float64(r))
	// ((x mod r) + r) mod r: C's remainder, made non-negative.
	m := b.Binary(ir.OpRem, b.Binary(ir.OpAdd, b.Binary(ir.OpRem, x, rk), rk), rk)
	y := like(b, x, 0)
	for i := range r {
		j := strings.IndexByte(dst, src[i])
		y = b.Select(b.Compare(ir.CmpEQ, m, like(b, x, float64(i))), like(b, x, float64(j)), y)
	}
	c.Out = []ir.Value{y}
	return nil
}

// lowerDataFormatVecPermute permutes a vector of 4 or 5 values (or rows of
// a [4 or 5, 2] matrix) from src_format's order to dst_format's; a vector
// (or matrix) of 2 or 3 holds only the spatial dims, permuted likewise.
func lowerDataFormatVecPermute(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	src, dst, err := dataFormats(c)
	if err != nil {
		return err
	}
	t := c.Type(0)
	full, spatial := len(src), len(src)-2
	r := t.Shape.Rank()
	if r < 1 || r > 2 || t.Shape[0] != full && t.Shape[0] != spatial || r == 2 && t.Shape[1] != 2 {
		return c.Errorf("input must be a vector or a matrix of 2 columns, of %d or %d rows; got %v", full, spatial, t)
	}
	if t.Shape[0] == spatial {
		keep := func(f string) string {
			return strings.Map(func(ch rune) rune {
				if ch == 'H' || ch == 'W' || ch == 'D' && spatial == 3 {
					return ch
				}
				return -1
			}, f)
		}
		src, dst = keep(src), keep(dst)
		if len(src) != spatial || len(dst) != spatial {
			return c.Errorf("formats %q and %q must have %d spatial dims for input %v", c.Attrs.String("src_format", "NHWC"), c.Attrs.String("dst_format", "NCHW"), spatial, t)
		}
	}
	rows := make([]int64, len(dst))
	for j := range dst {
		rows[j] = int64(strings.IndexByte(src, dst[j]))
	}
	c.Out = []ir.Value{takeRows(c.B, c.In[0], rows)}
	return nil
}

// bitsType is the integer type of a dtype's width, for shifting its bits.
func bitsType(d ir.DType) ir.DType {
	switch d.Size() {
	case 1:
		return ir.U8
	case 2:
		return ir.I16
	case 4:
		return ir.I32
	}
	return ir.I64
}

// bitcastTo is x's bits as dtype d, with no instruction where x already is
// d (integers that need no reinterpreting run where bitcasts cannot).
func bitcastTo(b *ir.Builder, x ir.Value, d ir.DType) ir.Value {
	if b.Type(x).DType == d {
		return x
	}
	return b.BitcastConvert(x, d)
}

// lowerBitcast reinterprets the input's bytes as type: same width keeps
// the shape; a wider input gains a last dim of the width ratio, a narrower
// one loses its last dim, which must be that ratio. The parts of a wider
// element are its little-endian bytes in order, split and joined with
// shifts in int64.
func lowerBitcast(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	t := c.Type(0)
	to, ok := c.Attrs.Types["type"]
	if !ok {
		return c.Errorf("attribute type is missing (input %v)", t)
	}
	b := c.B
	in, out := t.DType.Size(), to.Size()
	x := c.In[0]
	switch {
	case in == out:
		if to == t.DType {
			c.Out = []ir.Value{x}
			return nil
		}
		c.Out = []ir.Value{b.BitcastConvert(x, to)}
	case in > out:
		k := in / out
		shape := append(t.Shape.Clone(), k)
		if shape.Size() == 0 {
			c.Out = []ir.Value{zeros(b, ir.TensorType{DType: to, Shape: shape})}
			return nil
		}
		w := b.Convert(bitcastTo(b, x, bitsType(t.DType)), ir.I64)
		w = b.BroadcastInDim(w, shape, seq(t.Shape.Rank()))
		shift := b.Binary(ir.OpMul, b.Iota(ir.TensorType{DType: ir.I64, Shape: shape}, len(t.Shape)), b.Full(ir.TensorType{DType: ir.I64, Shape: shape}, float64(8*out)))
		part := b.Binary(ir.OpShiftRightLogical, w, shift)
		c.Out = []ir.Value{bitcastTo(b, b.Convert(part, bitsType(to)), to)}
	default:
		k := out / in
		r := t.Shape.Rank()
		if r < 1 || t.Shape[r-1] != k {
			return c.Errorf("cannot bitcast %v to %v: the last dim must be %d, the width ratio", t, to, k)
		}
		shape := t.Shape[:r-1].Clone()
		if t.Shape.Size() == 0 {
			c.Out = []ir.Value{zeros(b, ir.TensorType{DType: to, Shape: shape})}
			return nil
		}
		mask := b.Full(ir.TensorType{DType: ir.I64, Shape: t.Shape}, float64(uint64(1)<<(8*in)-1))
		w := b.Binary(ir.OpAnd, b.Convert(bitcastTo(b, x, bitsType(t.DType)), ir.I64), mask)
		shift := b.Binary(ir.OpMul, b.Iota(ir.TensorType{DType: ir.I64, Shape: t.Shape}, r-1), b.Full(ir.TensorType{DType: ir.I64, Shape: t.Shape}, float64(8*in)))
		joined := b.Reduce(b.Binary(ir.OpShiftLeft, w, shift), ir.ReduceSum, []int{r - 1})
		c.Out = []ir.Value{bitcastTo(b, b.Convert(joined, bitsType(to)), to)}
	}
	return nil
}

// lowerEmpty gives zeros: TensorFlow leaves the contents undefined unless
// init is set, when they are zeros.
func lowerEmpty(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	shape, err := c.hostShape(0, "shape")
	if err != nil {
		return err
	}
	d, ok := c.Attrs.Types["dtype"]
	if !ok {
		return c.Errorf("attribute dtype is missing (shape %v)", shape)
	}
	c.Out = []ir.Value{c.B.Full(ir.TensorType{DType: d, Shape: shape}, 0)}
	return nil
}

// lowerDeepCopy copies x into a buffer of its own: the program computes
// (x + 0 would change -0; a select of x with itself does not), so the
// frontend never forwards the input's buffer.
func lowerDeepCopy(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	b := c.B
	t := c.Type(0)
	c.Out = []ir.Value{b.Select(b.Full(ir.TensorType{DType: ir.Bool, Shape: t.Shape}, 1), c.In[0], c.In[0])}
	return nil
}

// lowerInplace adds (or subtracts, or writes) the rows of v into rows i of
// x (inplace_ops.cc); repeated rows add up, or the last write wins.
func lowerInplace(kind ir.ScatterKind, negate bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(3); err != nil {
			return err
		}
		tx, ti, tv := c.Type(0), c.Type(1), c.Type(2)
		if tx.Shape.Rank() < 1 || ti.DType != ir.I32 || ti.Shape.Rank() > 1 || tv.DType != tx.DType {
			return c.Errorf("x must have rank at least 1, i be an int32 vector and v x's dtype: got %s", c.Inputs())
		}
		n := ti.Shape.Size()
		want := append(ir.Shape{n}, tx.Shape[1:]...)
		if tv.Shape.Size() != want.Size() || !(tv.Shape.Equal(want) || ti.Shape.Rank() == 0 && tv.Shape.Equal(tx.Shape[1:])) {
			return c.Errorf("v %v must have shape %v: x %v with i's %d rows", tv, want, tx, n)
		}
		b := c.B
		v := b.Reshape(c.In[2], want)
		if negate {
			v = b.Unary(ir.OpNeg, v)
		}
		y, err := scatterInto(c, c.In[0], b.Reshape(c.In[1], ir.Shape{n, 1}), v, kind)
		if err != nil {
			return err
		}
		if y == c.In[0] {
			y = b.Select(b.Full(ir.TensorType{DType: ir.Bool, Shape: tx.Shape}, 1), y, y)
		}
		c.Out = []ir.Value{y}
		return nil
	}
}

// lowerTensorStridedSliceUpdate writes value (broadcast to the slice's
// shape) over the strided slice of input: value and a mask are padded into
// the slice's positions as StridedSliceGrad places dy, and a select picks.
func lowerTensorStridedSliceUpdate(c *Call) error {
	if err := c.arity(5); err != nil {
		return err
	}
	t, tv := c.Type(0), c.Type(4)
	begin, end, strides, err := readStridedHost(c, 1)
	if err != nil {
		return err
	}
	spec, err := stridedSliceSpec(c, t.Shape, begin, end, strides)
	if err != nil {
		return err
	}
	if tv.DType != t.DType {
		return c.Errorf("value %v must have input %v's dtype", tv, t)
	}
	b := c.B
	value := c.In[4]
	if !tv.Shape.Equal(spec.final) {
		s, ok := ir.BroadcastShapes(tv.Shape, spec.final)
		if !ok || !s.Equal(spec.final) {
			return c.Errorf("value %v does not broadcast to the slice's shape %v (input %v, begin %v, end %v, strides %v)", tv, spec.final, t, begin, end, strides)
		}
		value = b.BroadcastInDim(value, spec.final, rangeInts(len(spec.final)-tv.Shape.Rank(), len(spec.final)))
	}
	proc := spec.processing()
	if proc.Size() == 0 || t.Shape.Size() == 0 {
		c.Out = []ir.Value{b.Select(b.Full(ir.TensorType{DType: ir.Bool, Shape: t.Shape}, 1), c.In[0], c.In[0])}
		return nil
	}
	v := b.Reshape(value, proc)
	start, step := spec.ascending(t.Shape)
	r := len(t.Shape)
	low, high, interior := make([]int, r), make([]int, r), make([]int, r)
	for i := range r {
		low[i] = start[i]
		interior[i] = step[i] - 1
		high[i] = t.Shape[i] - (start[i] + (proc[i]-1)*step[i] + 1)
	}
	rev := spec.reversed()
	placed := b.Reverse(b.Pad(v, scalarZero(b, t.DType), low, high, interior), rev)
	mask := b.Reverse(b.Pad(b.Full(ir.TensorType{DType: ir.Bool, Shape: proc}, 1), b.Scalar(ir.Bool, 0), low, high, interior), rev)
	c.Out = []ir.Value{b.Select(mask, placed, c.In[0])}
	return nil
}
