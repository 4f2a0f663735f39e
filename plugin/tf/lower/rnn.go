package lower

import (
	"github.com/metalplug/metalplug/backend/ir"
)

// The fused RNN cells of tf.raw_ops (lstm_ops.h, lstm_ops.cc, gru_ops.h):
// each step is a MatMul of [x, h] by the weights and elementwise gates, in
// float32, in the CPU kernel's order. The sequence ops unroll their
// seq_len_max steps (a host input, as TensorFlow's GPU kernel has it);
// steps past it are zero. A step's outputs are rounded to the op's dtype
// before the next step reads them, as the CPU stores them.

// gateLayout is where the four gates sit in the [batch, 4*cell] product:
// BlockLSTM and the cells use i, c, f, o; BlockLSTMV2 i, f, c, o.
type gateLayout [4]int // positions of i, c, f, o

var (
	icfo = gateLayout{0, 1, 2, 3}
	ifco = gateLayout{0, 2, 1, 3}
)

func init() {
	half := []ir.DType{ir.F32, ir.F16}
	cellIn := []string{"x", "cs_prev", "h_prev", "w", "wci", "wcf", "wco", "b"}
	fwdAttrs := []AttrSpec{{Name: "forget_bias", Kind: AttrFloat, Optional: true}, {Name: "cell_clip", Kind: AttrFloat, Optional: true},
		{Name: "use_peephole", Kind: AttrBool, Optional: true}}
	v2Attrs := []AttrSpec{{Name: "cell_clip", Kind: AttrFloat, Optional: true}, {Name: "use_peephole", Kind: AttrBool, Optional: true}}
	peep := []AttrSpec{{Name: "use_peephole", Kind: AttrBool, Optional: true}}
	fwdOut := []string{"i", "cs", "f", "o", "ci", "co", "h"}
	register(Kernel{Op: "LSTMBlockCell", Constraints: T(half), Inputs: cellIn, Attrs: fwdAttrs,
		Lower: lowerLSTMCell})
	register(Kernel{Op: "LSTMBlockCellGrad", Constraints: T(half), Inputs: append(append(cellIn[:8:8], fwdOut[:6]...), "cs_grad", "h_grad"),
		Attrs: peep, Lower: lowerLSTMCellGrad})
	seqIn := append([]string{"seq_len_max"}, cellIn...)
	register(Kernel{Op: "BlockLSTM", Constraints: T(half), Inputs: seqIn, HostInputs: []string{"seq_len_max"},
		Attrs: fwdAttrs, Lower: lowerBlockLSTM(icfo, true)})
	register(Kernel{Op: "BlockLSTMV2", Constraints: T(half), Inputs: seqIn, HostInputs: []string{"seq_len_max"},
		Attrs: v2Attrs, Lower: lowerBlockLSTM(ifco, false)})
	gradIn := append(append(seqIn[:9:9], fwdOut...), "cs_grad", "h_grad")
	register(Kernel{Op: "BlockLSTMGrad", Constraints: T(half), Inputs: gradIn, HostInputs: []string{"seq_len_max"},
		Attrs: peep, Lower: lowerBlockLSTMGrad(icfo)})
	register(Kernel{Op: "BlockLSTMGradV2", Constraints: T(half), Inputs: gradIn, HostInputs: []string{"seq_len_max"},
		Attrs: peep, Lower: lowerBlockLSTMGrad(ifco)})
	register(Kernel{Op: "GRUBlockCell", Constraints: T([]ir.DType{ir.F32}), Inputs: []string{"x", "h_prev", "w_ru", "w_c", "b_ru", "b_c"},
		Lower: lowerGRUCell})
	register(Kernel{Op: "GRUBlockCellGrad", Constraints: T([]ir.DType{ir.F32}),
		Inputs: []string{"x", "h_prev", "w_ru", "w_c", "b_ru", "b_c", "r", "u", "c", "d_h"}, Lower: lowerGRUCellGrad})
}

// lstmParams are a cell's weights, float32: w [input+cell, 4*cell],
// the peepholes [cell] (zero without use_peephole) and b [4*cell].
type lstmParams struct {
	w, wci, wcf, wco, b ir.Value
	input, cell, batch  int
	peephole            bool
	dtype               ir.DType
	layout              gateLayout
}

