package ir

import (
	"strings"
	"testing"
)

func f32(dims ...int) TensorType { return TensorType{DType: F32, Shape: Shape(dims)} }

// matmulBias is dot(x, w) + b: a small program of several op kinds.
func matmulBias(t *testing.T) *Program {
	t.Helper()
	b := NewBuilder()
	x, w, bias := b.Parameter(f32(2, 3)), b.Parameter(f32(3, 4)), b.Parameter(f32(4))
	y := b.DotGeneral(x, w, DotDims{LhsContract: []int{1}, RhsContract: []int{0}})
	p, err := b.Build(b.Binary(OpAdd, y, b.BroadcastInDim(bias, Shape{2, 4}, []int{1})))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEveryOpHasATableEntry(t *testing.T) {
	names := map[string]Op{}
	for _, o := range Ops() {
		info, ok := o.Info()
		if !ok || info.Name == "" || info.infer == nil {
			t.Errorf("op %d has no complete table entry: %+v", o, info)
			continue
		}
		if prev, dup := names[info.Name]; dup {
			t.Errorf("%s and %d share the name %q", prev, o, info.Name)
		}
		names[info.Name] = o
		switch {
		case o.IsUnary() && info.Arity != 1, o.IsBinary() && info.Arity != 2:
			t.Errorf("%s: arity %d does not match its class", o, info.Arity)
		}
	}
	if _, ok := OpInvalid.Info(); ok {
		t.Error("OpInvalid has a table entry")
	}
}

func TestVerifyAcceptsBuiltPrograms(t *testing.T) {
	if err := Verify(matmulBias(t)); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyRejects: each way a hand-assembled program can be wrong is an
// error that says what is wrong.
func TestVerifyRejects(t *testing.T) {
	cases := map[string]struct {
		edit func(p *Program)
		want string
	}{
		"forward reference": {func(p *Program) { p.Instrs[3].Args[0] = 5 }, "not an earlier instruction"},
		"arity":             {func(p *Program) { p.Instrs[3].Args = p.Instrs[3].Args[:1] }, "has 1 operands, wants 2"},
		"declared type":     {func(p *Program) { p.Instrs[3].Type = f32(4, 2) }, "declares result float32[4,2]"},
		"parameter type":    {func(p *Program) { p.Params[0] = f32(2, 2) }, "parameter #0 is declared"},
		"missing attribute": {func(p *Program) { p.Instrs[3].Dot = nil }, "missing dot dimension numbers"},
		"unknown op":        {func(p *Program) { p.Instrs[3].Op = numOps + 3 }, "is not an IR op"},
		"no results":        {func(p *Program) { p.Results = nil }, "no results"},
		"dangling result":   {func(p *Program) { p.Results = []Value{42} }, "names %42"},
		"operand types":     {func(p *Program) { p.Instrs[5].Op = OpDotGeneral }, "dot_general"},
	}
	for name, c := range cases {
		p := matmulBias(t)
		c.edit(p)
		err := Verify(p)
		if err == nil {
			t.Errorf("%s: accepted:\n%s", name, p)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to mention %q", name, err, c.want)
		}
	}
	if err := Verify(nil); err == nil {
		t.Error("a nil program was accepted")
	}
}

func TestNormalizeMapsBack(t *testing.T) {
	p := matmulBias(t)
	q, origin, err := Normalize(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(origin) != len(q.Instrs) {
		t.Fatalf("origin has %d entries for %d instructions", len(origin), len(q.Instrs))
	}
	for i, o := range origin {
		if o < 0 || q.Instrs[i].Op != p.Instrs[o].Op {
			t.Errorf("rebuilt %%%d (%s) maps to %d", i, q.Instrs[i].Op, o)
		}
	}
}

func TestKeyIsTheProgramsIdentity(t *testing.T) {
	a, b := matmulBias(t), matmulBias(t)
	if a.Key() != b.Key() {
		t.Fatal("two builds of one program have different keys")
	}
	differ := map[string]func(p *Program){
		"a declared but unread parameter": func(p *Program) { p.Params = append(p.Params, f32(1)) },
		"a dimension":                     func(p *Program) { p.Instrs[0].Type = f32(2, 5) },
		"an op":                           func(p *Program) { p.Instrs[5].Op = OpSub },
		"an arg_reduce's kind":            func(p *Program) { p.Instrs[5].Reduce = ReduceMax },
		"a comparison direction":          func(p *Program) { p.Instrs[5].Compare = CmpGE },
		"a literal": func(p *Program) {
			p.Instrs = append(p.Instrs, Instr{Op: OpConstant, Type: f32(), Literal: []byte{1, 0, 0, 0}})
		},
	}
	for name, edit := range differ {
		p := matmulBias(t)
		edit(p)
		if p.Key() == a.Key() {
			t.Errorf("changing %s leaves the key unchanged", name)
		}
	}
}

// TestVerifyOnce: a program that passed is not checked again (every layer
// that accepts it asks), but one grown since is.
func TestVerifyOnce(t *testing.T) {
	p := matmulBias(t)
	q1, origin, err := Normalize(p)
	if err != nil {
		t.Fatal(err)
	}
	q2, origin2, err := Normalize(p)
	if err != nil || q2 != q1 || &origin2[0] != &origin[0] {
		t.Fatalf("the second Normalize rebuilt the program (err %v)", err)
	}
	if err := Verify(p); err != nil {
		t.Fatal(err)
	}
	p.Instrs = append(p.Instrs, Instr{Op: OpNeg, Args: []Value{99}, Type: f32(2, 4)})
	if err := Verify(p); err == nil || !strings.Contains(err.Error(), "not an earlier instruction") {
		t.Fatalf("a program grown after it passed: %v, want the new instruction refused", err)
	}
	if _, _, err := Normalize(&Program{}); err == nil {
		t.Fatal("an empty program passed")
	}
}
