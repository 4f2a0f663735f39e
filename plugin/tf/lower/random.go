package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// Random ops. OpRng draws Philox4x32-10 numbers as TensorFlow's kernels do
// for the same key and counter (random_op.cc, stateless_random_ops_v2.cc).
// The stateful ops (RandomUniform, RandomStandardNormal, TruncatedNormal,
// RandomUniformInt) take their key and counter from Call.RngState, which the
// frontend fills from the seed attributes; the stateless V2 ops take them as
// device inputs (uint64 in TensorFlow, int64 bits here) and an algorithm,
// which must be Philox (1) or auto-select (3, which TensorFlow maps to
// Philox).
//
// Bounded integers are lo + (bits mod (hi - lo)), with bits the uniform
// 32-bit (int32) or 64-bit (int64) Philox output read as unsigned, as
// random::UniformDistribution<..., int32/int64> computes them.

// TensorFlow's RNG algorithm numbers (tensorflow/core/framework/rng_alg.h).
const (
	rngAlgPhilox     = 1
	rngAlgAutoSelect = 3
)

func init() {
	seeds := []AttrSpec{{Name: "seed", Kind: AttrInt, Optional: true}, {Name: "seed2", Kind: AttrInt, Optional: true}}
	stateful := func(name string, dist ir.RngDistribution) {
		register(Kernel{Op: name, Constraints: []Constraint{{"dtype", Floats}}, Inputs: []string{"shape"},
			HostInputs: []string{"shape"}, Attrs: append([]AttrSpec{{Name: "dtype", Kind: AttrType}}, seeds...),
			Lower: lowerRandom(dist, false)})
	}
	stateful("RandomUniform", ir.RngUniform)
	stateful("RandomStandardNormal", ir.RngNormal)
	stateful("TruncatedNormal", ir.RngTruncatedNormal)
	register(Kernel{Op: "RandomUniformInt", Constraints: []Constraint{{"Tout", Indices}}, Inputs: []string{"shape", "minval", "maxval"},
		HostInputs: []string{"shape", "minval", "maxval"}, Attrs: seeds,
		Lower: lowerRandomInt(false)})

	stateless := []string{"shape", "key", "counter", "alg"}
	sl := func(name string, types []ir.DType, dist ir.RngDistribution) {
		register(Kernel{Op: name, Constraints: []Constraint{{"dtype", types}}, Inputs: stateless,
			HostInputs: []string{"shape", "alg"}, Attrs: []AttrSpec{{Name: "dtype", Kind: AttrType}},
			Lower: lowerRandom(dist, true)})
	}
	sl("StatelessRandomUniformV2", Floats, ir.RngUniform)
	sl("StatelessRandomNormalV2", Floats, ir.RngNormal)
	sl("StatelessTruncatedNormalV2", Floats, ir.RngTruncatedNormal)
	sl("StatelessRandomUniformFullIntV2", Indices, ir.RngUniform)
	register(Kernel{Op: "StatelessRandomUniformIntV2", Constraints: []Constraint{{"dtype", Indices}},
		Inputs:     append(stateless, "minval", "maxval"),
		HostInputs: []string{"shape", "alg", "minval", "maxval"},
		Attrs:      []AttrSpec{{Name: "dtype", Kind: AttrType}}, Lower: lowerRandomInt(true)})
}

// rngState returns the key and counter: the stateless ops' inputs 1 and 2
// (after checking alg, input 3), or the frontend-filled state.
func rngState(c *Call, stateless bool) (key, counter ir.Value, err error) {
	if !stateless {
		key, counter = c.RngState()
		return key, counter, nil
	}
	alg, err := c.hostScalar(3, "alg")
	if err != nil {
		return 0, 0, err
	}
	if alg != rngAlgPhilox && alg != rngAlgAutoSelect {
		return 0, 0, c.Errorf("unsupported algorithm id %d: only Philox (1) and auto-select (3) are", alg)
	}
	tk, tc := c.Type(1), c.Type(2)
	if tk.DType != ir.I64 || !tk.Shape.Equal(ir.Shape{1}) || tc.DType != ir.I64 || tc.Shape.Rank() != 1 || tc.Shape[0] < 2 {
		return 0, 0, c.Errorf("Philox needs a key of shape [1] and a counter of shape [2] (64-bit), got key %v and counter %v", tk, tc)
	}
	counter = c.In[2]
	if tc.Shape[0] > 2 {
		counter = c.B.Slice(counter, []int{0}, []int{2}, []int{1})
	}
	return c.In[1], counter, nil
}