// lstmSpec checks the cell inputs at positions first..first+7 (x,
// cs_prev, h_prev, w, wci, wcf, wco, b) for x of shape [batch, input]
// (xShape) and reads them as float32.
func lstmSpec(c *Call, first int, xShape ir.Shape, layout gateLayout) (lstmParams, error) {
	t := func(i int) ir.TensorType { return c.Type(first + i) }
	d := t(0).DType
	p := lstmParams{peephole: c.Attrs.Bool("use_peephole"), dtype: d, layout: layout}
	if xShape.Rank() != 2 || t(1).Shape.Rank() != 2 {
		return p, c.Errorf("x must be [batch, input] and cs_prev [batch, cell]: inputs %s", c.Inputs())
	}
	p.batch, p.input, p.cell = xShape[0], xShape[1], t(1).Shape[1]
	n := p.cell
	want := []ir.Shape{{p.batch, n}, {p.batch, n}, {p.input + n, 4 * n}, {n}, {n}, {n}, {4 * n}}
	for i, s := range want {
		if !t(i+1).Shape.Equal(s) || t(i+1).DType != d {
			return p, c.Errorf("input %d (%s) must be %v of the dtype of x, got %v (inputs %s)", first+i+1,
				[]string{"cs_prev", "h_prev", "w", "wci", "wcf", "wco", "b"}[i], s, t(i+1), c.Inputs())
		}
	}
	b := c.B
	f := func(i int) ir.Value { return b.Convert(c.In[first+i], ir.F32) }
	p.w, p.b = f(3), f(7)
	if p.peephole {
		p.wci, p.wcf, p.wco = f(4), f(5), f(6)
	} else {
		z := b.Full(ir.TensorType{DType: ir.F32, Shape: ir.Shape{n}}, 0)
		p.wci, p.wcf, p.wco = z, z, z
	}
	return p, nil
}

// cols takes columns [lo, hi) of a [rows, cols] value.
func cols(b *ir.Builder, v ir.Value, lo, hi int) ir.Value {
	s := b.Type(v).Shape
	return b.Slice(v, []int{0, lo}, []int{s[0], hi}, []int{1, 1})
}

// row broadcasts a [n] vector over [batch, n].
func row(b *ir.Builder, v ir.Value, batch int) ir.Value {
	n := b.Type(v).Shape[0]
	return b.BroadcastInDim(v, ir.Shape{batch, n}, []int{1})
}

// stored rounds a float32 value to the op's dtype and back, as the CPU's
// storing it does.
func (p lstmParams) stored(b *ir.Builder, v ir.Value) ir.Value {
	if p.dtype == ir.F32 {
		return v
	}
	return b.Convert(b.Convert(v, p.dtype), ir.F32)
}

// lstmState is one step's seven outputs, float32 [batch, cell].
type lstmState struct{ i, cs, f, o, ci, co, h ir.Value }

func (s lstmState) list() []ir.Value { return []ir.Value{s.i, s.cs, s.f, s.o, s.ci, s.co, s.h} }

// step is LSTMBlockCellFprop.
func (p lstmParams) step(b *ir.Builder, x, csPrev, hPrev ir.Value, forgetBias, clip float32) lstmState {
	bin := func(op ir.Op, x, y ir.Value) ir.Value { return b.Binary(op, x, y) }
	n := p.cell
	xh := b.Concat(1, x, hPrev)
	gates := bin(ir.OpAdd, b.DotGeneral(xh, p.w, ir.DotDims{LhsContract: []int{1}, RhsContract: []int{0}}), row(b, p.b, p.batch))
	gate := func(k int) ir.Value { return cols(b, gates, p.layout[k]*n, (p.layout[k]+1)*n) }
	peep := func(v, w ir.Value) ir.Value { return bin(ir.OpMul, v, row(b, w, p.batch)) }
	var s lstmState
	s.i = b.Unary(ir.OpLogistic, bin(ir.OpAdd, gate(0), peep(csPrev, p.wci)))
	s.ci = b.Unary(ir.OpTanh, gate(1))
	fb := b.Full(ir.TensorType{DType: ir.F32, Shape: ir.Shape{p.batch, n}}, float64(forgetBias))
	s.f = b.Unary(ir.OpLogistic, bin(ir.OpAdd, bin(ir.OpAdd, gate(2), fb), peep(csPrev, p.wcf)))
	s.cs = bin(ir.OpAdd, bin(ir.OpMul, s.i, s.ci), bin(ir.OpMul, s.f, csPrev))
	if clip > 0 {
		s.cs = bin(ir.OpMin, bin(ir.OpMax, s.cs, like(b, s.cs, -float64(clip))), like(b, s.cs, float64(clip)))
	}
	s.cs = p.stored(b, s.cs)
	s.co = b.Unary(ir.OpTanh, s.cs)
	s.o = b.Unary(ir.OpLogistic, bin(ir.OpAdd, gate(3), peep(s.cs, p.wco)))
	s.h = bin(ir.OpMul, s.o, s.co)
	for _, v := range []*ir.Value{&s.i, &s.f, &s.o, &s.ci, &s.co, &s.h} {
		*v = p.stored(b, *v)
	}
	return s
}

