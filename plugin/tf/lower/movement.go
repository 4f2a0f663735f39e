package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Data movement: shapes, concatenation and splitting, slicing, padding,
// tiling, packing, fills and ranges. Shapes, axes and sizes are host inputs
// (TensorFlow keeps them in host memory on its GPU too). StridedSlice is in
// slice.go.

func init() {
	reg := func(name string, types []ir.DType, inputs []string, host []string, attrs []AttrSpec, f func(c *Call) error) {
		var cons []Constraint
		if types != nil {
			cons = T(types)
		}
		register(Kernel{Op: name, Constraints: cons, Inputs: inputs, HostInputs: host, Attrs: attrs, Lower: f})
	}
	identity := func(c *Call) error {
		if err := c.arity(1); err != nil {
			return err
		}
		c.Out = []ir.Value{c.In[0]}
		return nil
	}
	reg("Identity", All, []string{"input"}, nil, nil, identity)
	// Snapshot, StopGradient and PreventGradient are identities to the
	// device (the last two matter only to gradient code).
	reg("Snapshot", All, []string{"input"}, nil, nil, identity)
	reg("StopGradient", All, []string{"input"}, nil, nil, identity)
	reg("PreventGradient", All, []string{"input"}, nil, []AttrSpec{{Name: "message", Kind: AttrString, Optional: true}}, identity)
	reg("Reshape", All, []string{"tensor", "shape"}, []string{"shape"}, nil, lowerReshape)
	reg("Squeeze", All, []string{"input"}, nil, []AttrSpec{{Name: "squeeze_dims", Kind: AttrInts, Optional: true}}, lowerSqueeze)
	reg("ExpandDims", All, []string{"input", "dim"}, []string{"dim"}, nil, lowerExpandDims)
	reg("Transpose", All, []string{"x", "perm"}, []string{"perm"}, nil, lowerTranspose)
	// The axis comes after a list, so its position counts from the end.
	register(Kernel{Op: "ConcatV2", Constraints: T(All), Inputs: []string{"values", "axis"}, HostInputs: []string{"axis"}, HostInputIndex: []int{-1}, Lower: lowerConcat(false)})
	// Concat is ConcatV2's older form, with the axis first.
	reg("Concat", All, []string{"concat_dim", "values"}, []string{"concat_dim"}, nil, lowerConcat(true))
	reg("Split", All, []string{"split_dim", "value"}, []string{"split_dim"},
		[]AttrSpec{{Name: "num_split", Kind: AttrInt}}, lowerSplit)
	reg("SplitV", All, []string{"value", "size_splits", "split_dim"}, []string{"size_splits", "split_dim"},
		[]AttrSpec{{Name: "num_split", Kind: AttrInt}}, lowerSplitV)
	reg("Slice", All, []string{"input", "begin", "size"}, []string{"begin", "size"}, nil, lowerSlice)
	reg("Pad", All, []string{"input", "paddings"}, []string{"paddings"}, nil, lowerPad(false))
	reg("PadV2", All, []string{"input", "paddings", "constant_values"}, []string{"paddings"}, nil, lowerPad(true))
	reg("MirrorPad", All, []string{"input", "paddings"}, []string{"paddings"},
		[]AttrSpec{{Name: "mode", Kind: AttrString}}, lowerMirrorPad)
	reg("Tile", All, []string{"input", "multiples"}, []string{"multiples"}, nil, lowerTile)
	reg("Pack", All, []string{"values"}, nil, []AttrSpec{{Name: "axis", Kind: AttrInt, Optional: true}}, lowerPack)
	reg("Unpack", All, []string{"value"}, nil,
		[]AttrSpec{{Name: "num", Kind: AttrInt}, {Name: "axis", Kind: AttrInt, Optional: true}}, lowerUnpack)
	reg("Fill", All, []string{"dims", "value"}, []string{"dims"}, nil, lowerFill)
	reg("ZerosLike", All, []string{"x"}, nil, nil, lowerFullLike(0))
	reg("OnesLike", All, []string{"x"}, nil, nil, lowerFullLike(1))
	reg("BroadcastTo", All, []string{"input", "shape"}, []string{"shape"}, nil, lowerBroadcastTo)
	// LinSpace's GPU kernel is float32 with start, stop and num in host
	// memory (sequence_ops.cc); start and stop are device scalars here, since
	// host inputs arrive as integers; num decides the shape.
	register(Kernel{Op: "LinSpace", Constraints: []Constraint{{"T", []ir.DType{ir.F32}}, {"Tidx", Indices}}, Inputs: []string{"start", "stop", "num"},
		HostInputs: []string{"num"}, Lower: lowerLinSpace})
	// Range's inputs are host scalars; the host inputs arrive as integers,
	// so only integer ranges are registered (see the package report).
	register(Kernel{Op: "Range", Constraints: []Constraint{{"Tidx", Indices}}, Inputs: []string{"start", "limit", "delta"},
		HostInputs: []string{"start", "limit", "delta"},
		Attrs:      []AttrSpec{{Name: "Tidx", Kind: AttrType}}, Lower: lowerRange})
}