func lowerRandom(dist ir.RngDistribution, stateless bool) func(c *Call) error {
	return func(c *Call) error {
		n := 1
		if stateless {
			n = 4
		}
		if err := c.arity(n); err != nil {
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
		key, counter, err := rngState(c, stateless)
		if err != nil {
			return err
		}
		c.Out = []ir.Value{c.B.Rng(key, counter, dist, ir.TensorType{DType: d, Shape: shape})}
		return nil
	}
}

// lowerRandomInt draws in [minval, maxval), host scalars (HostMemory in
// TensorFlow's registrations of both ops).
func lowerRandomInt(stateless bool) func(c *Call) error {
	return func(c *Call) error {
		n, lo, hi := 3, 1, 2
		if stateless {
			n, lo, hi = 6, 4, 5
		}
		if err := c.arity(n); err != nil {
			return err
		}
		shape, err := c.hostShape(0, "shape")
		if err != nil {
			return err
		}
		minval, err := c.hostScalar(lo, "minval")
		if err != nil {
			return err
		}
		maxval, err := c.hostScalar(hi, "maxval")
		if err != nil {
			return err
		}
		d := c.Type(lo).DType
		if d != ir.I32 && d != ir.I64 {
			return c.Errorf("minval and maxval must be int32 or int64, got %v", c.Type(lo))
		}
		if minval >= maxval {
			return c.Errorf("need minval < maxval, got %d >= %d (shape %v)", minval, maxval, shape)
		}
		key, counter, err := rngState(c, stateless)
		if err != nil {
			return err
		}
		t := ir.TensorType{DType: d, Shape: shape}
		bits := c.B.Rng(key, counter, ir.RngUniform, t)
		c.Out = []ir.Value{bounded(c.B, bits, minval, maxval)}
		return nil
	}
}

// bounded maps uniform int32 or int64 bits to [minval, maxval).
func bounded(b *ir.Builder, bits ir.Value, minval, maxval int64) ir.Value {
	t := b.Type(bits)
	if t.DType == ir.I32 {
		// The range and the unsigned bits fit int64 exactly, and so does
		// lo + m < hi.
		span := uint64(uint32(maxval) - uint32(minval))
		u := b.Convert(bits, ir.I64)
		u = b.Select(b.Compare(ir.CmpLT, u, like(b, u, 0)), b.Binary(ir.OpAdd, u, like(b, u, 1<<32)), u)
		m := b.Binary(ir.OpRem, u, b.BroadcastInDim(intScalar(b, ir.I64, int64(span)), t.Shape, []int{}))
		return b.Convert(b.Binary(ir.OpAdd, m, b.BroadcastInDim(intScalar(b, ir.I64, minval), t.Shape, []int{})), ir.I32)
	}
	m := unsignedMod64(b, bits, uint64(maxval)-uint64(minval))
	return b.Binary(ir.OpAdd, m, b.BroadcastInDim(intScalar(b, ir.I64, minval), t.Shape, []int{}))
}

// unsignedMod64 is (bits as uint64) mod span with signed int64 arithmetic:
// non-negative bits reduce directly; negative bits are bits + 2^64, so their
// residue is that of bits (C's remainder, made non-negative) plus 2^64 mod
// span, added without overflow.
func unsignedMod64(b *ir.Builder, bits ir.Value, span uint64) ir.Value {
	shape := b.Type(bits).Shape
	k := func(v uint64) ir.Value { return b.BroadcastInDim(intScalar(b, ir.I64, int64(v)), shape, []int{}) }
	if span > 1<<63 {
		// bits mod span is bits itself below span, bits - span above; as
		// unsigned numbers, bits >= span exactly when it is >= span as a
		// signed comparison of the wrapped values.
		neg := b.Compare(ir.CmpLT, bits, k(0))
		ge := b.Binary(ir.OpAnd, neg, b.Compare(ir.CmpGE, bits, k(span)))
		return b.Select(ge, b.Binary(ir.OpSub, bits, k(span)), bits)
	}
	if span == 1<<63 {
		// Clear the top bit.
		return b.Select(b.Compare(ir.CmpLT, bits, k(0)), b.Binary(ir.OpSub, bits, k(1<<63)), bits)
	}
	r := b.Binary(ir.OpRem, bits, k(span))
	r = b.Select(b.Compare(ir.CmpLT, r, k(0)), b.Binary(ir.OpAdd, r, k(span)), r)
	wrap := (^uint64(0)%span + 1) % span // 2^64 mod span
	if wrap == 0 {
		return r
	}
	// (r + wrap) mod span for the negative bits, with r, wrap < span.
	over := b.Compare(ir.CmpGE, r, k(span-wrap))
	sum := b.Select(over, b.Binary(ir.OpSub, r, k(span-wrap)), b.Binary(ir.OpAdd, r, k(wrap)))
	return b.Select(b.Compare(ir.CmpLT, bits, k(0)), sum, r)
}