// lstmGrads are LSTMBlockCellBprop's elementwise results, float32.
type lstmGrads struct {
	dgates, csPrev   ir.Value // [batch, 4*cell] in the layout; [batch, cell]
	dwci, dwcf, dwco ir.Value // [cell]
	di, dci, df, do  ir.Value
}

// bprop is LSTMBlockCellBprop's gate gradients for one step, given the
// step's forward values s, its cs_prev, and the gradients reaching cs and h.
func (p lstmParams) bprop(b *ir.Builder, s lstmState, csPrev, csGrad, hGrad ir.Value) lstmGrads {
	bin := func(op ir.Op, x, y ir.Value) ir.Value { return b.Binary(op, x, y) }
	mul := func(xs ...ir.Value) ir.Value {
		v := xs[0]
		for _, x := range xs[1:] {
			v = bin(ir.OpMul, v, x)
		}
		return v
	}
	one := like(b, s.o, 1)
	oneMinus := func(v ir.Value) ir.Value { return bin(ir.OpSub, one, v) }
	var g lstmGrads
	g.do = mul(s.o, oneMinus(s.o), hGrad, s.co)
	dcs := bin(ir.OpAdd, mul(oneMinus(mul(s.co, s.co)), hGrad, s.o), csGrad)
	if p.peephole {
		dcs = bin(ir.OpAdd, dcs, mul(g.do, row(b, p.wco, p.batch)))
	}
	dcs = p.stored(b, dcs)
	g.do = p.stored(b, g.do)
	g.dci = p.stored(b, mul(oneMinus(mul(s.ci, s.ci)), dcs, s.i))
	g.df = p.stored(b, mul(s.f, oneMinus(s.f), dcs, csPrev))
	g.di = p.stored(b, mul(s.i, oneMinus(s.i), dcs, s.ci))
	parts := make([]ir.Value, 4)
	for k, v := range []ir.Value{g.di, g.dci, g.df, g.do} {
		parts[p.layout[k]] = v
	}
	g.dgates = b.Concat(1, parts...)
	g.csPrev = mul(dcs, s.f)
	if p.peephole {
		g.csPrev = bin(ir.OpAdd, bin(ir.OpAdd, g.csPrev, mul(g.di, row(b, p.wci, p.batch))), mul(g.df, row(b, p.wcf, p.batch)))
		g.dwci = b.Reduce(mul(g.di, csPrev), ir.ReduceSum, []int{0})
		g.dwcf = b.Reduce(mul(g.df, csPrev), ir.ReduceSum, []int{0})
		g.dwco = b.Reduce(mul(g.do, s.cs), ir.ReduceSum, []int{0})
	} else {
		z := b.Full(ir.TensorType{DType: ir.F32, Shape: ir.Shape{p.cell}}, 0)
		g.dwci, g.dwcf, g.dwco = z, z, z
	}
	g.csPrev = p.stored(b, g.csPrev)
	return g
}

func f32In(c *Call, i int) ir.Value { return c.B.Convert(c.In[i], ir.F32) }