func lowerReshape(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	t := c.Type(0)
	want, err := c.hostInts(1, "shape")
	if err != nil {
		return err
	}
	// TensorFlow's rule (reshape_op.h, ValidateSizes): zero sizes stay out
	// of the product, so a -1 beside a 0 is still inferred from the nonzero
	// dims: [0,4] reshaped to [2,0,-1] is [2,0,2].
	shape := make(ir.Shape, len(want))
	infer, known, zero := -1, 1, false
	for i, d := range want {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			return c.Errorf("shape %v may hold one -1 and no other negative size (tensor %v)", want, t)
		case d == 0:
			zero = true
		default:
			shape[i] = int(d)
			known *= int(d)
		}
	}
	if infer >= 0 {
		in, inZero := 1, false
		for _, d := range t.Shape {
			if d > 0 || !zero {
				in *= d
			} else {
				inZero = true
			}
		}
		if known == 0 || (!inZero && in%known != 0) {
			return c.Errorf("cannot reshape %v (%d elements) to %v", t, t.Shape.Size(), want)
		}
		shape[infer] = in / known
	}
	if shape.Size() != t.Shape.Size() {
		return c.Errorf("cannot reshape %v (%d elements) to %v (%d elements)", t, t.Shape.Size(), want, shape.Size())
	}
	c.Out = []ir.Value{c.B.Reshape(c.In[0], shape)}
	return nil
}

func lowerSqueeze(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	t := c.Type(0)
	r := t.Shape.Rank()
	drop := make([]bool, r)
	dims := c.Attrs.Ints["squeeze_dims"]
	for _, d := range dims {
		a, err := c.axis(d, r, "squeeze dim")
		if err != nil {
			return err
		}
		if t.Shape[a] != 1 {
			return c.Errorf("cannot squeeze dim %d of %v: its size is not 1", d, t)
		}
		drop[a] = true
	}
	var out ir.Shape
	for i, n := range t.Shape {
		if len(dims) == 0 && n == 1 || drop[i] {
			continue
		}
		out = append(out, n)
	}
	c.Out = []ir.Value{c.B.Reshape(c.In[0], out)}
	return nil
}

func lowerExpandDims(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	t := c.Type(0)
	d, err := c.hostScalar(1, "dim")
	if err != nil {
		return err
	}
	a, err := c.axis(d, t.Shape.Rank()+1, "dim")
	if err != nil {
		return err
	}
	out := append(append(t.Shape[:a].Clone(), 1), t.Shape[a:]...)
	c.Out = []ir.Value{c.B.Reshape(c.In[0], out)}
	return nil
}

func lowerTranspose(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	t := c.Type(0)
	r := t.Shape.Rank()
	vals, err := c.hostInts(1, "perm")
	if err != nil {
		return err
	}
	if len(vals) != r {
		return c.Errorf("perm %v is not a permutation of the %d dimensions of %v", vals, r, t)
	}
	perm := make([]int, r)
	seen := make([]bool, r)
	for i, p := range vals {
		if p < 0 {
			p += int64(r)
		}
		if p < 0 || p >= int64(r) || seen[p] {
			return c.Errorf("perm %v is not a permutation of the %d dimensions of %v", vals, r, t)
		}
		seen[p] = true
		perm[i] = int(p)
	}
	c.Out = []ir.Value{c.B.Transpose(c.In[0], perm)}
	return nil
}

