package fuzzrun

import (
	"encoding/binary"
	"errors"
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver/host"
	"github.com/metalplug/metalplug/backend/ir"
)

func region(t *testing.T, params []ir.TensorType, build func(b *ir.Builder, xs []ir.Value) []ir.Value) *ir.Program {
	t.Helper()
	b := ir.NewBuilder()
	xs := make([]ir.Value, len(params))
	for i, p := range params {
		xs[i] = b.Parameter(p)
	}
	p, err := b.Build(build(b, xs)...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var i32 = ir.TensorType{DType: ir.I32}

// countTo is while (i < n) i = i + step, nested in an outer loop of the
// same form when nested is set (which adds step after the inner loop);
// the result is i.
func countTo(t *testing.T, step int32, nested bool) *ir.Program {
	carried := []ir.TensorType{i32, i32}
	cond := region(t, carried, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Compare(ir.CmpLT, xs[0], xs[1])}
	})
	body := region(t, carried, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Binary(ir.OpAdd, xs[0], b.Scalar(ir.I32, float64(step))), xs[1]}
	})
	if nested {
		inner := body
		body = region(t, carried, func(b *ir.Builder, xs []ir.Value) []ir.Value {
			r := b.GetResult(b.While(cond, inner, xs...), 0)
			return []ir.Value{b.Binary(ir.OpAdd, r, b.Scalar(ir.I32, float64(step))), xs[1]}
		})
	}
	return region(t, carried, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.GetResult(b.While(cond, body, xs...), 0)}
	})
}

func runInts(t *testing.T, p *ir.Program, args ...int32) (int32, error) {
	t.Helper()
	data := make([]byte, 0, 4*len(args))
	for _, a := range args {
		data = binary.LittleEndian.AppendUint32(data, uint32(a))
	}
	d := host.New(host.Options{})
	exe, err := d.Compile(Fuel(p, 64))
	if err != nil {
		t.Fatal(err)
	}
	ptrs := make([]unsafe.Pointer, len(args))
	for i := range args {
		ptrs[i] = unsafe.Pointer(&data[4*i])
	}
	var out int32
	err = d.Run(exe, ptrs, []unsafe.Pointer{unsafe.Pointer(&out)})
	return out, err
}

// A loop of fewer trips than the fuel computes what it did without.
func TestFuelKeepsShortLoops(t *testing.T) {
	for _, n := range []int32{0, 1, 5, 64} {
		got, err := runInts(t, countTo(t, 1, false), 0, n)
		if err != nil || got != n {
			t.Errorf("counting to %d with fuel 64: %d, %v", n, got, err)
		}
	}
}

// A loop that never ends stops when its fuel does, nested or not.
func TestFuelStopsEndlessLoops(t *testing.T) {
	for _, nested := range []bool{false, true} {
		p := countTo(t, 0, nested) // a step of 0: i < n for ever
		if err := ir.Verify(Fuel(p, 64)); err != nil {
			t.Fatalf("nested %v: %v", nested, err)
		}
		if got, err := runInts(t, p, 0, 1); err != nil || got != 0 {
			t.Errorf("nested %v: %d, %v; want 0", nested, got, err)
		}
	}
}

func TestFuelLeavesProgramAlone(t *testing.T) {
	p := countTo(t, 1, true)
	before := p.String()
	_ = Fuel(p, 3)
	if p.String() != before {
		t.Error("Fuel modified its argument")
	}
}

func TestCost(t *testing.T) {
	f32 := func(s ...int) ir.TensorType { return ir.TensorType{DType: ir.F32, Shape: s} }
	dot := region(t, []ir.TensorType{f32(64, 64), f32(64, 64)}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.DotGeneral(xs[0], xs[1], ir.DotDims{LhsContract: []int{1}, RhsContract: []int{0}})}
	})
	if w, _ := Cost(dot, 1); w < 64*64*64 {
		t.Errorf("a 64x64 matrix product costs %g, want at least 64^3", w)
	}
	// The fuel multiplies what a loop's body costs, nested loops' twice.
	w1, _ := Cost(countTo(t, 1, true), 10)
	w2, _ := Cost(countTo(t, 1, true), 20)
	if w2 < 3*w1 {
		t.Errorf("nested loops cost %g with fuel 10 and %g with 20, want about 4 times as much", w1, w2)
	}
	// Dimensions a fuzzer made up do not wrap around.
	huge := &ir.Program{Params: []ir.TensorType{f32(1<<40, 1<<40, 1<<40)}}
	if _, largest := Cost(huge, 1); largest < 1e36 {
		t.Errorf("largest value %g elements, want 2^120", largest)
	}
}

func TestRunRefusesCostlyPrograms(t *testing.T) {
	p := region(t, []ir.TensorType{{DType: ir.F32, Shape: ir.Shape{1 << 24}}}, func(b *ir.Builder, xs []ir.Value) []ir.Value {
		return []ir.Value{b.Unary(ir.OpExp, xs[0])}
	})
	err := Run(t, host.New(host.Options{}), p, nil, Default)
	if !errors.Is(err, ErrTooCostly) {
		t.Errorf("a value of 2^24 elements: %v, want ErrTooCostly", err)
	}
}

func TestRunRunsEndlessLoop(t *testing.T) {
	if err := Run(t, host.New(host.Options{}), countTo(t, 0, true), []byte{0, 0, 0, 0, 1, 0, 0, 0}, Default); err != nil {
		t.Fatal(err)
	}
}