func lowerLSTMCell(c *Call) error {
	if err := c.arity(8); err != nil {
		return err
	}
	p, err := lstmSpec(c, 0, c.Type(0).Shape, icfo)
	if err != nil {
		return err
	}
	b := c.B
	s := p.step(b, f32In(c, 0), f32In(c, 1), f32In(c, 2), c.Attrs.Float("forget_bias", 1), c.Attrs.Float("cell_clip", 3))
	for _, v := range s.list() {
		c.Out = append(c.Out, b.Convert(v, p.dtype))
	}
	return nil
}

// checkSame checks that inputs from..to-1 all have type t.
func checkSame(c *Call, from, to int, t ir.TensorType, names []string) error {
	for i := from; i < to; i++ {
		if !c.Type(i).Shape.Equal(t.Shape) || c.Type(i).DType != t.DType {
			return c.Errorf("input %d (%s) must be %v, got %v (inputs %s)", i, names[i], t, c.Type(i), c.Inputs())
		}
	}
	return nil
}

func lowerLSTMCellGrad(c *Call) error {
	if err := c.arity(16); err != nil {
		return err
	}
	p, err := lstmSpec(c, 0, c.Type(0).Shape, icfo)
	if err != nil {
		return err
	}
	k, _ := Lookup(c.Op)
	if err := checkSame(c, 8, 16, c.Type(1), k.Inputs); err != nil {
		return err
	}
	b := c.B
	s := lstmState{i: f32In(c, 8), cs: f32In(c, 9), f: f32In(c, 10), o: f32In(c, 11), ci: f32In(c, 12), co: f32In(c, 13)}
	g := p.bprop(b, s, f32In(c, 1), f32In(c, 14), f32In(c, 15))
	for _, v := range []ir.Value{g.csPrev, g.dgates, g.dwci, g.dwcf, g.dwco} {
		c.Out = append(c.Out, b.Convert(v, p.dtype))
	}
	return nil
}

// seqSpec reads seq_len_max (input 0) and checks x (input 1) as
// [time, batch, input].
func seqSpec(c *Call, layout gateLayout) (steps int, p lstmParams, err error) {
	n, err := c.hostScalar(0, "seq_len_max")
	if err != nil {
		return 0, p, err
	}
	tx := c.Type(1)
	if tx.Shape.Rank() != 3 {
		return 0, p, c.Errorf("x must be [time, batch, input], got %v", tx)
	}
	if n < 0 || n > int64(tx.Shape[0]) {
		return 0, p, c.Errorf("seq_len_max %d must be within [0, %d], the time steps of x %v", n, tx.Shape[0], tx)
	}
	p, err = lstmSpec(c, 1, tx.Shape[1:], layout)
	return int(n), p, err
}

// timeStep is step t of a [time, batch, n] value, float32 [batch, n].
func timeStep(b *ir.Builder, v ir.Value, t int) ir.Value {
	s := b.Type(v).Shape
	return b.Convert(b.Reshape(b.Slice(v, []int{t, 0, 0}, []int{t + 1, s[1], s[2]}, []int{1, 1, 1}), s[1:].Clone()), ir.F32)
}

// stack joins per-step [batch, n] values into [time, batch, n] of dtype d,
// zero past the steps given.
func stack(b *ir.Builder, vs []ir.Value, time, batch, n int, d ir.DType) ir.Value {
	parts := make([]ir.Value, 0, len(vs)+1)
	for _, v := range vs {
		parts = append(parts, b.Reshape(b.Convert(v, d), ir.Shape{1, batch, n}))
	}
	if len(vs) < time {
		parts = append(parts, b.Full(ir.TensorType{DType: d, Shape: ir.Shape{time - len(vs), batch, n}}, 0))
	}
	return b.Concat(0, parts...)
}

func lowerBlockLSTM(layout gateLayout, v1 bool) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(9); err != nil {
			return err
		}
		steps, p, err := seqSpec(c, layout)
		if err != nil {
			return err
		}
		b := c.B
		forget, clip := float32(0), c.Attrs.Float("cell_clip", 0)
		if v1 {
			forget, clip = c.Attrs.Float("forget_bias", 1), c.Attrs.Float("cell_clip", 3)
		}
		time := c.Type(1).Shape[0]
		outs := make([][]ir.Value, 7)
		cs, h := f32In(c, 2), f32In(c, 3)
		for t := range steps {
			s := p.step(b, timeStep(b, c.In[1], t), cs, h, forget, clip)
			for k, v := range s.list() {
				outs[k] = append(outs[k], v)
			}
			cs, h = s.cs, s.h
		}
		for _, o := range outs {
			c.Out = append(c.Out, stack(b, o, time, p.batch, p.cell, p.dtype))
		}
		return nil
	}
}