// lowerConcat joins the values along the axis, a host input after them
// (ConcatV2) or before them (Concat).
func lowerConcat(axisFirst bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.atLeast(2); err != nil {
			return err
		}
		n := len(c.In) - 1
		first, ai := 0, n
		if axisFirst {
			first, ai = 1, 0
		}
		ax, err := c.hostScalar(ai, "axis")
		if err != nil {
			return err
		}
		return concatValues(c, first, n, ax)
	}
}

// concatValues concatenates inputs first..first+n-1 along axis ax.
func concatValues(c *Call, first, n int, ax int64) error {
	t0 := c.Type(first)
	if t0.Shape.Rank() == 0 {
		return c.Errorf("cannot concatenate scalars (inputs %s)", c.Inputs())
	}
	axis, err := c.axis(ax, t0.Shape.Rank(), "axis")
	if err != nil {
		return err
	}
	var parts []ir.Value
	for i := first; i < first+n; i++ {
		t := c.Type(i)
		if t.DType != t0.DType || t.Shape.Rank() != t0.Shape.Rank() {
			return c.Errorf("input %d %v does not match input %d %v", i, t, first, t0)
		}
		for j := range t.Shape {
			if j != axis && t.Shape[j] != t0.Shape[j] {
				return c.Errorf("input %d %v differs from input %d %v outside axis %d", i, t, first, t0, axis)
			}
		}
		parts = append(parts, c.In[i])
	}
	c.Out = []ir.Value{c.B.Concat(axis, parts...)}
	return nil
}

// splitAt slices x along axis into pieces of the given sizes.
func splitAt(b *ir.Builder, x ir.Value, axis int, sizes []int) []ir.Value {
	s := b.Type(x).Shape
	r := s.Rank()
	var out []ir.Value
	at := 0
	for _, n := range sizes {
		start, limit := make([]int, r), s.Clone()
		start[axis], limit[axis] = at, at+n
		out = append(out, b.Slice(x, start, limit, filled(r, 1)))
		at += n
	}
	return out
}

func lowerSplit(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	t := c.Type(1)
	d, err := c.hostScalar(0, "split_dim")
	if err != nil {
		return err
	}
	axis, err := c.axis(d, t.Shape.Rank(), "split_dim")
	if err != nil {
		return err
	}
	n := int(c.Attrs.Int("num_split", 0))
	if n < 1 || t.Shape[axis]%n != 0 {
		return c.Errorf("num_split %d must be positive and divide dimension %d of %v", n, axis, t)
	}
	c.Out = splitAt(c.B, c.In[1], axis, filled(n, t.Shape[axis]/n))
	return nil
}

func lowerSplitV(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	t := c.Type(0)
	d, err := c.hostScalar(2, "split_dim")
	if err != nil {
		return err
	}
	axis, err := c.axis(d, t.Shape.Rank(), "split_dim")
	if err != nil {
		return err
	}
	vals, err := c.hostInts(1, "size_splits")
	if err != nil {
		return err
	}
	n := int(c.Attrs.Int("num_split", int64(len(vals))))
	if n != len(vals) || n < 1 {
		return c.Errorf("size_splits %v must have num_split = %d entries (value %v)", vals, n, t)
	}
	sizes := make([]int, n)
	infer, total := -1, 0
	for i, v := range vals {
		switch {
		case v == -1 && infer < 0:
			infer = i
		case v < 0:
			return c.Errorf("size_splits %v may hold one -1 and no other negative size (value %v)", vals, t)
		default:
			sizes[i] = int(v)
			total += int(v)
		}
	}
	dim := t.Shape[axis]
	if infer >= 0 {
		if total > dim {
			return c.Errorf("size_splits %v exceed dimension %d of %v", vals, axis, t)
		}
		sizes[infer] = dim - total
		total = dim
	}
	if total != dim {
		return c.Errorf("size_splits %v must sum to dimension %d (%d) of %v", vals, axis, dim, t)
	}
	c.Out = splitAt(c.B, c.In[0], axis, sizes)
	return nil
}

