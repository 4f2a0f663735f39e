package drivertest

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/hostcall"
	"github.com/metalplug/metalplug/backend/ir"
)

// testHostCall: a host function sees its operands and writes its results;
// calls run once each, in program order, a call whose results nothing
// uses included; a function's error fails the execution with its text.
func testHostCall(t *testing.T, h *harness) {
	var mu sync.Mutex
	var calls []uint64
	var seen [][]byte
	hostcall.Set(func(id uint64, args, results [][]byte) error {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, id)
		for _, a := range args {
			seen = append(seen, slices.Clone(a))
		}
		switch id {
		case 1: // doubles its float32 operand
			for k := 0; k < len(args[0]); k += 4 {
				v := math.Float32frombits(binary.LittleEndian.Uint32(args[0][k:]))
				binary.LittleEndian.PutUint32(results[0][k:], math.Float32bits(2*v))
			}
		case 3:
			return errors.New("ZeroDivisionError: the callback's own failure")
		}
		return nil
	})
	t.Cleanup(func() { hostcall.Set(nil) })

	x := h.gen(ir.F32, anyValue, 3)
	b := ir.NewBuilder()
	p0 := b.Parameter(x.T)
	first := b.HostCall(1, b.Constant(ir.TokenType, nil), []ir.Value{p0}, []ir.TensorType{x.T})
	tok := b.GetResult(first, 0)
	b.HostCall(2, tok, []ir.Value{p0, p0}, nil) // nothing uses it
	p, err := b.Build(b.Binary(ir.OpAdd, b.GetResult(first, 1), p0))
	if err != nil {
		t.Fatal(err)
	}
	got := h.run(t, p, x)[0]
	want := tensor{T: x.T, V: make([]float64, len(x.V))}
	for k, v := range x.V {
		want.V[k] = roundTo(ir.F32, 2*v+v)
	}
	compare(t, "the doubled operand plus itself", got, want)
	mu.Lock()
	if !slices.Equal(calls, []uint64{1, 2}) {
		t.Errorf("calls %v, want [1 2]: each once, in program order", calls)
	}
	xb := encodeTensor(x)
	if len(seen) != 3 || !slices.Equal(seen[0], xb) || !slices.Equal(seen[1], xb) || !slices.Equal(seen[2], xb) {
		t.Errorf("the functions saw %d operands, not the argument's bytes each time", len(seen))
	}
	mu.Unlock()
	h.checkReference(t, "the doubled operand plus itself", p, []tensor{x}, got)

	// A failing function fails the execution, and says why.
	fb := ir.NewBuilder()
	fp := fb.Parameter(x.T)
	failing := fb.HostCall(3, fb.Constant(ir.TokenType, nil), []ir.Value{fp}, []ir.TensorType{x.T})
	q, err := fb.Build(fb.GetResult(failing, 1))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := h.d.Compile(q)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	s, err := h.d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in, err := h.d.Allocate(x.T.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.d.Allocate(x.T.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	s.Execute(exe, []unsafe.Pointer{in}, []unsafe.Pointer{out})
	err = s.Synchronize()
	if err == nil || !strings.Contains(err.Error(), "ZeroDivisionError: the callback's own failure") {
		t.Errorf("a failing host function: execution error %v, want the function's own", err)
	}
	h.d.Free(in)
	h.d.Free(out)
}
