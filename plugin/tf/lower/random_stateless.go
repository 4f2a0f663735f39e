package lower

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/philox"
)

// The V1 stateless random ops, the key-counter ops and the multinomials.
//
// A V1 stateless op takes a seed (two int32 or int64, in host memory, as
// TensorFlow's GPU kernels register it) and draws from the Philox key and
// counter GenerateKey (stateless_random_ops.cc) derives from it: the seed
// halves as the counter under a fixed key, one Philox block, whose first two
// words become the key and last two the counter's high half. The host does
// that; the program draws as the V2 ops do from the same key and counter,
// so the numbers are TensorFlow's CPU's.
//
// The multinomials follow the CPU's MultinomialFunctor (multinomial_op.cc):
// per row, the running sum of exp(logit - max) over the finite logits, and
// per sample a uniform double from two uint32 (the first's low 20 bits
// above the second's 32), scaled by the total and placed by upper_bound.
// The device computes in float32, so a sample within float32 rounding of a
// class boundary may land in the neighbouring class; and it reads the
// uint32s row after row, as the CPU does when it runs the batch in one
// shard (its thread pool splits only batches whose estimated cost exceeds
// Eigen's per-thread minimum, beyond which its own numbers depend on its
// thread count).

func init() {
	seedCons := Constraint{"Tseed", Indices}
	shapeCons := Constraint{"T", Indices}
	v1 := func(name string, types []ir.DType, dist ir.RngDistribution) {
		register(Kernel{Op: name, Constraints: []Constraint{{"dtype", types}, shapeCons, seedCons}, Inputs: []string{"shape", "seed"},
			HostInputs: []string{"shape", "seed"}, Attrs: []AttrSpec{{Name: "dtype", Kind: AttrType}},
			Lower: lowerStatelessV1(dist)})
	}
	v1("StatelessRandomUniform", Floats, ir.RngUniform)
	v1("StatelessRandomNormal", Floats, ir.RngNormal)
	v1("StatelessTruncatedNormal", Floats, ir.RngTruncatedNormal)
	v1("StatelessRandomUniformFullInt", Indices, ir.RngUniform)
	register(Kernel{Op: "StatelessRandomUniformInt", Constraints: []Constraint{{"dtype", Indices}, shapeCons, seedCons},
		Inputs: []string{"shape", "seed", "minval", "maxval"}, HostInputs: []string{"shape", "seed", "minval", "maxval"}, Attrs: []AttrSpec{{Name: "dtype", Kind: AttrType}}, Lower: lowerStatelessIntV1})
	register(Kernel{Op: "StatelessRandomGetKeyCounter", Constraints: []Constraint{seedCons}, Inputs: []string{"seed"},
		HostInputs: []string{"seed"}, Lower: lowerGetKeyCounter(false)})
	register(Kernel{Op: "StatelessRandomGetKeyCounterAlg", Constraints: []Constraint{seedCons}, Inputs: []string{"seed"},
		HostInputs: []string{"seed"}, Lower: lowerGetKeyCounter(true)})
	register(Kernel{Op: "StatelessRandomGetAlg", Inputs: []string{}, Lower: lowerGetAlg})
	multi := []Constraint{{"T", []ir.DType{ir.F32, ir.F16}}, {"output_dtype", Indices}}
	register(Kernel{Op: "StatelessMultinomial", Constraints: append(multi, seedCons), Inputs: []string{"logits", "num_samples", "seed"},
		HostInputs: []string{"num_samples", "seed"}, Attrs: []AttrSpec{{Name: "output_dtype", Kind: AttrType, Optional: true}},
		Lower: lowerMultinomial(true)})
	register(Kernel{Op: "Multinomial", Constraints: multi, Inputs: []string{"logits", "num_samples"},
		HostInputs: []string{"num_samples"},
		Attrs: []AttrSpec{{Name: "output_dtype", Kind: AttrType, Optional: true}, {Name: "seed", Kind: AttrInt, Optional: true},
			{Name: "seed2", Kind: AttrInt, Optional: true}},
		Lower: lowerMultinomial(false)})
}