func lowerSlice(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	t := c.Type(0)
	r := t.Shape.Rank()
	begin, err := c.hostInts(1, "begin")
	if err != nil {
		return err
	}
	size, err := c.hostInts(2, "size")
	if err != nil {
		return err
	}
	if len(begin) != r || len(size) != r {
		return c.Errorf("begin %v and size %v must have %d entries for input %v", begin, size, r, t)
	}
	start, limit := make([]int, r), make([]int, r)
	for i := range r {
		b, s, n := begin[i], size[i], int64(t.Shape[i])
		if s == -1 {
			s = n - b
		}
		if b < 0 || s < 0 || b+s > n {
			return c.Errorf("begin %v and size %v do not fit input %v (dimension %d)", begin, size, t, i)
		}
		start[i], limit[i] = int(b), int(b+s)
	}
	c.Out = []ir.Value{c.B.Slice(c.In[0], start, limit, filled(r, 1))}
	return nil
}

// paddings reads the [rank, 2] paddings host input (flattened row-major).
func paddings(c *Call, r int) (low, high []int, err error) {
	v, err := c.hostInts(1, "paddings")
	if err != nil {
		return nil, nil, err
	}
	if len(v) != 2*r {
		return nil, nil, c.Errorf("paddings %v must be [%d, 2] for input %v", v, r, c.Type(0))
	}
	low, high = make([]int, r), make([]int, r)
	for i := range r {
		if v[2*i] < 0 || v[2*i+1] < 0 {
			return nil, nil, c.Errorf("paddings %v must not be negative (input %v)", v, c.Type(0))
		}
		low[i], high[i] = int(v[2*i]), int(v[2*i+1])
	}
	return low, high, nil
}

func lowerPad(withValue bool) func(c *Call) error {
	return func(c *Call) error {
		n := 2
		if withValue {
			n = 3
		}
		if err := c.arity(n); err != nil {
			return err
		}
		t := c.Type(0)
		low, high, err := paddings(c, t.Shape.Rank())
		if err != nil {
			return err
		}
		var v ir.Value
		if withValue {
			tv := c.Type(2)
			if tv.DType != t.DType || tv.Shape.Size() != 1 || tv.Shape.Rank() > 1 {
				return c.Errorf("constant_values %v must be a scalar of the input's dtype (input %v)", tv, t)
			}
			v = c.B.Reshape(c.In[2], nil)
		} else {
			v = c.B.Scalar(t.DType, 0)
		}
		c.Out = []ir.Value{c.B.Pad(c.In[0], v, low, high, make([]int, t.Shape.Rank()))}
		return nil
	}
}

// mirrorPaddings reads MirrorPad's and MirrorPadGrad's paddings and mode:
// off is how far the mirror starts from the edge (REFLECT leaves the edge
// out, 1; SYMMETRIC repeats it, 0).
func mirrorPaddings(c *Call) (low, high []int, off int, err error) {
	t := c.Type(0)
	low, high, err = paddings(c, t.Shape.Rank())
	if err != nil {
		return nil, nil, 0, err
	}
	switch m := c.Attrs.String("mode", ""); m {
	case "REFLECT":
		off = 1
	case "SYMMETRIC":
	default:
		return nil, nil, 0, c.Errorf("mode %q is not supported; use REFLECT or SYMMETRIC (input %v)", m, t)
	}
	return low, high, off, nil
}

