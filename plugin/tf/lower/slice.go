package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// StridedSlice and StridedSliceGrad. The slice spec (begin, end, strides
// and the five masks) is resolved exactly as ValidateStridedSliceOp in
// tensorflow/core/util/strided_slice_op.cc does: an ellipsis (explicit, or
// implied at the end) expands to the dims no other entry names, new axes
// insert size-1 dims, shrink axes take one index and drop the dim, and
// begin/end are canonicalised (negative counts from the end, then clamped;
// masked ends take the whole range in the stride's direction). A negative
// stride is a reverse of that dim followed by a positive-stride slice.

func init() {
	masks := []AttrSpec{{Name: "begin_mask", Kind: AttrInt, Optional: true}, {Name: "end_mask", Kind: AttrInt, Optional: true},
		{Name: "ellipsis_mask", Kind: AttrInt, Optional: true}, {Name: "new_axis_mask", Kind: AttrInt, Optional: true},
		{Name: "shrink_axis_mask", Kind: AttrInt, Optional: true}}
	register(Kernel{Op: "StridedSlice", Constraints: T(All), Inputs: []string{"input", "begin", "end", "strides"},
		HostInputs: []string{"begin", "end", "strides"}, Attrs: masks,
		Lower: lowerStridedSlice})
	register(Kernel{Op: "StridedSliceGrad", Constraints: T(All), Inputs: []string{"shape", "begin", "end", "strides", "dy"},
		HostInputs: []string{"shape", "begin", "end", "strides"}, Attrs: masks,
		Lower: lowerStridedSliceGrad})
}

// sliceDim is what a strided slice takes of one input dim: size elements at
// begin, begin+stride, ... (stride may be negative).
type sliceDim struct {
	begin, stride, size int
}

// stridedSpec is a resolved strided slice: one sliceDim per input dim, and
// the output shape (after new and shrunk axes).
type stridedSpec struct {
	dims  []sliceDim
	final ir.Shape
}

func stridedSliceSpec(c *Call, in ir.Shape, begin, end, strides []int64) (*stridedSpec, error) {
	n := len(begin)
	if len(end) != n || len(strides) != n {
		return nil, c.Errorf("begin %v, end %v and strides %v must have one length (inputs %s)", begin, end, strides, c.Inputs())
	}
	if n > 62 {
		return nil, c.Errorf("too many slice entries: %d", n)
	}
	bm, em := c.Attrs.Int("begin_mask", 0), c.Attrs.Int("end_mask", 0)
	ellm, newm, shrm := c.Attrs.Int("ellipsis_mask", 0), c.Attrs.Int("new_axis_mask", 0), c.Attrs.Int("shrink_axis_mask", 0)
	if ellm&(ellm-1) != 0 {
		return nil, c.Errorf("multiple ellipses in slice spec not allowed (ellipsis_mask %d)", ellm)
	}
	bit := func(m int64, i int) bool { return m&(1<<i) != 0 }
	// Step 1: count new axes after the ellipsis; add an implied ellipsis.
	sparse := n
	seen, addAfter := false, 0
	for i := range sparse {
		if seen && bit(newm, i) {
			addAfter++
		}
		if bit(ellm, i) {
			seen = true
		}
	}
	if !seen {
		ellm |= 1 << sparse
		sparse++
	}
	// Step 2: the dense spec, one entry per input dim.
	const newAxis, shrinkAxis = -1, -2
	dims := in.Rank()
	type dense struct {
		begin, end, stride         int64
		beginMask, endMask, shrink bool
	}
	d := make([]dense, dims)
	var gather []int // per output dim: an input dim, newAxis or shrinkAxis
	full := 0
	for i := range sparse {
		switch {
		case bit(ellm, i):
			next := min(dims-(sparse-i)+1+addAfter, dims)
			for ; full < next; full++ {
				d[full] = dense{stride: 1, beginMask: true, endMask: true}
				gather = append(gather, full)
			}
		case bit(newm, i):
			gather = append(gather, newAxis)
		default:
			if full >= dims {
				return nil, c.Errorf("index out of range using input dim %d; input %v has only %d dims (begin %v)", full, c.Type(0), dims, begin)
			}
			d[full] = dense{begin[i], end[i], strides[i], bit(bm, i), bit(em, i), bit(shrm, i)}
			if bit(shrm, i) {
				gather = append(gather, shrinkAxis)
			} else {
				gather = append(gather, full)
			}
			full++
		}
	}
	// Step 3: canonical begin, end and the size of each dim.
	spec := &stridedSpec{dims: make([]sliceDim, dims)}
	for i := range dims {
		e := d[i]
		dim := int64(in[i])
		if e.stride == 0 {
			return nil, c.Errorf("strides[%d] must be non-zero (strides %v)", i, strides)
		}
		var b0, e0 int64
		if e.shrink {
			if e.stride <= 0 {
				return nil, c.Errorf("only stride 1 allowed on non-range indexing (strides %v)", strides)
			}
			b0 = e.begin
			if b0 < 0 {
				b0 += dim
			}
			if b0 < 0 || b0 >= dim {
				return nil, c.Errorf("slice index %d of dimension %d out of bounds for input %v", e.begin, i, c.Type(0))
			}
			e0 = b0 + 1
		} else {
			lo, hi := int64(0), dim
			if e.stride < 0 {
				lo, hi = -1, dim-1
			}
			canon := func(x int64, masked, isEnd bool) int64 {
				if masked {
					if (e.stride > 0) != isEnd {
						return lo
					}
					return hi
				}
				if x < 0 {
					x += dim
				}
				return min(max(x, lo), hi)
			}
			b0, e0 = canon(e.begin, e.beginMask, false), canon(e.end, e.endMask, true)
		}
		interval := e0 - b0
		size := int64(0)
		if interval != 0 && (interval < 0) == (e.stride < 0) {
			size = interval / e.stride
			if interval%e.stride != 0 {
				size++
			}
		}
		spec.dims[i] = sliceDim{int(b0), int(e.stride), int(size)}
	}
	for _, g := range gather {
		switch g {
		case newAxis:
			spec.final = append(spec.final, 1)
		case shrinkAxis:
		default:
			spec.final = append(spec.final, spec.dims[g].size)
		}
	}
	return spec, nil
}

