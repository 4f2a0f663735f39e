package pjrt

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/host"
	"github.com/metalplug/metalplug/backend/ir"
	backing "github.com/metalplug/metalplug/plugin/device"
)

// testProgram is (x + y) * x and x > y, for x, y of f32[2,3], built by
// hand: what a Translator would make of a two-output jitted function.
func testProgram(t *testing.T) *ir.Program {
	t.Helper()
	b := ir.NewBuilder()
	f := ir.TensorType{DType: ir.F32, Shape: ir.Shape{2, 3}}
	x, y := b.Parameter(f), b.Parameter(f)
	p, err := b.Build(b.Binary(ir.OpMul, b.Binary(ir.OpAdd, x, y), x), b.Compare(ir.CmpGT, x, y))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// withTranslator sets the seam for one test, to tr with no unsigned
// parameters or results (nil: unset).
func withTranslator(t *testing.T, tr func(code []byte, format string) (*ir.Program, error)) {
	old := Translate
	Translate = nil
	if tr != nil {
		Translate = func(code []byte, format string) (*ir.Program, Marks, error) {
			p, err := tr(code, format)
			return p, Marks{}, err
		}
	}
	t.Cleanup(func() { Translate = old })
}

func TestCompileWithoutTranslator(t *testing.T) {
	withTranslator(t, nil)
	h := testClient(t)
	_, err := h.Compile([]byte("ML\xefR"), "mlir", options(1, 1, nil))
	if errorCode(err) != int(codeUnimplemented) || !strings.Contains(err.Error(), "metalplug: PJRT_Client_Compile: ") || !strings.Contains(err.Error(), "pjrt.Translate is unset") {
		t.Errorf("compile with the seam unset: %v; want UNIMPLEMENTED saying so", err)
	}
}

func TestCompileErrors(t *testing.T) {
	h := testClient(t)
	withTranslator(t, func(code []byte, format string) (*ir.Program, error) {
		switch string(code) {
		case "unsupported":
			return nil, fmt.Errorf("stablehlo.fft: %w", ErrUnsupported)
		case "broken":
			return nil, errors.New("bytecode: truncated section 4")
		}
		return testProgram(t), nil
	})
	for _, c := range []struct {
		code, want string
		options    []byte
		errCode    code
	}{
		{"unsupported", "stablehlo.fft: not supported by metalplug", options(1, 1, nil), codeUnimplemented},
		{"broken", `reading the "mlir" program: bytecode: truncated section 4`, options(1, 1, nil), codeInvalidArgument},
		{"ok", "No such compile option: 'invalid_key'", options(1, 1, map[string]pb{"invalid_key": pb(nil).bytes(1, []byte("v"))}), codeInvalidArgument},
		{"ok", "2 replicas", options(2, 1, nil), codeInvalidArgument},
		{"ok", "not a serialized xla.CompileOptionsProto", []byte{0x1a, 0x09}, codeInvalidArgument},
	} {
		_, err := h.Compile([]byte(c.code), "mlir", c.options)
		if errorCode(err) != int(c.errCode) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want code %d and %q", c.code, err, c.errCode, c.want)
		}
	}
}

