package gpu

import (
	"slices"
	"strings"
	"testing"
)

// TestContractTable: every primitive has a selector, a release, the types
// it takes and a source; selectors are Objective-C method names.
func TestContractTable(t *testing.T) {
	for _, op := range Ops() {
		r := table[op]
		if r.method == "" || !strings.HasSuffix(r.method, ":") || strings.ContainsAny(r.method, " ()") {
			t.Errorf("%v: selector %q", op, r.method)
		}
		if !r.since.AtLeast(Version{11, 0}) || r.source == "" || len(r.types) == 0 || op.String() == "Op(?)" {
			t.Errorf("%v: entry %+v is incomplete", op, r)
		}
		for _, g := range r.gates {
			if !g.since.AtLeast(r.since) || g.source == "" || slices.Contains(r.types, g.t) {
				t.Errorf("%v: gate %+v", op, g)
			}
		}
	}
	if OpReductionSum.Accepts(Int64, Version{13, 2}) || !OpReductionSum.Accepts(Int64, Version{13, 3}) {
		t.Error("int64 reductions are gated at macOS 13.3")
	}
}

// recorder is a Backend that keeps the nodes it is given.
type recorder struct{ nodes []*Node }

func (r *recorder) Add(n *Node)                               { r.nodes = append(r.nodes, n) }
func (r *recorder) Compile(_, _ []Tensor) (Executable, error) { return nil, nil }
func (r *recorder) Release()                                  {}

func TestShapeRules(t *testing.T) {
	g := NewGraph(&recorder{}, Version{15, 0})
	a := g.Placeholder([]int{2, 1, 3}, Float32)
	b := g.Placeholder([]int{4, 3}, Float32)
	if s := g.Addition(a, b); !slices.Equal(s.Shape, []int{2, 4, 3}) || s.DType != Float32 {
		t.Errorf("broadcast add = %v", s)
	}
	if c := g.LessThan(a, b); c.DType != Bool {
		t.Errorf("comparison = %v, want bool", c)
	}
	if m := g.MatMul(g.Placeholder([]int{5, 2, 3}, Float32), g.Placeholder([]int{3, 4}, Float32)); !slices.Equal(m.Shape, []int{5, 2, 4}) {
		t.Errorf("batched matmul = %v", m)
	}
	if s := g.Slice(b, []int{1, 0}, []int{4, 3}, []int{2, 2}); !slices.Equal(s.Shape, []int{2, 2}) {
		t.Errorf("strided slice = %v", s)
	}
	if r := g.ReductionSum(a, []int{0, 2}); !slices.Equal(r.Shape, []int{1, 1, 1}) {
		t.Errorf("reduction = %v", r)
	}
	if c := g.Convolution2D(g.Placeholder([]int{1, 5, 5, 4}, Float32), g.Placeholder([]int{3, 3, 2, 6}, Float32),
		Conv2D{StrideY: 2, StrideX: 1, DilationY: 1, DilationX: 2, Groups: 2}); !slices.Equal(c.Shape, []int{1, 2, 1, 6}) {
		t.Errorf("convolution = %v", c)
	}
	if g.Err() != nil {
		t.Fatal(g.Err())
	}
}

