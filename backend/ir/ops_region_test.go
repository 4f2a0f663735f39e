package ir

import (
	"math"
	"strings"
	"testing"
)

func scalar(d DType) TensorType { return TensorType{DType: d} }

// countdown is while (n > 0) { n = n - 1; acc = acc * 2 } over (int32 n,
// float32[2] acc).
func countdown(t *testing.T) (cond, body *Program) {
	t.Helper()
	c := NewBuilder()
	n := c.Parameter(scalar(I32))
	c.Parameter(f32(2))
	cond, err := c.Build(c.Compare(CmpGT, n, c.Scalar(I32, 0)))
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuilder()
	n, acc := b.Parameter(scalar(I32)), b.Parameter(f32(2))
	body, err = b.Build(b.Binary(OpSub, n, b.Scalar(I32, 1)), b.Binary(OpMul, acc, b.Full(f32(2), 2)))
	if err != nil {
		t.Fatal(err)
	}
	return cond, body
}

func TestWhileBuildsAndVerifies(t *testing.T) {
	cond, body := countdown(t)
	b := NewBuilder()
	n, acc := b.Parameter(scalar(I32)), b.Parameter(f32(2))
	loop := b.While(cond, body, n, acc)
	rs := b.Results(loop)
	p, err := b.Build(rs[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(p); err != nil {
		t.Fatalf("a built while does not verify: %v\n%s", err, p)
	}
	if got := p.ResultTypes()[0]; !got.Shape.Equal(Shape{2}) || got.DType != F32 {
		t.Errorf("result type %v", got)
	}
	text := p.String()
	for _, want := range []string{"while", "region 0", "region 1", "get_result", "compare"} {
		if !strings.Contains(text, want) {
			t.Errorf("the program text lacks %q:\n%s", want, text)
		}
	}
	// The key sees into regions: another body is another program.
	_, body2 := countdown(t)
	body2.Instrs[len(body2.Instrs)-1].Op = OpAdd
	b2 := NewBuilder()
	n2, acc2 := b2.Parameter(scalar(I32)), b2.Parameter(f32(2))
	p2, err := b2.Build(b2.Results(b2.While(cond, body2, n2, acc2))[1])
	if err != nil {
		t.Fatal(err)
	}
	if p2.Key() == p.Key() {
		t.Error("two whiles with different bodies have one key")
	}
}

func TestRegionSignaturesAreChecked(t *testing.T) {
	cond, body := countdown(t)
	cases := map[string]func(b *Builder, n, acc Value){
		"body of other types": func(b *Builder, n, acc Value) { b.While(cond, body, acc, n) },
		"cond returning float": func(b *Builder, n, acc Value) {
			b.While(body, body, n, acc)
		},
		"tuple operand": func(b *Builder, n, acc Value) {
			loop := b.While(cond, body, n, acc)
			b.Unary(OpNeg, loop)
		},
		"tuple result index": func(b *Builder, n, acc Value) { b.GetResult(b.While(cond, body, n, acc), 2) },
		"case index type":    func(b *Builder, n, acc Value) { b.Case(acc, []*Program{body}, n, acc) },
		"case branch types": func(b *Builder, n, acc Value) {
			b.Case(n, []*Program{body, cond}, n, acc)
		},
		"call arguments": func(b *Builder, n, acc Value) { b.Call(body, acc) },
	}
	for name, build := range cases {
		b := NewBuilder()
		n, acc := b.Parameter(scalar(I32)), b.Parameter(f32(2))
		build(b, n, acc)
		if b.Err() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestVerifyChecksRegions: a hand-assembled program whose region is wrong,
// or whose tuple is misused, fails verification.
func TestVerifyChecksRegions(t *testing.T) {
	build := func() *Program {
		cond, body := countdown(t)
		b := NewBuilder()
		n, acc := b.Parameter(scalar(I32)), b.Parameter(f32(2))
		p, err := b.Build(b.Results(b.While(cond, body, n, acc))[1])
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	loop := 2 // parameters %0, %1, then the while
	edits := map[string]func(p *Program){
		"a body that returns other types": func(p *Program) { p.Instrs[loop].Regions[1].Results = p.Instrs[loop].Regions[1].Results[:1] },
		"declared results":                func(p *Program) { p.Instrs[loop].Tuple = p.Instrs[loop].Tuple[:1] },
		"a missing region":                func(p *Program) { p.Instrs[loop].Regions = p.Instrs[loop].Regions[:1] },
		"a tuple as a result":             func(p *Program) { p.Results = []Value{Value(loop)} },
		"a tuple as an operand": func(p *Program) {
			p.Instrs = append(p.Instrs, Instr{Op: OpNeg, Args: []Value{Value(loop)}, Type: f32(2)})
			p.Results = []Value{Value(len(p.Instrs) - 1)}
		},
	}
	for name, edit := range edits {
		p := build()
		edit(p)
		if err := Verify(p); err == nil {
			t.Errorf("%s: verified:\n%s", name, p)
		}
	}
	if err := Verify(build()); err != nil {
		t.Fatal(err)
	}
}

// TestReduceWithRecognisesMonoids: the fixed monoids reach drivers as
// reduce (their fast path); anything else as reduce_region.
func TestReduceWithRecognisesMonoids(t *testing.T) {
	body := func(op Op, d DType) *Program {
		b := NewBuilder()
		x, y := b.Parameter(scalar(d)), b.Parameter(scalar(d))
		p, err := b.Build(b.Binary(op, y, x)) // either order
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ops := func(p *Program) map[Op]int {
		m := map[Op]int{}
		for _, in := range p.Instrs {
			m[in.Op]++
		}
		return m
	}
	build := func(body *Program, init float64, d DType, n int) *Program {
		b := NewBuilder()
		var xs, inits []Value
		for range n {
			xs = append(xs, b.Parameter(TensorType{DType: d, Shape: Shape{3, 4}}))
			inits = append(inits, b.Scalar(d, init))
		}
		p, err := b.Build(b.ReduceWith(body, xs, inits, []int{1})...)
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if m := ops(build(body(OpAdd, F32), 0, F32, 1)); m[OpReduce] != 1 || m[OpReduceRegion] != 0 || m[OpAdd] != 0 {
		t.Errorf("a sum from 0 is not one reduce: %v", m)
	}
	if m := ops(build(body(OpMax, F32), math.Inf(-1), F32, 1)); m[OpReduce] != 1 || m[OpReduceRegion] != 0 {
		t.Errorf("a max from -inf is not one reduce: %v", m)
	}
	if m := ops(build(body(OpAdd, F32), 10, F32, 1)); m[OpReduce] != 1 || m[OpAdd] != 1 {
		t.Errorf("a sum from 10 is not a reduce and an add: %v", m)
	}
	if m := ops(build(body(OpOr, Bool), 0, Bool, 1)); m[OpReduce] != 1 {
		t.Errorf("an or over bools is not a reduce: %v", m)
	}
	if m := ops(build(body(OpSub, F32), 0, F32, 1)); m[OpReduceRegion] != 1 {
		t.Errorf("a subtracting body was taken for a monoid: %v", m)
	}
	// A variadic body: (a1, a2, x1, x2) -> (a1 + x1, a2 * x2).
	b := NewBuilder()
	a1, a2, x1, x2 := b.Parameter(scalar(F32)), b.Parameter(scalar(F32)), b.Parameter(scalar(F32)), b.Parameter(scalar(F32))
	pair, _ := b.Build(b.Binary(OpAdd, a1, x1), b.Binary(OpMul, a2, x2))
	if m := ops(build(pair, 1, F32, 2)); m[OpReduceRegion] != 1 || m[OpGetResult] != 2 {
		t.Errorf("a variadic reduction: %v", m)
	}
}

func TestSortWithRecognisesFixedOrders(t *testing.T) {
	cmpOf := func(d DType, dir CompareDir, swap bool) *Program {
		b := NewBuilder()
		x, y := b.Parameter(scalar(d)), b.Parameter(scalar(d))
		if swap {
			x, y = y, x
		}
		p, err := b.Build(b.Compare(dir, x, y))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	sortOps := func(d DType, cmp *Program) (fixed, general int, desc bool) {
		b := NewBuilder()
		x := b.Parameter(TensorType{DType: d, Shape: Shape{4, 6}})
		p, err := b.Build(b.SortWith(cmp, 1, x)...)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range p.Instrs {
			switch in.Op {
			case OpSort:
				fixed++
				desc = in.Sort.Descending
			case OpSortRegion:
				general++
			}
		}
		return
	}
	for _, c := range []struct {
		d       DType
		dir     CompareDir
		swap    bool
		fixed   bool
		descend bool
	}{
		{I32, CmpLT, false, true, false},
		{I32, CmpGT, false, true, true},
		{I64, CmpLT, true, true, true},    // rhs < lhs: descending
		{F32, CmpLT, false, false, false}, // floats: a comparator orders NaNs its own way
		{I32, CmpLE, false, false, false}, // not a strict order
	} {
		fixed, general, desc := sortOps(c.d, cmpOf(c.d, c.dir, c.swap))
		if c.fixed && (fixed != 1 || general != 0 || desc != c.descend) || !c.fixed && general != 1 {
			t.Errorf("%v %v swap=%v: %d sort, %d sort_region, descending %v", c.d, c.dir, c.swap, fixed, general, desc)
		}
	}
}

func TestBodiesOfTheFixedForms(t *testing.T) {
	two := func(build func(b *Builder, x, y Value) Value) *Program {
		b := NewBuilder()
		x, y := b.Parameter(scalar(F32)), b.Parameter(scalar(F32))
		p, err := b.Build(build(b, x, y))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	add := two(func(b *Builder, x, y Value) Value { return b.Binary(OpAdd, x, y) })
	update := two(func(b *Builder, x, y Value) Value { return y })
	sub := two(func(b *Builder, x, y Value) Value { return b.Binary(OpSub, x, y) })
	ge := two(func(b *Builder, x, y Value) Value { return b.Compare(CmpGE, x, y) })
	for body, want := range map[*Program]ScatterKind{add: ScatterAdd, update: ScatterReplace} {
		if k, ok := scatterKindOf(body); !ok || k != want {
			t.Errorf("scatter body:\n%s\nread as %v, %v; want %v", body, k, ok, want)
		}
	}
	if _, ok := scatterKindOf(sub); ok {
		t.Error("a subtracting scatter body was taken for a fixed form")
	}
	b := NewBuilder()
	x := b.Parameter(f32(4, 4))
	src := b.Parameter(f32(2, 2))
	w := WindowAttrs{Dims: []int{2, 2}, Strides: []int{2, 2}}
	pooled := b.ReduceWindowWith(add, x, b.Scalar(F32, 0), w)
	grad := b.SelectAndScatterWith(ge, add, x, src, b.Scalar(F32, 0), w)
	p, err := b.Build(pooled, grad)
	if err != nil {
		t.Fatal(err)
	}
	if p.Instrs[pooled].Op != OpReduceWindow || p.Instrs[grad].Op != OpSelectAndScatter {
		t.Errorf("the fixed forms were not emitted:\n%s", p)
	}
}

// TestBodyRegions: bodies that are no fixed form become the region ops,
// whose types the builder infers and whose signatures it checks.
func TestBodyRegions(t *testing.T) {
	two := func(d DType, build func(b *Builder, x, y Value) Value) *Program {
		b := NewBuilder()
		x, y := b.Parameter(scalar(d)), b.Parameter(scalar(d))
		p, err := b.Build(build(b, x, y))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	sub := two(F32, func(b *Builder, x, y Value) Value { return b.Binary(OpSub, x, y) })
	add := two(F32, func(b *Builder, x, y Value) Value { return b.Binary(OpAdd, x, y) })
	maxBody := two(F32, func(b *Builder, x, y Value) Value { return b.Binary(OpMax, x, y) })
	gt := two(F32, func(b *Builder, x, y Value) Value { return b.Compare(CmpGT, x, y) })
	ge := two(F32, func(b *Builder, x, y Value) Value { return b.Compare(CmpGE, x, y) })
	w := WindowAttrs{Dims: []int{2, 2}, Strides: []int{2, 2}}
	padded := WindowAttrs{Dims: []int{2, 2}, Strides: []int{2, 2}, Padding: [][2]int{{1, 1}, {0, 0}}}
	rows := ScatterDims{UpdateWindowDims: []int{1}, InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1}

	b := NewBuilder()
	x := b.Parameter(f32(4, 4))
	src := b.Parameter(f32(2, 2))
	idx := b.Parameter(TensorType{DType: I32, Shape: Shape{3, 1}})
	upd := b.Parameter(f32(3, 4))
	cases := []struct {
		name string
		v    Value
		op   Op
		want TensorType
	}{
		{"a subtracting scatter", b.ScatterWith(sub, x, idx, upd, rows), OpScatterRegion, f32(4, 4)},
		{"a subtracting window", b.ReduceWindowWith(sub, x, b.Scalar(F32, 0), w), OpReduceWindowRegion, f32(2, 2)},
		{"a sum from 1 into padding", b.ReduceWindowWith(add, x, b.Scalar(F32, 1), padded), OpReduceWindowRegion, f32(3, 2)},
		{"a sum from 1, no padding", b.ReduceWindowWith(add, x, b.Scalar(F32, 1), w), OpAdd, f32(2, 2)},
		{"a max from 1 into padding", b.ReduceWindowWith(maxBody, x, b.Scalar(F32, 1), padded), OpMax, f32(3, 2)},
		{"a strict select", b.SelectAndScatterWith(gt, add, x, src, b.Scalar(F32, 0), w), OpSelectAndScatterRegion, f32(4, 4)},
		{"a select from a non-zero init", b.SelectAndScatterWith(ge, add, x, src, b.Scalar(F32, 1), w), OpSelectAndScatterRegion, f32(4, 4)},
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	var results []Value
	for _, c := range cases {
		got := b.Type(c.v)
		op := b.prog.Instrs[c.v].Op
		if op == OpGetResult {
			op = b.prog.Instrs[b.prog.Instrs[c.v].Args[0]].Op
		}
		if op != c.op || got.DType != c.want.DType || !got.Shape.Equal(c.want.Shape) {
			t.Errorf("%s: %s giving %v, want %s giving %v", c.name, op, got, c.op, c.want)
		}
		results = append(results, c.v)
	}
	p, err := b.Build(results...)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(p); err != nil {
		t.Errorf("the program does not verify: %v\n%s", err, p)
	}

	refusals := []struct {
		name  string
		build func(b *Builder) Value
		want  string
	}{
		{"a window body over two dtypes", func(b *Builder) Value {
			return b.ReduceWindowRegion(sub, []Value{b.Parameter(tensorOf(I32, 4))}, []Value{b.Scalar(I32, 0)}, WindowAttrs{Dims: []int{2}})
		}, "body region"},
		{"a window init of another dtype", func(b *Builder) Value {
			return b.ReduceWindowRegion(sub, []Value{b.Parameter(f32(4))}, []Value{b.Scalar(I32, 0)}, WindowAttrs{Dims: []int{2}})
		}, "init 0"},
		{"a source of the wrong shape", func(b *Builder) Value {
			return b.SelectAndScatterRegion(gt, add, b.Parameter(f32(4, 4)), b.Parameter(f32(3, 2)), b.Scalar(F32, 0), w)
		}, "windowed shape"},
		{"a select returning a float", func(b *Builder) Value {
			return b.SelectAndScatterRegion(add, add, b.Parameter(f32(4, 4)), b.Parameter(f32(2, 2)), b.Scalar(F32, 0), w)
		}, "select region"},
		{"scatter updates of the wrong shape", func(b *Builder) Value {
			return b.ScatterRegion(sub, []Value{b.Parameter(f32(4, 4))}, b.Parameter(TensorType{DType: I32, Shape: Shape{3, 1}}), []Value{b.Parameter(f32(3, 5))}, rows)
		}, "scatter"},
		{"a scatter with more updates than operands", func(b *Builder) Value {
			x := b.Parameter(f32(4, 4))
			return b.ScatterRegion(sub, []Value{x}, b.Parameter(TensorType{DType: I32, Shape: Shape{3, 1}}), []Value{x, x}, rows)
		}, "one update per operand"},
	}
	for _, c := range refusals {
		b := NewBuilder()
		c.build(b)
		if err := b.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error mentioning %q", c.name, err, c.want)
		}
	}
}