// lowerMirrorPad reflects the edges (mirror_pad_op.h): REFLECT leaves the
// edge out ([1,2,3] padded by 2 both ways is [3,2,1,2,3,2,1]), SYMMETRIC
// repeats it ([2,1,1,2,3,3,2]).
func lowerMirrorPad(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	t := c.Type(0)
	r := t.Shape.Rank()
	low, high, off, err := mirrorPaddings(c)
	if err != nil {
		return err
	}
	b := c.B
	x := c.In[0]
	for i := range r {
		n := t.Shape[i]
		if low[i] > n-off || high[i] > n-off {
			return c.Errorf("paddings %v/%v are too large for dimension %d of %v in mode %s", low, high, i, t, c.Attrs.String("mode", ""))
		}
		if low[i] == 0 && high[i] == 0 {
			continue
		}
		s := b.Type(x).Shape
		part := func(from, to int) ir.Value {
			start, limit := make([]int, r), s.Clone()
			start[i], limit[i] = from, to
			return b.Reverse(b.Slice(x, start, limit, filled(r, 1)), []int{i})
		}
		var parts []ir.Value
		if low[i] > 0 {
			parts = append(parts, part(off, off+low[i]))
		}
		parts = append(parts, x)
		if high[i] > 0 {
			parts = append(parts, part(n-high[i]-off, n-off))
		}
		x = b.Concat(i, parts...)
	}
	c.Out = []ir.Value{x}
	return nil
}

// lowerTile broadcasts [d0, d1, ...] to [m0, d0, m1, d1, ...] and merges pairs.
func lowerTile(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	t := c.Type(0)
	r := t.Shape.Rank()
	m, err := c.hostShape(1, "multiples")
	if err != nil {
		return err
	}
	if len(m) != r {
		return c.Errorf("multiples %v must have %d entries for input %v", m, r, t)
	}
	wide := make(ir.Shape, 0, 2*r)
	out := make(ir.Shape, r)
	dims := make([]int, r)
	for i := range r {
		wide = append(wide, m[i], t.Shape[i])
		out[i] = m[i] * t.Shape[i]
		dims[i] = 2*i + 1
	}
	c.Out = []ir.Value{c.B.Reshape(c.B.BroadcastInDim(c.In[0], wide, dims), out)}
	return nil
}

func lowerPack(c *Call) error {
	if err := c.atLeast(1); err != nil {
		return err
	}
	t0 := c.Type(0)
	axis, err := c.axis(c.Attrs.Int("axis", 0), t0.Shape.Rank()+1, "axis")
	if err != nil {
		return err
	}
	shape := append(append(t0.Shape[:axis].Clone(), 1), t0.Shape[axis:]...)
	parts := make([]ir.Value, len(c.In))
	for i := range c.In {
		if t := c.Type(i); t.DType != t0.DType || !t.Shape.Equal(t0.Shape) {
			return c.Errorf("input %d %v does not match input 0 %v", i, t, t0)
		}
		parts[i] = c.B.Reshape(c.In[i], shape)
	}
	c.Out = []ir.Value{c.B.Concat(axis, parts...)}
	return nil
}

func lowerUnpack(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	t := c.Type(0)
	r := t.Shape.Rank()
	axis, err := c.axis(c.Attrs.Int("axis", 0), r, "axis")
	if err != nil {
		return err
	}
	num := int(c.Attrs.Int("num", int64(t.Shape[axis])))
	if num != t.Shape[axis] {
		return c.Errorf("num %d must equal dimension %d of %v", num, axis, t)
	}
	if num == 0 {
		return c.Errorf("cannot unpack dimension %d of size 0 of %v: the op would have no outputs", axis, t)
	}
	out := without(t.Shape, axis)
	for _, p := range splitAt(c.B, c.In[0], axis, filled(num, 1)) {
		c.Out = append(c.Out, c.B.Reshape(p, out))
	}
	return nil
}

func lowerFill(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	shape, err := c.hostShape(0, "dims")
	if err != nil {
		return err
	}
	tv := c.Type(1)
	if tv.Shape.Rank() != 0 {
		return c.Errorf("value must be a scalar, got %v", tv)
	}
	c.Out = []ir.Value{c.B.BroadcastInDim(c.In[1], shape, []int{})}
	return nil
}

func lowerFullLike(v float64) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(1); err != nil {
			return err
		}
		c.Out = []ir.Value{c.B.Full(c.Type(0), v)}
		return nil
	}
}