// TestContractRefusals: each rule refuses what MPSGraph would, naming the
// primitive, and the first error sticks.
func TestContractRefusals(t *testing.T) {
	cases := []struct {
		name  string
		macOS Version
		build func(g *Graph)
		want  string
	}{
		{"broadcast", Version{15, 0}, func(g *Graph) { g.Addition(g.Placeholder([]int{2, 3}, Float32), g.Placeholder([]int{4}, Float32)) }, "do not broadcast"},
		{"mixed types", Version{15, 0}, func(g *Graph) { g.Addition(g.Placeholder([]int{2}, Float32), g.Placeholder([]int{2}, Int32)) }, "two types"},
		{"reshape count", Version{15, 0}, func(g *Graph) { g.Reshape(g.Placeholder([]int{2, 3}, Float32), []int{4}) }, "6 elements into 4"},
		{"int8 reduction", Version{15, 0}, func(g *Graph) { g.ReductionSum(g.Placeholder([]int{4}, Int8), []int{0}) }, "int8 is not a type reductionSum takes"},
		{"int64 reduction on 13.2", Version{13, 2}, func(g *Graph) { g.ReductionMaximum(g.Placeholder([]int{4}, Int64), []int{0}) }, "on macOS 13.2"},
		{"argSort before 13", Version{12, 3}, func(g *Graph) { g.ArgSort(g.Placeholder([]int{4}, Float32), 0) }, "needs macOS 13.0"},
		{"reverseSquareRoot from 15", Version{15, 0}, func(g *Graph) { g.ReverseSquareRoot(g.Placeholder([]int{4}, Float32)) }, "deprecated from macOS 15.0: use reciprocalSquareRootWithTensor:name:"},
		{"reciprocalSquareRoot before 15", Version{14, 6}, func(g *Graph) { g.ReciprocalSquareRoot(g.Placeholder([]int{4}, Float32)) }, "needs macOS 15.0"},
		{"int8 cumulativeSum", Version{15, 0}, func(g *Graph) { g.CumulativeSum(g.Placeholder([]int{4}, Int8), 0) }, "int8 is not a type cumulativeSum takes"},
		{"axes", Version{15, 0}, func(g *Graph) { g.Reverse(g.Placeholder([]int{4}, Float32), []int{1}) }, "axes [1]"},
		{"slice bounds", Version{15, 0}, func(g *Graph) { g.Slice(g.Placeholder([]int{4}, Float32), []int{2}, []int{5}, []int{1}) }, "[2:5:1] of 4"},
		{"integer matmul", Version{15, 0}, func(g *Graph) { g.MatMul(g.Placeholder([]int{2, 2}, Int32), g.Placeholder([]int{2, 2}, Int32)) }, "int32 is not a type"},
		{"logical on uint8", Version{15, 0}, func(g *Graph) { g.LogicalAND(g.Placeholder([]int{2}, UInt8), g.Placeholder([]int{2}, UInt8)) }, "uint8 is not a type logicalAND takes"},
		{"empty result", Version{15, 0}, func(g *Graph) { g.Fill(0, []int{3, 0}, Float32) }, "empty"},
		{"no concat operands", Version{15, 0}, func(g *Graph) { g.Concat(nil, 0) }, "no operands"},
		{"cast to nothing", Version{15, 0}, func(g *Graph) { g.Cast(g.Placeholder([]int{2}, Float32), Invalid) }, "no type"},
		// What MPSGraph raises an Objective-C exception for, which would
		// abort the process: refused before it reaches MPSGraph.
		{"rank 17", Version{15, 0}, func(g *Graph) { g.Placeholder(slices.Repeat([]int{1}, 17), Float32) }, "at most 16 dimensions"},
		{"reshape to rank 17", Version{15, 0}, func(g *Graph) { g.Reshape(g.Placeholder([]int{2}, Float32), append(slices.Repeat([]int{1}, 16), 2)) }, "rank 17"},
		{"2^31 elements", Version{15, 0}, func(g *Graph) { g.Fill(0, []int{1 << 16, 1 << 15}, Float32) }, "at most 2^31-1"},
	}
	for _, c := range cases {
		g := NewGraph(&recorder{}, c.macOS)
		c.build(g)
		if g.Err() == nil || !strings.Contains(g.Err().Error(), c.want) || !strings.HasPrefix(g.Err().Error(), "MPSGraph ") {
			t.Errorf("%s: error %v, want one containing %q", c.name, g.Err(), c.want)
		}
		first := g.Err()
		if x := g.Identity(g.Placeholder([]int{1}, Float32)); x.Valid() || g.Err() != first {
			t.Errorf("%s: a call after the error returned %v and error %v", c.name, x, g.Err())
		}
	}
}
