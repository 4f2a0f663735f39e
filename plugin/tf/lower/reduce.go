package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
	"math"
)

// Reductions over host-given axes (reduction_ops_*.cc), ArgMax/ArgMin
// (argmax_op.cc), EuclideanNorm and L2Loss. Sums of float16 and bfloat16
// accumulate in float32, as TensorFlow's GPU reductions do.

// reduction is how one reduction op folds.
type reduction int

const (
	redSum reduction = iota
	redMean
	redProd
	redMax
	redMin
	redAll
	redAny
	redNorm // EuclideanNorm: sqrt(sum(x*x))
)

func init() {
	reduceAttrs := []AttrSpec{{Name: "keep_dims", Kind: AttrBool, Optional: true}}
	red := func(name string, types []ir.DType, r reduction) {
		var cons []Constraint
		if types != nil {
			cons = T(types)
		}
		register(Kernel{Op: name, Constraints: cons, Inputs: []string{"input", "reduction_indices"},
			HostInputs: []string{"reduction_indices"},
			Attrs:      reduceAttrs, Lower: lowerReduce(r)})
	}
	red("Sum", FloatsInts, redSum)
	red("Mean", FloatsInts, redMean)
	red("Prod", FloatsInts, redProd)
	red("Max", FloatsInts, redMax)
	red("Min", FloatsInts, redMin)
	red("EuclideanNorm", Floats, redNorm)
	// All and Any take bool and have no type attribute.
	red("All", nil, redAll)
	red("Any", nil, redAny)

	argAttrs := []AttrSpec{{Name: "output_type", Kind: AttrType, Optional: true}}
	for _, a := range []struct {
		name string
		kind ir.ReduceKind
	}{{"ArgMax", ir.ReduceMax}, {"ArgMin", ir.ReduceMin}} {
		register(Kernel{Op: a.name, Constraints: []Constraint{{"T", FloatsInts}, {"output_type", Indices}},
			Inputs: []string{"input", "dimension"}, HostInputs: []string{"dimension"},
			Attrs: argAttrs, Lower: lowerArgReduce(a.kind)})
	}
	register(Kernel{Op: "L2Loss", Constraints: T(Floats), Inputs: []string{"t"}, Lower: lowerL2Loss})
}