// TestExecute compiles a hand-built program through PJRT_Client_Compile
// (with a test Translator), reads what jax reads of it, runs it through
// PJRT_LoadedExecutable_Execute and reads the results back.
func TestExecute(t *testing.T) {
	var gotCode []byte
	var gotFormat string
	withTranslator(t, func(code []byte, format string) (*ir.Program, error) {
		gotCode, gotFormat = code, format
		return testProgram(t), nil
	})
	for _, delay := range []time.Duration{0, 20 * time.Millisecond} {
		t.Run(fmt.Sprint("stream delay ", delay), func(t *testing.T) {
			var h *hClient
			if delay > 0 {
				h = delayedClient(t, delay)
			} else {
				h = testClient(t)
			}
			exe, err := h.Compile([]byte("program bytes"), "mlir", options(1, 1, map[string]pb{"xla_cpu_enable_fast_math": pb(nil).varint(fieldOverrideBool, 0)}))
			if err != nil {
				t.Fatal(err)
			}
			defer exe.Destroy()
			if string(gotCode) != "program bytes" || gotFormat != "mlir" {
				t.Errorf("the translator got %q, %q", gotCode, gotFormat)
			}
			name, n, types, dims, assignment, err := exe.Describe()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(name, "metalplug_") || n != 2 || !slices.Equal(types, []int{11, 1}) ||
				!slices.Equal(dims[0], []int64{2, 3}) || !slices.Equal(dims[1], []int64{2, 3}) {
				t.Errorf("name %q, %d outputs, types %v, dims %v", name, n, types, dims)
			}
			checkDeviceAssignment(t, assignment)

			xs, ys := newHostArray(f32s(1, 2, 3, 4, 5, 6)), newHostArray(f32s(6, 5, 4, 3, 2, 1))
			defer xs.Free()
			defer ys.Free()
			x, dx, err := h.Put(xs, 0, 11, []int64{2, 3}, nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			y, dy, err := h.Put(ys, 0, 11, []int64{2, 3}, nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			outs, done, err := exe.Execute([]*hBuffer{x, y}, 2)
			if err != nil {
				t.Fatal(err)
			}
			if delay > 0 {
				if ok, _ := done.Ready(); ok {
					t.Error("the execution's event is ready before the delayed stream ran it")
				}
			}
			if err := done.Await(); err != nil {
				t.Fatal(err)
			}
			got, err := outs[0].Get(nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := f32s(7, 14, 21, 28, 35, 42); !bytes.Equal(got, want) {
				t.Errorf("(x+y)*x = %v", got)
			}
			gt, err := outs[1].Get(nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := []byte{0, 0, 0, 1, 1, 1}; !bytes.Equal(gt, want) {
				t.Errorf("x > y = %v", gt)
			}
			// Inputs are never written, donated or not.
			if got, _ := x.Get(nil); !bytes.Equal(got, f32s(1, 2, 3, 4, 5, 6)) {
				t.Errorf("x was written: %v", got)
			}
			for _, e := range []*hEvent{dx, dy, done} {
				e.Destroy()
			}
			for _, b := range append(outs, x, y) {
				b.Destroy()
			}
		})
	}
}

// checkDeviceAssignment parses the DeviceAssignmentProto we hand out.
func checkDeviceAssignment(t *testing.T, data []byte) {
	t.Helper()
	var replicas, computations uint64
	var devices [][]byte
	err := eachField(data, func(num, wire int, v []byte, n uint64) error {
		switch num {
		case 1:
			replicas = n
		case 2:
			computations = n
		case 3:
			devices = append(devices, v)
		}
		return nil
	})
	if err != nil || replicas != 1 || computations != 1 || len(devices) != 1 || !bytes.Equal(devices[0], []byte{0x0a, 0x01, 0x00}) {
		t.Errorf("device assignment %x: replicas %d, computations %d, devices %x, %v", data, replicas, computations, devices, err)
	}
}

func TestExecuteChecksArguments(t *testing.T) {
	withTranslator(t, func([]byte, string) (*ir.Program, error) { return testProgram(t), nil })
	h := testClient(t)
	exe, err := h.Compile(nil, "mlir", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Destroy()
	host := newHostArray(make([]byte, 24))
	defer host.Free()
	good, _, _ := h.Put(host, 0, 11, []int64{2, 3}, nil, 0)
	wrong, _, _ := h.Put(host, 0, 4, []int64{2, 3}, nil, 0)
	defer good.Destroy()
	defer wrong.Destroy()
	if _, _, err := exe.Execute([]*hBuffer{good}, 2); errorCode(err) != int(codeInvalidArgument) || !strings.Contains(err.Error(), "1 arguments for a program of 2 parameters") {
		t.Errorf("too few arguments: %v", err)
	}
	if _, _, err := exe.Execute([]*hBuffer{good, wrong}, 2); errorCode(err) != int(codeInvalidArgument) || !strings.Contains(err.Error(), "argument 1 is s32[2,3]; the program's parameter 1 is f32[2,3]") {
		t.Errorf("a wrong type: %v", err)
	}
	gone, _, _ := h.Put(host, 0, 11, []int64{2, 3}, nil, 0)
	gone.Delete()
	defer gone.Destroy()
	if _, _, err := exe.Execute([]*hBuffer{good, gone}, 2); errorCode(err) != int(codeInvalidArgument) || !strings.Contains(err.Error(), "argument 1: buffer f32[2,3] has been deleted") {
		t.Errorf("a deleted argument: %v", err)
	}
}

// faultyDriver is the host driver with a switch that makes the next
// execution fail on the stream, as a program that faults would.
type faultyDriver struct {
	*host.Driver
	failNext atomic.Bool
}

func (d *faultyDriver) NewStream() (driver.Stream, error) {
	s, err := d.Driver.NewStream()
	return &faultyStream{s, d}, err
}

type faultyStream struct {
	driver.Stream
	d *faultyDriver
}

func (s *faultyStream) Execute(exe driver.Executable, args, results []unsafe.Pointer) {
	if s.d.failNext.Swap(false) {
		s.HostCallback(func() error { return errors.New("injected fault") })
		return
	}
	s.Stream.Execute(exe, args, results)
}

// TestStreamFailure: an execution that fails on the stream fails its
// event and its results (never written), not the client: later work runs
// on a new stream, and buffers written before the failure stay readable.
func TestStreamFailure(t *testing.T) {
	withTranslator(t, func([]byte, string) (*ir.Program, error) { return testProgram(t), nil })
	d := &faultyDriver{Driver: host.New(host.Options{})}
	c, err := newClientOn(d, deviceKind(backing.Host))
	if err != nil {
		t.Fatal(err)
	}
	h := wrapClient(c)
	defer h.Destroy()
	exe, err := h.Compile(nil, "mlir", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Destroy()
	xs := newHostArray(f32s(1, 2, 3, 4, 5, 6))
	defer xs.Free()
	x, dx, _ := h.Put(xs, 0, 11, []int64{2, 3}, nil, 1)
	dx.Await()
	dx.Destroy()
	defer x.Destroy()

	d.failNext.Store(true)
	outs, done, err := exe.Execute([]*hBuffer{x, x}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := done.Await(); err == nil || !strings.Contains(err.Error(), "injected fault") {
		t.Errorf("the failed execution's event: %v", err)
	}
	done.Destroy()
	if _, err := outs[0].Get(nil); err == nil || !strings.Contains(err.Error(), "was never written") || !strings.Contains(err.Error(), "injected fault") {
		t.Errorf("reading a result of the failed execution: %v", err)
	}
	if _, _, err := exe.Execute([]*hBuffer{outs[0], x}, 2); err == nil || !strings.Contains(err.Error(), "argument 0: buffer f32[2,3] was never written") {
		t.Errorf("running on a result of the failed execution: %v", err)
	}
	for _, b := range outs {
		b.Destroy()
	}

	outs, done, err = exe.Execute([]*hBuffer{x, x}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := done.Await(); err != nil {
		t.Fatalf("after a failure, the next execution: %v", err)
	}
	done.Destroy()
	if got, err := outs[0].Get(nil); err != nil || !bytes.Equal(got, f32s(2, 8, 18, 32, 50, 72)) {
		t.Errorf("after a failure, (x+x)*x = %v, %v", got, err)
	}
	for _, b := range outs {
		b.Destroy()
	}
}

// TestExecuteWithoutResults: a program with no results (jax compiles them
// when differentiation or remat leaves a jitted function nothing to
// return) compiles to an executable of no outputs that checks its
// arguments and runs nothing.
func TestExecuteWithoutResults(t *testing.T) {
	withTranslator(t, func([]byte, string) (*ir.Program, error) {
		return &ir.Program{Params: []ir.TensorType{{DType: ir.F32, Shape: ir.Shape{2, 3}}}}, nil
	})
	h := testClient(t)
	exe, err := h.Compile(nil, "mlir", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Destroy()
	if _, outputs, _, _, _, err := exe.Describe(); err != nil || outputs != 0 {
		t.Fatalf("%d outputs, %v", outputs, err)
	}
	host := newHostArray(make([]byte, 24))
	defer host.Free()
	x, _, _ := h.Put(host, 0, 11, []int64{2, 3}, nil, 0)
	defer x.Destroy()
	outs, done, err := exe.Execute([]*hBuffer{x}, 0)
	if err != nil || len(outs) != 0 {
		t.Fatalf("outputs %v, %v", outs, err)
	}
	if err := done.Await(); err != nil {
		t.Errorf("done: %v", err)
	}
	done.Destroy()
	x.Delete()
	if _, _, err := exe.Execute([]*hBuffer{x}, 0); errorCode(err) != int(codeInvalidArgument) || !strings.Contains(err.Error(), "has been deleted") {
		t.Errorf("a deleted argument: %v", err)
	}
}

// TestUnsignedParametersAndResults: a parameter or result the translation
// marks unsigned (ui16 or ui64, int16 or int64 bits to the IR) takes and
// gives buffers of the unsigned element type, with the same bits.
func TestUnsignedParametersAndResults(t *testing.T) {
	const s16, u16 = 3, 7 // PJRT_Buffer_Types
	old := Translate
	t.Cleanup(func() { Translate = old })
	Translate = func([]byte, string) (*ir.Program, Marks, error) {
		b := ir.NewBuilder()
		x := b.Parameter(ir.TensorType{DType: ir.I16, Shape: ir.Shape{3}})
		p, err := b.Build(b.Binary(ir.OpAdd, x, x), x)
		return p, Marks{Params: []bufType{u16}, Results: []bufType{u16}}, err
	}
	h := testClient(t)
	exe, err := h.Compile(nil, "mlir", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Destroy()
	if _, _, types, _, _, err := exe.Describe(); err != nil || len(types) != 2 || types[0] != u16 || types[1] != s16 {
		t.Fatalf("output types %v, %v", types, err)
	}
	host := newHostArray([]byte{0xff, 0xff, 1, 0, 0, 0x80})
	defer host.Free()
	signed, _, _ := h.Put(host, 0, s16, []int64{3}, nil, 0)
	defer signed.Destroy()
	if _, _, err := exe.Execute([]*hBuffer{signed}, 2); errorCode(err) != int(codeInvalidArgument) || !strings.Contains(err.Error(), "argument 0 is s16[3]; the program's parameter 0 is u16[3]") {
		t.Errorf("an s16 argument for a u16 parameter: %v", err)
	}
	x, _, _ := h.Put(host, 0, u16, []int64{3}, nil, 0)
	defer x.Destroy()
	outs, done, err := exe.Execute([]*hBuffer{x}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer done.Destroy()
	for _, o := range outs {
		defer o.Destroy()
	}
	got, err := outs[0].Get(nil)
	if _, typ, _ := outs[0].Dims(); err != nil || typ != u16 || !bytes.Equal(got, []byte{0xfe, 0xff, 2, 0, 0, 0}) {
		t.Errorf("x + x of u16 [65535 1 32768] is %v %x, %v", typ, got, err)
	}
}

// TestDonatedArgumentsAreConsumed: a parameter the translation marks
// donated (jit's donate_argnums) has its buffer deleted by the execution,
// unless the call lists it as not donatable; the same buffer donated and
// passed again is refused, as XLA refuses it, and stays usable.
func TestDonatedArgumentsAreConsumed(t *testing.T) {
	const f32 = 11 // a PJRT_Buffer_Type
	old := Translate
	t.Cleanup(func() { Translate = old })
	Translate = func([]byte, string) (*ir.Program, Marks, error) {
		b := ir.NewBuilder()
		x := b.Parameter(ir.TensorType{DType: ir.F32, Shape: ir.Shape{2}})
		y := b.Parameter(ir.TensorType{DType: ir.F32, Shape: ir.Shape{2}})
		p, err := b.Build(b.Binary(ir.OpAdd, x, y))
		return p, Marks{Donated: []bool{true, false}}, err
	}
	h := testClient(t)
	exe, err := h.Compile(nil, "mlir", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Destroy()
	host := newHostArray([]byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}) // 1, 2
	defer host.Free()
	put := func() *hBuffer {
		b, _, err := h.Put(host, 0, f32, []int64{2}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	run := func(keep []int64, args ...*hBuffer) error {
		outs, done, err := exe.Execute(args, 1, keep...)
		if err != nil {
			return err
		}
		defer done.Destroy()
		defer outs[0].Destroy()
		got, err := outs[0].Get(nil)
		if !bytes.Equal(got, []byte{0, 0, 0, 0x40, 0, 0, 0x80, 0x40}) { // 2, 4
			t.Errorf("x + y is %x, %v", got, err)
		}
		return nil
	}
	x, y := put(), put()
	defer x.Destroy()
	defer y.Destroy()
	if err := run(nil, x, y); err != nil {
		t.Fatal(err)
	}
	if del, _ := x.IsDeleted(); !del {
		t.Error("the donated argument is not deleted after the execution")
	}
	if del, _ := y.IsDeleted(); del {
		t.Error("the argument not donated was deleted")
	}
	kept := put()
	defer kept.Destroy()
	if err := run([]int64{0}, kept, y); err != nil {
		t.Fatal(err)
	}
	if del, _ := kept.IsDeleted(); del {
		t.Error("an argument the call lists as not donatable was deleted")
	}
	if err := run(nil, y, y); errorCode(err) != int(codeInvalidArgument) || !strings.Contains(err.Error(), "Attempt to donate the same buffer twice") {
		t.Errorf("f(donate(y), y): %v", err)
	}
	if del, _ := y.IsDeleted(); del {
		t.Error("a refused execution deleted its argument")
	}
}
