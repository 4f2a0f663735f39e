package lower

import (
	"encoding/binary"
	"math"
	"sort"

	"github.com/metalplug/metalplug/backend/ir"
)

// Non-max suppression (non_max_suppression_op.cc). How many boxes survive
// decides the output's size, so the boxes, the scores and the thresholds
// are read inputs (Kernel.ReadInputs): the frontend waits for the stream
// and hands their bytes to the lowering, which runs TensorFlow's greedy
// selection on them and returns the chosen indices as a constant, as Where
// returns its coordinates. The greedy loop is sequential in the boxes
// chosen; the IR's while loop, which would run it on the device, runs on
// the CPU on the Metal lowering anyway (NotLowered), and the output could
// not be allocated before it ran.

func init() {
	f32 := []ir.DType{ir.F32}
	register(Kernel{Op: "NonMaxSuppressionV2", Constraints: T(f32), Inputs: []string{"boxes", "scores", "max_output_size", "iou_threshold"},
		HostInputs: []string{"max_output_size"}, ReadInputs: []int{0, 1, 3},
		Lower: lowerNMS(2)})
	thr := []Constraint{{"T", f32}, {"T_threshold", f32}}
	in := []string{"boxes", "scores", "max_output_size", "iou_threshold", "score_threshold"}
	register(Kernel{Op: "NonMaxSuppressionV3", Constraints: thr, Inputs: in,
		HostInputs: []string{"max_output_size"}, ReadInputs: []int{0, 1, 3, 4},
		Lower: lowerNMS(3)})
	register(Kernel{Op: "NonMaxSuppressionV4", Constraints: thr, Inputs: in,
		HostInputs: []string{"max_output_size"}, ReadInputs: []int{0, 1, 3, 4},
		Attrs: []AttrSpec{{Name: "pad_to_max_output_size", Kind: AttrBool, Optional: true}}, Lower: lowerNMS(4)})
}

// rawF32 reads read input i as float32s.
func rawF32(c *Call, i int, name string) ([]float32, error) {
	t := c.Type(i)
	raw, ok := c.Raw[i]
	if !ok || t.DType != ir.F32 || len(raw) != t.Bytes() {
		return nil, c.Errorf("needs the contents of %s, float32 %v (%d bytes), got %d bytes", name, t, t.Bytes(), len(raw))
	}
	v := make([]float32, t.Shape.Size())
	for j := range v {
		v[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
	}
	return v, nil
}

func rawScalar(c *Call, i int, name string) (float32, error) {
	if t := c.Type(i); t.Shape.Size() != 1 || t.Shape.Rank() > 1 {
		return 0, c.Errorf("%s must be a scalar, got %v", name, t)
	}
	v, err := rawF32(c, i, name)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// iou is the IOU of boxes i and j (corners in either order) as the CPU
// computes it: 0 when either has no area.
func iou(boxes []float32, i, j int) float32 {
	b := func(k, c int) float32 { return boxes[4*k+c] }
	ymin := func(k int) float32 { return min(b(k, 0), b(k, 2)) }
	xmin := func(k int) float32 { return min(b(k, 1), b(k, 3)) }
	ymax := func(k int) float32 { return max(b(k, 0), b(k, 2)) }
	xmax := func(k int) float32 { return max(b(k, 1), b(k, 3)) }
	ai := (ymax(i) - ymin(i)) * (xmax(i) - xmin(i))
	aj := (ymax(j) - ymin(j)) * (xmax(j) - xmin(j))
	if ai <= 0 || aj <= 0 {
		return 0
	}
	ih := max(min(ymax(i), ymax(j))-max(ymin(i), ymin(j)), 0)
	iw := max(min(xmax(i), xmax(j))-max(xmin(i), xmin(j)), 0)
	inter := ih * iw
	return inter / (ai + aj - inter)
}

// nmsSelect is DoNonMaxSuppressionOp without soft suppression: candidates
// scoring above the threshold, best first (ties by index), each kept when
// its IOU with every kept box is at most iouThreshold.
func nmsSelect(boxes, scores []float32, limit int, iouThreshold, scoreThreshold float32) []int32 {
	var cand []int
	for i, s := range scores {
		if s > scoreThreshold {
			cand = append(cand, i)
		}
	}
	sort.SliceStable(cand, func(a, b int) bool { return scores[cand[a]] > scores[cand[b]] })
	var kept []int32
	for _, i := range cand {
		if len(kept) >= limit {
			break
		}
		ok := true
		for j := len(kept) - 1; j >= 0; j-- {
			if iou(boxes, i, int(kept[j])) > iouThreshold {
				ok = false
				break
			}
		}
		if ok {
			kept = append(kept, int32(i))
		}
	}
	return kept
}

func lowerNMS(version int) func(c *Call) error {
	return func(c *Call) error {
		n := 5
		if version == 2 {
			n = 4
		}
		if err := c.arity(n); err != nil {
			return err
		}
		tb, ts := c.Type(0), c.Type(1)
		if tb.Shape.Rank() != 2 || tb.Shape[1] != 4 || !ts.Shape.Equal(ir.Shape{tb.Shape[0]}) {
			return c.Errorf("boxes %v must be [num_boxes, 4] and scores %v [num_boxes]", tb, ts)
		}
		limit, err := c.hostScalar(2, "max_output_size")
		if err != nil {
			return err
		}
		if limit < 0 {
			return c.Errorf("max_output_size must be non-negative, got %d", limit)
		}
		boxes, err := rawF32(c, 0, "boxes")
		if err != nil {
			return err
		}
		scores, err := rawF32(c, 1, "scores")
		if err != nil {
			return err
		}
		iouT, err := rawScalar(c, 3, "iou_threshold")
		if err != nil {
			return err
		}
		if !(iouT >= 0 && iouT <= 1) {
			return c.Errorf("iou_threshold must be in [0, 1], got %v", iouT)
		}
		scoreT := float32(-math.MaxFloat32)
		if version >= 3 {
			if scoreT, err = rawScalar(c, 4, "score_threshold"); err != nil {
				return err
			}
		}
		kept := nmsSelect(boxes, scores, int(min(limit, int64(len(scores)))), iouT, scoreT)
		valid := len(kept)
		if version == 4 && c.Attrs.Bool("pad_to_max_output_size") {
			kept = append(kept, make([]int32, int(limit)-len(kept))...)
		}
		b := c.B
		buf := make([]byte, 4*len(kept))
		for i, v := range kept {
			binary.LittleEndian.PutUint32(buf[4*i:], uint32(v))
		}
		c.Out = []ir.Value{b.Constant(ir.TensorType{DType: ir.I32, Shape: ir.Shape{len(kept)}}, buf)}
		if version == 4 {
			c.Out = append(c.Out, b.Scalar(ir.I32, float64(valid)))
		}
		return nil
	}
}