// Axes normalises TensorFlow axes (negative counts from the end) for rank r;
// repeats collapse.
func Axes(c *Call, axes []int64, r int) ([]int, error) {
	seen := make([]bool, r)
	var out []int
	for _, a := range axes {
		n := int(a)
		if n < 0 {
			n += r
		}
		if n < 0 || n >= r {
			return nil, c.Errorf("axis %d is out of range for rank %d (input %v)", a, r, c.Type(0))
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

func lowerReduce(r reduction) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(2); err != nil {
			return err
		}
		x := c.In[0]
		t := c.Type(0)
		if (r == redAll || r == redAny) != (t.DType == ir.Bool) {
			return c.Errorf("input %v has the wrong dtype for this reduction", t)
		}
		vals, err := c.hostInts(1, "reduction_indices")
		if err != nil {
			return err
		}
		axes, err := Axes(c, vals, t.Shape.Rank())
		if err != nil {
			return err
		}
		b := c.B
		var y ir.Value
		switch r {
		case redSum, redMean, redProd, redNorm:
			acc := b.Convert(x, accType(t.DType))
			kind := ir.ReduceSum
			switch r {
			case redProd:
				kind = ir.ReduceProd
			case redNorm:
				acc = b.Binary(ir.OpMul, acc, acc)
			}
			y = b.Reduce(acc, kind, axes)
			if r == redMean {
				n := sizeOf(t.Shape, axes)
				// An empty float mean is 0/0 = NaN, as in TensorFlow; an empty
				// integer mean is left 0 rather than dividing by zero.
				if n > 0 || t.DType.IsFloat() {
					y = b.Binary(ir.OpDiv, y, b.Full(b.Type(y), float64(n)))
				}
			}
			if r == redNorm {
				y = b.Unary(ir.OpSqrt, y)
			}
			y = b.Convert(y, t.DType)
		case redMax:
			y = b.Reduce(x, ir.ReduceMax, axes)
		case redMin:
			y = b.Reduce(x, ir.ReduceMin, axes)
		case redAll:
			y = b.Reduce(x, ir.ReduceAnd, axes)
		case redAny:
			y = b.Reduce(x, ir.ReduceOr, axes)
		}
		if c.Attrs.Bool("keep_dims") {
			y = keepDims(b, y, t.Shape, axes)
		}
		c.Out = []ir.Value{y}
		return nil
	}
}

// lowerArgReduce is the index of the first max (min) along the host-given
// axis, as output_type (int64 by default).
func lowerArgReduce(kind ir.ReduceKind) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(2); err != nil {
			return err
		}
		t := c.Type(0)
		d, err := c.hostScalar(1, "dimension")
		if err != nil {
			return err
		}
		axis, err := c.axis(d, t.Shape.Rank(), "dimension")
		if err != nil {
			return err
		}
		if t.Shape[axis] == 0 {
			return c.Errorf("reduction axis %d is empty in shape %v", axis, t.Shape)
		}
		out := c.Attrs.Type("output_type", ir.I64)
		if out != ir.I32 && out != ir.I64 {
			return c.Errorf("output_type %v is not supported; use int32 or int64 (input %v)", out, t)
		}
		x := c.In[0]
		if t.DType.IsFloat() {
			x = cpuArgOperand(c.B, x, kind)
		}
		c.Out = []ir.Value{c.B.ArgReduce(x, kind, axis, out)}
		return nil
	}
}

// finiteBounds are the lowest and highest finite values of the float types
// ArgMax and ArgMin take.
var finiteBounds = map[ir.DType][2]float64{
	ir.F32:  {-math.MaxFloat32, math.MaxFloat32},
	ir.F16:  {-65504, 65504},
	ir.BF16: {-3.3895313892515355e38, 3.3895313892515355e38},
	ir.F64:  {-math.MaxFloat64, math.MaxFloat64},
}

// cpuArgOperand gives ArgMax (ArgMin) TensorFlow's CPU answer, which is not
// the IR's: the CPU keeps the first element strictly greater (less) than
// the best so far, starting from the lowest (highest) finite value at index
// 0, so a NaN never wins, nor does anything at or past that bound (measured
// on 2.21: argmax([nan, -inf]) is 0, argmax([nan, -3.4e38]) is 1, argmin
// ([nan, -inf]) is 1). Every element that could not win becomes the bound,
// and the IR's first-extreme rule then picks what the CPU does: index 0
// when nothing beats the bound.
func cpuArgOperand(b *ir.Builder, x ir.Value, kind ir.ReduceKind) ir.Value {
	bounds, ok := finiteBounds[b.Type(x).DType]
	if !ok {
		return x
	}
	bound, beats := like(b, x, bounds[0]), ir.CmpGT
	if kind == ir.ReduceMin {
		bound, beats = like(b, x, bounds[1]), ir.CmpLT
	}
	return b.Select(b.Compare(beats, x, bound), x, bound)
}

// lowerL2Loss is sum(t*t)/2, a scalar.
func lowerL2Loss(c *Call) error {
	if err := c.arity(1); err != nil {
		return err
	}
	t := c.Type(0)
	b := c.B
	x := b.Convert(c.In[0], accType(t.DType))
	s := b.Reduce(b.Binary(ir.OpMul, x, x), ir.ReduceSum, seq(t.Shape.Rank()))
	s = b.Binary(ir.OpMul, s, b.Scalar(b.Type(s).DType, 0.5))
	c.Out = []ir.Value{b.Convert(s, t.DType)}
	return nil
}