func lowerBroadcastTo(c *Call) error {
	if err := c.arity(2); err != nil {
		return err
	}
	t := c.Type(0)
	shape, err := c.hostShape(1, "shape")
	if err != nil {
		return err
	}
	if s, ok := ir.BroadcastShapes(t.Shape, shape); !ok || !s.Equal(shape) {
		return c.Errorf("cannot broadcast %v to %v", t, shape)
	}
	c.Out = []ir.Value{c.B.BroadcastInDim(c.In[0], shape, nil)}
	return nil
}

// intScalar is an exact integer scalar constant of dtype d.
func intScalar(b *ir.Builder, d ir.DType, v int64) ir.Value {
	if d == ir.I64 {
		return i64Constant(b, nil, []int64{v})
	}
	return b.Scalar(d, float64(v))
}

// lowerRange is start + i*delta for i < ceil((limit-start)/delta)
// (sequence_ops.cc).
func lowerRange(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	var v [3]int64
	for i, name := range []string{"start", "limit", "delta"} {
		x, err := c.hostScalar(i, name)
		if err != nil {
			return err
		}
		v[i] = x
	}
	start, limit, delta := v[0], v[1], v[2]
	d := c.Attrs.Type("Tidx", c.Type(0).DType)
	if d != ir.I32 && d != ir.I64 {
		return c.Errorf("Tidx %v is not supported; use int32 or int64", d)
	}
	switch {
	case delta == 0:
		return c.Errorf("requires delta != 0 (start %d, limit %d)", start, limit)
	case delta > 0 && start > limit:
		return c.Errorf("requires start <= limit when delta > 0: %d/%d", start, limit)
	case delta < 0 && start < limit:
		return c.Errorf("requires start >= limit when delta < 0: %d/%d", start, limit)
	}
	span, step := limit-start, delta
	if span < 0 {
		span, step = -span, -step
	}
	n := (span + step - 1) / step
	b := c.B
	t := ir.TensorType{DType: d, Shape: ir.Shape{int(n)}}
	y := b.Binary(ir.OpMul, b.Iota(t, 0), b.BroadcastInDim(intScalar(b, d, delta), t.Shape, []int{}))
	c.Out = []ir.Value{b.Binary(ir.OpAdd, y, b.BroadcastInDim(intScalar(b, d, start), t.Shape, []int{}))}
	return nil
}

// lowerLinSpace is start + i*step with step = (stop-start)/(num-1), and
// exactly stop last, as sequence_ops.cc computes it.
func lowerLinSpace(c *Call) error {
	if err := c.arity(3); err != nil {
		return err
	}
	ts, te := c.Type(0), c.Type(1)
	num, err := c.hostScalar(2, "num")
	if err != nil {
		return err
	}
	if ts.Shape.Rank() != 0 || te.Shape.Rank() != 0 || ts.DType != te.DType || num <= 0 || num > 1<<40 {
		return c.Errorf("start %v and stop %v must be scalars of one dtype and num %d positive", ts, te, num)
	}
	b := c.B
	n := int(num)
	out := ir.TensorType{DType: ts.DType, Shape: ir.Shape{n}}
	start := b.BroadcastInDim(c.In[0], out.Shape, nil)
	if n == 1 {
		c.Out = []ir.Value{start}
		return nil
	}
	step := b.Binary(ir.OpDiv, b.Binary(ir.OpSub, c.In[1], c.In[0]), b.Scalar(ts.DType, float64(n-1)))
	y := b.Binary(ir.OpAdd, start, b.Binary(ir.OpMul, b.BroadcastInDim(step, out.Shape, nil), b.Iota(out, 0)))
	last := b.Compare(ir.CmpEQ, b.Iota(ir.TensorType{DType: ir.I32, Shape: out.Shape}, 0), b.Full(ir.TensorType{DType: ir.I32, Shape: out.Shape}, float64(n-1)))
	c.Out = []ir.Value{b.Select(last, b.BroadcastInDim(c.In[1], out.Shape, nil), y)}
	return nil
}
