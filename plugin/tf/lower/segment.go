package lower

import (
	"encoding/binary"

	"github.com/metalplug/metalplug/backend/ir"
)

// Segment reductions (segment_reduction_ops_impl_*.cc): each row of data
// is combined into the output row its segment id names, by a scatter into
// the reduction's identity. The sorted ops (SegmentSum, ...) have as many
// output rows as the last id plus one, read from the ids (Kernel.ReadInputs;
// TensorFlow's GPU reads it back too) and give 0 for an empty segment; the
// unsorted ones take num_segments from the host, drop negative ids, and
// leave an empty segment at the identity: 0, 1, the dtype's lowest or
// highest finite value. Sums, means and products of the 16-bit floats
// accumulate in float32.

func init() {
	cons := func(t []ir.DType) []Constraint { return []Constraint{{"T", t}, {"Tindices", Indices}} }
	sorted := func(name string, kind ir.ScatterKind, mean bool) {
		register(Kernel{Op: name, Constraints: cons(Floats), Inputs: []string{"data", "segment_ids"}, ReadInputs: []int{1},
			Lower: lowerSegment(kind, true, mean)})
	}
	sorted("SegmentSum", ir.ScatterAdd, false)
	sorted("SegmentMean", ir.ScatterAdd, true)
	sorted("SegmentProd", ir.ScatterMul, false)
	sorted("SegmentMin", ir.ScatterMin, false)
	sorted("SegmentMax", ir.ScatterMax, false)
	unsorted := func(name string, kind ir.ScatterKind) {
		register(Kernel{Op: name, Constraints: cons([]ir.DType{ir.F32, ir.F16, ir.BF16, ir.I32}),
			Inputs: []string{"data", "segment_ids", "num_segments"}, HostInputs: []string{"num_segments"},
			Lower: lowerSegment(kind, false, false)})
	}
	unsorted("UnsortedSegmentSum", ir.ScatterAdd)
	unsorted("UnsortedSegmentProd", ir.ScatterMul)
	unsorted("UnsortedSegmentMin", ir.ScatterMin)
	unsorted("UnsortedSegmentMax", ir.ScatterMax)
}

// finiteExtreme is the dtype's lowest (or highest) finite value, as
// Eigen's NumTraits<T>::lowest() and highest().
func finiteExtreme(d ir.DType, highest bool) float64 {
	v := 0.0
	switch d {
	case ir.F32:
		v = 3.4028234663852886e38
	case ir.F16:
		v = 65504
	case ir.BF16:
		v = 3.3895313892515355e38
	default:
		lo, hi, _ := d.IntRange()
		if highest {
			return float64(hi)
		}
		return float64(lo)
	}
	if highest {
		return v
	}
	return -v
}

// lastID is the last of the little-endian ids of dtype d (int32 or int64)
// in raw, or -1 if there are none.
func lastID(raw []byte, d ir.DType) int64 {
	n := d.Size()
	if len(raw) < n {
		return -1
	}
	tail := raw[len(raw)-n:]
	if d == ir.I32 {
		return int64(int32(binary.LittleEndian.Uint32(tail)))
	}
	return int64(binary.LittleEndian.Uint64(tail))
}

func lowerSegment(kind ir.ScatterKind, sorted, mean bool) func(c *Call) error {
	return func(c *Call) error {
		n := 3
		if sorted {
			n = 2
		}
		if err := c.arity(n); err != nil {
			return err
		}
		td, ti := c.Type(0), c.Type(1)
		if ti.DType != ir.I32 && ti.DType != ir.I64 {
			return c.Errorf("segment_ids must be int32 or int64, got %v (data %v)", ti, td)
		}
		k := ti.Shape.Rank()
		if sorted && k != 1 || k > td.Shape.Rank() || !td.Shape[:k].Equal(ti.Shape) {
			return c.Errorf("segment_ids %v must be a prefix of data %v's shape (a vector for the sorted ops)", ti, td)
		}
		var rows int64
		if sorted {
			raw, ok := c.Raw[1]
			if !ok || len(raw) != ti.Bytes() {
				return c.Errorf("needs the contents of segment_ids %v (%d bytes), got %d bytes", ti, ti.Bytes(), len(raw))
			}
			rows = lastID(raw, ti.DType) + 1
			if rows < 0 {
				return c.Errorf("segment ids must be non-negative: the last is %d (data %v)", rows-1, td)
			}
		} else {
			var err error
			if rows, err = c.hostScalar(2, "num_segments"); err != nil {
				return err
			}
			if rows < 0 || rows > 1<<40 {
				return c.Errorf("num_segments %d must be non-negative (data %v, segment_ids %v)", rows, td, ti)
			}
		}
		b := c.B
		m := ti.Shape.Size()
		rest := td.Shape[k:]
		acc := td.DType
		if kind == ir.ScatterAdd || kind == ir.ScatterMul {
			acc = accType(acc)
		}
		init := 0.0
		switch kind {
		case ir.ScatterMul:
			init = 1
		case ir.ScatterMin:
			init = finiteExtreme(acc, true)
		case ir.ScatterMax:
			init = finiteExtreme(acc, false)
		}
		outShape := append(ir.Shape{int(rows)}, rest...)
		out := b.Full(ir.TensorType{DType: acc, Shape: outShape}, init)
		ids := b.Reshape(c.In[1], ir.Shape{m, 1})
		data := b.Reshape(b.Convert(c.In[0], acc), append(ir.Shape{m}, rest...))
		out, err := scatterInto(c, out, ids, data, kind)
		if err != nil {
			return err
		}
		if sorted && (mean || kind == ir.ScatterMin || kind == ir.ScatterMax) {
			// How many rows each segment got: means divide by it, and an
			// empty segment gives 0.
			count := zeros(b, ir.TensorType{DType: acc, Shape: ir.Shape{int(rows)}})
			if count, err = scatterInto(c, count, ids, b.Full(ir.TensorType{DType: acc, Shape: ir.Shape{m}}, 1), ir.ScatterAdd); err != nil {
				return err
			}
			cnt := b.BroadcastInDim(count, outShape, []int{0})
			if mean {
				out = b.Binary(ir.OpDiv, out, b.Binary(ir.OpMax, cnt, like(b, cnt, 1)))
			} else {
				out = b.Select(b.Compare(ir.CmpGT, cnt, like(b, cnt, 0)), out, like(b, out, 0))
			}
		}
		c.Out = []ir.Value{b.Convert(out, td.DType)}
		return nil
	}
}