// generateKey is GenerateKey: the Philox key and counter a V1 stateless op
// draws with for seed (int32 seeds sign-extend to 64 bits, as the C++ casts
// do).
func generateKey(seed0, seed1 int64) (key uint64, counter philox.Counter) {
	mix := philox.Block(philox.Counter{Lo: uint64(seed0), Hi: uint64(seed1)}, 0x02461e29<<32|0x3ec8f720)
	return uint64(mix[0]) | uint64(mix[1])<<32, philox.Counter{Lo: 0, Hi: uint64(mix[2]) | uint64(mix[3])<<32}
}

// seedState reads the seed (host input i) and returns the key and counter
// as the int64 constants OpRng takes.
func seedState(c *Call, i int) (key, counter ir.Value, err error) {
	seed, err := c.hostInts(i, "seed")
	if err != nil {
		return 0, 0, err
	}
	if len(seed) != 2 || c.Type(i).Shape.Rank() != 1 {
		return 0, 0, c.Errorf("seed must have shape [2], not %v", c.Type(i))
	}
	k, ctr := generateKey(seed[0], seed[1])
	b := c.B
	return i64Constant(b, ir.Shape{1}, []int64{int64(k)}), i64Constant(b, ir.Shape{2}, []int64{int64(ctr.Lo), int64(ctr.Hi)}), nil
}

func lowerStatelessV1(dist ir.RngDistribution) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(2); err != nil {
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
		key, counter, err := seedState(c, 1)
		if err != nil {
			return err
		}
		c.Out = []ir.Value{c.B.Rng(key, counter, dist, ir.TensorType{DType: d, Shape: shape})}
		return nil
	}
}

// lowerStatelessIntV1 draws in [minval, maxval), host scalars.
func lowerStatelessIntV1(c *Call) error {
	if err := c.arity(4); err != nil {
		return err
	}
	shape, err := c.hostShape(0, "shape")
	if err != nil {
		return err
	}
	minval, err := c.hostScalar(2, "minval")
	if err != nil {
		return err
	}
	maxval, err := c.hostScalar(3, "maxval")
	if err != nil {
		return err
	}
	d := c.Type(2).DType
	if d != ir.I32 && d != ir.I64 || c.Type(3).DType != d {
		return c.Errorf("minval and maxval must be int32 or int64 of one dtype, got %v and %v", c.Type(2), c.Type(3))
	}
	if minval >= maxval {
		return c.Errorf("Need minval < maxval: %d >= %d", minval, maxval)
	}
	key, counter, err := seedState(c, 1)
	if err != nil {
		return err
	}
	bits := c.B.Rng(key, counter, ir.RngUniform, ir.TensorType{DType: d, Shape: shape})
	c.Out = []ir.Value{bounded(c.B, bits, minval, maxval)}
	return nil
}

// lowerGetKeyCounter gives the key (uint64[1]) and counter (uint64[2])
// GenerateKey derives, and for the Alg form the algorithm, Philox; the
// int64 constants hold the uint64 outputs' bits.
func lowerGetKeyCounter(alg bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(1); err != nil {
			return err
		}
		key, counter, err := seedState(c, 0)
		if err != nil {
			return err
		}
		c.Out = []ir.Value{key, counter}
		if alg {
			c.Out = append(c.Out, intScalar(c.B, ir.I32, rngAlgPhilox))
		}
		return nil
	}
}

// lowerGetAlg is the algorithm TensorFlow picks for this device's kind,
// Philox, as on its CPU and GPU.
func lowerGetAlg(c *Call) error {
	if err := c.arity(0); err != nil {
		return err
	}
	c.Out = []ir.Value{intScalar(c.B, ir.I32, rngAlgPhilox)}
	return nil
}