// processing is the shape the slice has before new and shrunk axes.
func (s *stridedSpec) processing() ir.Shape {
	out := make(ir.Shape, len(s.dims))
	for i, d := range s.dims {
		out[i] = d.size
	}
	return out
}

// reversed lists the dims with a negative stride.
func (s *stridedSpec) reversed() []int {
	var r []int
	for i, d := range s.dims {
		if d.stride < 0 {
			r = append(r, i)
		}
	}
	return r
}

// ascending gives, per dim of the input reversed along reversed(), the first
// index and the positive stride of the slice.
func (s *stridedSpec) ascending(in ir.Shape) (start, step []int) {
	start, step = make([]int, len(s.dims)), make([]int, len(s.dims))
	for i, d := range s.dims {
		start[i], step[i] = d.begin, d.stride
		if d.stride < 0 {
			start[i], step[i] = in[i]-1-d.begin, -d.stride
		}
		if d.size == 0 {
			start[i] = 0
		}
	}
	return start, step
}

func readStridedHost(c *Call, first int) (begin, end, strides []int64, err error) {
	if begin, err = c.hostInts(first, "begin"); err != nil {
		return
	}
	if end, err = c.hostInts(first+1, "end"); err != nil {
		return
	}
	strides, err = c.hostInts(first+2, "strides")
	return
}

func lowerStridedSlice(c *Call) error {
	if err := c.arity(4); err != nil {
		return err
	}
	t := c.Type(0)
	begin, end, strides, err := readStridedHost(c, 1)
	if err != nil {
		return err
	}
	spec, err := stridedSliceSpec(c, t.Shape, begin, end, strides)
	if err != nil {
		return err
	}
	b := c.B
	x := b.Reverse(c.In[0], spec.reversed())
	start, step := spec.ascending(t.Shape)
	limit := make([]int, len(start))
	for i, d := range spec.dims {
		limit[i] = start[i]
		if d.size > 0 {
			limit[i] = start[i] + (d.size-1)*step[i] + 1
		}
	}
	y := b.Slice(x, start, limit, step)
	c.Out = []ir.Value{b.Reshape(y, spec.final)}
	return nil
}

// lowerStridedSliceGrad scatters dy back into zeros of the input's shape:
// the slice's elements sit at start, start+step, ..., which interior padding
// by step-1 and edge padding place exactly.
func lowerStridedSliceGrad(c *Call) error {
	if err := c.arity(5); err != nil {
		return err
	}
	shape, err := c.hostShape(0, "shape")
	if err != nil {
		return err
	}
	begin, end, strides, err := readStridedHost(c, 1)
	if err != nil {
		return err
	}
	spec, err := stridedSliceSpec(c, shape, begin, end, strides)
	if err != nil {
		return err
	}
	tdy := c.Type(4)
	if !tdy.Shape.Equal(spec.final) {
		return c.Errorf("dy %v must have the slice's shape %v (shape %v, begin %v, end %v, strides %v)", tdy, spec.final, shape, begin, end, strides)
	}
	b := c.B
	proc := spec.processing()
	if proc.Size() == 0 {
		c.Out = []ir.Value{b.Full(ir.TensorType{DType: tdy.DType, Shape: shape}, 0)}
		return nil
	}
	dy := b.Reshape(c.In[4], proc)
	start, step := spec.ascending(shape)
	r := len(shape)
	low, high, interior := make([]int, r), make([]int, r), make([]int, r)
	for i := range r {
		low[i] = start[i]
		interior[i] = step[i] - 1
		high[i] = shape[i] - (start[i] + (proc[i]-1)*step[i] + 1)
	}
	g := b.Pad(dy, b.Scalar(tdy.DType, 0), low, high, interior)
	c.Out = []ir.Value{b.Reverse(g, spec.reversed())}
	return nil
}