func lowerBlockLSTMGrad(layout gateLayout) func(c *Call) error {
	return func(c *Call) error {
		if err := c.arity(18); err != nil {
			return err
		}
		steps, p, err := seqSpec(c, layout)
		if err != nil {
			return err
		}
		tx := c.Type(1)
		time := tx.Shape[0]
		k, _ := Lookup(c.Op)
		if err := checkSame(c, 9, 18, ir.TensorType{DType: p.dtype, Shape: ir.Shape{time, p.batch, p.cell}}, k.Inputs); err != nil {
			return err
		}
		b := c.B
		n := p.cell
		zero := func(s ...int) ir.Value { return b.Full(ir.TensorType{DType: ir.F32, Shape: s}, 0) }
		csNext, hNext := zero(p.batch, n), zero(p.batch, n)
		dw, db := zero(p.input+n, 4*n), zero(4*n)
		dwci, dwcf, dwco := zero(n), zero(n), zero(n)
		xGrads := make([]ir.Value, steps)
		at := func(i, t int) ir.Value { return timeStep(b, c.In[i], t) }
		for t := steps - 1; t >= 0; t-- {
			csPrev, hPrev := f32In(c, 2), f32In(c, 3)
			if t > 0 {
				csPrev, hPrev = at(10, t-1), at(15, t-1)
			}
			s := lstmState{i: at(9, t), cs: at(10, t), f: at(11, t), o: at(12, t), ci: at(13, t), co: at(14, t)}
			csGrad := p.stored(b, b.Binary(ir.OpAdd, csNext, at(16, t)))
			hGrad := p.stored(b, b.Binary(ir.OpAdd, hNext, at(17, t)))
			g := p.bprop(b, s, csPrev, csGrad, hGrad)
			// xh_grad = dgates * w^T; w_grad += xh^T * dgates; b_grad += sum(dgates).
			xhGrad := p.stored(b, b.DotGeneral(g.dgates, p.w, ir.DotDims{LhsContract: []int{1}, RhsContract: []int{1}}))
			xGrads[t] = cols(b, xhGrad, 0, p.input)
			hNext = cols(b, xhGrad, p.input, p.input+n)
			xh := b.Concat(1, at(1, t), hPrev)
			dw = p.stored(b, b.Binary(ir.OpAdd, dw, b.DotGeneral(xh, g.dgates, ir.DotDims{LhsContract: []int{0}, RhsContract: []int{0}})))
			db = p.stored(b, b.Binary(ir.OpAdd, db, b.Reduce(g.dgates, ir.ReduceSum, []int{0})))
			if p.peephole {
				dwci = p.stored(b, b.Binary(ir.OpAdd, dwci, g.dwci))
				dwcf = p.stored(b, b.Binary(ir.OpAdd, dwcf, g.dwcf))
				dwco = p.stored(b, b.Binary(ir.OpAdd, dwco, g.dwco))
			}
			csNext = g.csPrev
		}
		d := p.dtype
		c.Out = []ir.Value{stack(b, xGrads, time, p.batch, p.input, d), b.Convert(csNext, d), b.Convert(hNext, d),
			b.Convert(dw, d), b.Convert(dwci, d), b.Convert(dwcf, d), b.Convert(dwco, d), b.Convert(db, d)}
		return nil
	}
}