func lowerMultinomial(stateless bool) func(c *Call) error {
	return func(c *Call) error {
		n := 2
		if stateless {
			n = 3
		}
		if err := c.arity(n); err != nil {
			return err
		}
		t := c.Type(0)
		if t.Shape.Rank() != 2 || !t.DType.IsFloat() {
			return c.Errorf("logits must be a float matrix [batch, classes], got %v", t)
		}
		samples, err := c.hostScalar(1, "num_samples")
		if err != nil {
			return err
		}
		if samples < 0 || samples > 1<<30 {
			return c.Errorf("num_samples should be nonnegative, got %d", samples)
		}
		out := c.Attrs.Type("output_dtype", ir.I64)
		if out != ir.I32 && out != ir.I64 {
			return c.Errorf("output_dtype %v is not supported; use int32 or int64", out)
		}
		rows, classes, s := t.Shape[0], t.Shape[1], int(samples)
		b := c.B
		shape := ir.Shape{rows, s}
		if rows > 0 && s > 0 && classes == 0 {
			return c.Errorf("num_classes should be positive, got 0 (logits %v)", t)
		}
		var key, counter ir.Value
		if stateless {
			if key, counter, err = seedState(c, 2); err != nil {
				return err
			}
		} else {
			key, counter = c.RngState()
		}
		if shape.Size() == 0 {
			c.Out = []ir.Value{b.Full(ir.TensorType{DType: out, Shape: shape}, 0)}
			return nil
		}
		f := ir.TensorType{DType: ir.F32, Shape: t.Shape}
		x := b.Convert(c.In[0], ir.F32)
		finite := b.Compare(ir.CmpLT, b.Unary(ir.OpAbs, x), b.Full(f, math.Inf(1)))
		lowest := b.Full(f, finiteExtreme(t.DType, false))
		m := b.Reduce(b.Select(finite, x, lowest), ir.ReduceMax, []int{1})
		e := b.Select(finite, b.Unary(ir.OpExp, b.Binary(ir.OpSub, x, b.BroadcastInDim(m, t.Shape, []int{0}))), b.Full(f, 0))
		cdf := b.ReduceWindow(e, ir.ReduceSum, ir.WindowAttrs{Dims: []int{1, classes}, Strides: []int{1, 1}, Padding: [][2]int{{0, 0}, {classes - 1, 0}}})
		total := b.Reshape(b.Slice(cdf, []int{0, classes - 1}, []int{rows, classes}, []int{1, 1}), ir.Shape{rows})
		// Two uint32 per sample, row after row.
		bits := b.Reshape(b.Rng(key, counter, ir.RngUniform, ir.TensorType{DType: ir.I32, Shape: ir.Shape{rows * s * 2}}), ir.Shape{rows, s, 2})
		half := ir.Shape{rows, s, 1}
		x0 := b.Reshape(b.Slice(bits, []int{0, 0, 0}, half, []int{1, 1, 1}), shape)
		x1 := b.Reshape(b.Slice(bits, []int{0, 0, 1}, []int{rows, s, 2}, []int{1, 1, 1}), shape)
		st := ir.TensorType{DType: ir.F32, Shape: shape}
		hi := b.Convert(b.Binary(ir.OpAnd, x0, b.Full(ir.TensorType{DType: ir.I32, Shape: shape}, 0xfffff)), ir.F32)
		lo64 := b.Convert(x1, ir.I64)
		lo64 = b.Select(b.Compare(ir.CmpLT, lo64, like(b, lo64, 0)), b.Binary(ir.OpAdd, lo64, like(b, lo64, 1<<32)), lo64)
		u := b.Binary(ir.OpAdd, b.Binary(ir.OpMul, hi, b.Full(st, 0x1p-20)), b.Binary(ir.OpMul, b.Convert(lo64, ir.F32), b.Full(st, 0x1p-52)))
		find := b.Binary(ir.OpMul, u, b.BroadcastInDim(total, shape, []int{0}))
		grid := ir.Shape{rows, s, classes}
		le := b.Compare(ir.CmpLE, b.BroadcastInDim(cdf, grid, []int{0, 2}), b.BroadcastInDim(find, grid, []int{0, 1}))
		one := ir.TensorType{DType: ir.I32, Shape: grid}
		count := b.Reduce(b.Select(le, b.Full(one, 1), b.Full(one, 0)), ir.ReduceSum, []int{2})
		count = b.Binary(ir.OpMin, count, b.Full(ir.TensorType{DType: ir.I32, Shape: shape}, float64(classes-1)))
		c.Out = []ir.Value{b.Convert(count, out)}
		return nil
	}
}