// gruSpec checks GRUBlockCell's first six inputs: x [batch, input],
// h_prev [batch, cell], w_ru [input+cell, 2*cell], w_c [input+cell, cell],
// b_ru [2*cell], b_c [cell].
func gruSpec(c *Call) (batch, input, cell int, err error) {
	tx, th := c.Type(0), c.Type(1)
	if tx.Shape.Rank() != 2 || th.Shape.Rank() != 2 || th.Shape[0] != tx.Shape[0] {
		return 0, 0, 0, c.Errorf("x must be [batch, input] and h_prev [batch, cell]: inputs %s", c.Inputs())
	}
	batch, input, cell = tx.Shape[0], tx.Shape[1], th.Shape[1]
	want := []ir.Shape{{input + cell, 2 * cell}, {input + cell, cell}, {2 * cell}, {cell}}
	for i, s := range want {
		if !c.Type(i+2).Shape.Equal(s) || c.Type(i+2).DType != tx.DType {
			return 0, 0, 0, c.Errorf("input %d (%s) must be %v, got %v (inputs %s)", i+2, []string{"w_ru", "w_c", "b_ru", "b_c"}[i], s, c.Type(i+2), c.Inputs())
		}
	}
	return batch, input, cell, nil
}

func matmulAdd(b *ir.Builder, x, w, bias ir.Value) ir.Value {
	y := b.DotGeneral(x, w, ir.DotDims{LhsContract: []int{1}, RhsContract: []int{0}})
	return b.Binary(ir.OpAdd, y, row(b, bias, b.Type(y).Shape[0]))
}

// lowerGRUCell is GRUBlockCellFprop: r and u from [x, h_prev], c from
// [x, h_prev * r], h = u * (h_prev - c) + c.
func lowerGRUCell(c *Call) error {
	if err := c.arity(6); err != nil {
		return err
	}
	_, _, n, err := gruSpec(c)
	if err != nil {
		return err
	}
	b := c.B
	x, h := c.In[0], c.In[1]
	ru := matmulAdd(b, b.Concat(1, x, h), c.In[2], c.In[4])
	r := b.Unary(ir.OpLogistic, cols(b, ru, 0, n))
	u := b.Unary(ir.OpLogistic, cols(b, ru, n, 2*n))
	cc := b.Unary(ir.OpTanh, matmulAdd(b, b.Concat(1, x, b.Binary(ir.OpMul, h, r)), c.In[3], c.In[5]))
	hn := b.Binary(ir.OpAdd, b.Binary(ir.OpMul, u, b.Binary(ir.OpSub, h, cc)), cc)
	c.Out = []ir.Value{r, u, cc, hn}
	return nil
}

// lowerGRUCellGrad is GRUBlockCellBprop.
func lowerGRUCellGrad(c *Call) error {
	if err := c.arity(10); err != nil {
		return err
	}
	_, input, n, err := gruSpec(c)
	if err != nil {
		return err
	}
	k, _ := Lookup(c.Op)
	if err := checkSame(c, 6, 10, c.Type(1), k.Inputs); err != nil {
		return err
	}
	b := c.B
	bin := func(op ir.Op, x, y ir.Value) ir.Value { return b.Binary(op, x, y) }
	mul := func(xs ...ir.Value) ir.Value {
		v := xs[0]
		for _, x := range xs[1:] {
			v = bin(ir.OpMul, v, x)
		}
		return v
	}
	h, r, u, cc, dh := c.In[1], c.In[6], c.In[7], c.In[8], c.In[9]
	one := like(b, u, 1)
	oneMinus := func(v ir.Value) ir.Value { return bin(ir.OpSub, one, v) }
	dcBar := mul(dh, oneMinus(u), oneMinus(mul(cc, cc)))
	duBar := mul(dh, bin(ir.OpSub, h, cc), u, oneMinus(u))
	// d[x, h_prev*r] = d_c_bar * w_c^T.
	dxhr := b.DotGeneral(dcBar, c.In[3], ir.DotDims{LhsContract: []int{1}, RhsContract: []int{1}})
	dhr := cols(b, dxhr, input, input+n)
	drBar := mul(dhr, h, r, oneMinus(r))
	drubar := b.Concat(1, drBar, duBar)
	dxh := b.DotGeneral(drubar, c.In[2], ir.DotDims{LhsContract: []int{1}, RhsContract: []int{1}})
	dx := bin(ir.OpAdd, cols(b, dxh, 0, input), cols(b, dxhr, 0, input))
	dhPrev := bin(ir.OpAdd, bin(ir.OpAdd, cols(b, dxh, input, input+n), mul(dhr, r)), mul(dh, u))
	c.Out = []ir.Value{dx, dhPrev, dcBar, drubar}
	return nil
}
