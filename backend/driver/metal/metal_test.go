package metal

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/drivertest"
	"github.com/metalplug/metalplug/backend/driver/host"
	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/split"
)

// open is the driver the tests run on: the Metal device on a Mac that has
// one, the model of MPSGraph anywhere else (or with METALPLUG_TEST_MODEL=1).
// METALPLUG_TEST_REQUIRE_GPU=1 (the Mac CI job) fails instead of falling
// back to the model.
func open(t testing.TB, opts Options) *Driver {
	t.Helper()
	if os.Getenv("METALPLUG_TEST_MODEL") != "1" {
		d, err := Open(opts)
		if err == nil {
			return d
		}
		if !errors.Is(err, ErrNoDevice) || os.Getenv("METALPLUG_TEST_REQUIRE_GPU") == "1" {
			t.Fatal(err)
		}
	}
	d, err := OpenModel(ModelOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestConformance runs the suite every driver passes, on the GPU on a Mac,
// on the model of MPSGraph elsewhere, through backend/split, which runs on
// the host what the driver does not lower (float64 among it: Apple GPUs
// have none). Parts run on the host must be
// there for a reason NotLowered or Fallbacks gives: a call that broke
// MPSGraph's contract (a lowering bug the model or the Mac caught) fails the
// test, though the host got the numbers right.
func TestConformance(t *testing.T) {
	first := open(t, Options{})
	t.Logf("on %s", first.Description())
	var mu sync.Mutex
	reasons := map[string]int{}
	drivertest.Run(t, func() driver.Driver {
		return &watched{Driver: split.New(open(t, Options{}), host.New(host.Options{}), split.Options{}), onHost: func(why string) {
			mu.Lock()
			reasons[why]++
			mu.Unlock()
		}}
	})
	n := 0
	for why, count := range reasons {
		n += count
		if strings.Contains(why, "contract") || strings.Contains(why, "panicked") {
			t.Errorf("%d programs ran parts on the host because %s", count, why)
		}
	}
	for why, count := range reasons {
		t.Logf("%d on the host: %s", count, why)
	}
	t.Logf("%d programs ran parts on the host, for %d reasons", n, len(reasons))
}

// watched reports each program the driver compiles with parts on the host.
type watched struct {
	*split.Driver
	onHost func(why string)
}

func (w *watched) Compile(p *ir.Program) (driver.Executable, error) {
	e, err := w.Driver.Compile(p)
	if err == nil {
		if on, why := e.(*split.Executable).OnHost(); on {
			w.onHost(strings.Join(why, "; "))
		}
	}
	return e, err
}

func TestOpTables(t *testing.T) {
	lowered := map[ir.Op]bool{}
	for _, op := range Lowered() {
		lowered[op] = true
	}
	for _, op := range ir.Ops() {
		_, listed := NotLowered[op]
		if lowered[op] == listed {
			t.Errorf("op %s: lowered %v, listed as not lowered %v: exactly one must hold", op, lowered[op], listed)
		}
	}
	for op, why := range Fallbacks {
		if !lowered[op] || why == "" {
			t.Errorf("Fallbacks names %s, which is not lowered or has no reason", op)
		}
	}
}

func addProgram(t *testing.T, d ir.DType, n int) *ir.Program {
	t.Helper()
	b := ir.NewBuilder()
	tt := ir.TensorType{DType: d, Shape: ir.Shape{n}}
	x, y := b.Parameter(tt), b.Parameter(tt)
	p, err := b.Build(b.Binary(ir.OpAdd, x, y))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// TestPointerKinds executes with arguments and a result at the start of an
// allocation, inside one (as TensorFlow's allocator carves them), and in
// host memory (as TensorFlow keeps int32 and host-memory tensors).
func TestPointerKinds(t *testing.T) {
	d := open(t, Options{})
	const n = 5
	exe, err := d.Compile(addProgram(t, ir.F32, n))
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base, err := d.Allocate(1 << 16)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(base)
	at := func(off int) unsafe.Pointer { return unsafe.Add(base, off) }
	if b, off, _, ok := d.Lookup(at(4100)); !ok || b != base || off != 4100 {
		t.Fatalf("Lookup of an interior pointer = %p, %d, %v", b, off, ok)
	}
	host := make([]float32, n)
	for i := range host {
		host[i] = float32(i) + 0.5
	}
	dev := unsafe.Slice((*float32)(base), 1<<14)
	for i := range n {
		dev[i] = float32(10 * i)     // offset 0
		dev[64+i] = float32(100 * i) // offset 256
	}
	cases := []struct {
		name string
		x, y unsafe.Pointer
		out  unsafe.Pointer
		want func(i int) float32
	}{
		{"base+interior->interior", at(0), at(256), at(1024), func(i int) float32 { return float32(110 * i) }},
		{"host+base->base", unsafe.Pointer(&host[0]), at(0), at(2048), func(i int) float32 { return float32(i) + 0.5 + float32(10*i) }},
	}
	for _, c := range cases {
		s.Execute(exe, []unsafe.Pointer{c.x, c.y}, []unsafe.Pointer{c.out})
		if err := s.Synchronize(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := f32s(unsafe.Slice((*byte)(c.out), 4*n))
		for i := range n {
			if got[i] != c.want(i) {
				t.Errorf("%s: element %d = %v, want %v", c.name, i, got[i], c.want(i))
			}
		}
	}
	var hostOut [n]float32
	s.Execute(exe, []unsafe.Pointer{at(0), at(256)}, []unsafe.Pointer{unsafe.Pointer(&hostOut[0])})
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if hostOut[i] != float32(110*i) {
			t.Errorf("host result element %d = %v, want %v", i, hostOut[i], 110*i)
		}
	}
}

// The Metal driver alone hands float64 to the host as planned work, to be
// said once: Apple GPUs have no float64.
func TestFloat64IsTheHosts(t *testing.T) {
	d := open(t, Options{})
	_, err := d.Compile(addProgram(t, ir.F64, 3))
	u, ok := driver.AsUnsupported(err)
	if !ok || !u.Planned || !u.Tell || !strings.Contains(u.Reason, "float64") {
		t.Errorf("Compile of a float64 program = %v, want a planned host part (said once) naming float64", err)
	}
}

// TestFallbackIsUnsupported checks that a case Fallbacks names is an
// Unsupported naming the instruction, which Place reports too.
func TestFallbackIsUnsupported(t *testing.T) {
	d := open(t, Options{})
	b := ir.NewBuilder()
	key := b.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{1}})
	ctr := b.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{2}})
	x := b.Rng(key, ctr, ir.RngNormal, ir.TensorType{DType: ir.F32, Shape: ir.Shape{8}})
	p, err := b.Build(b.Binary(ir.OpAdd, x, x))
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Compile(p)
	u, ok := driver.AsUnsupported(err)
	if !ok || p.Instrs[u.Instr].Op != ir.OpRng || u.Planned {
		t.Fatalf("Compile of a normal rng = %v, want an Unsupported naming the rng, not planned", err)
	}
	places, err := d.Place(p)
	if err != nil {
		t.Fatal(err)
	}
	for i, pl := range places {
		if (pl != nil) != (i == u.Instr) {
			t.Errorf("Place: instruction %d (%s) = %v", i, p.Instrs[i].Op, pl)
		}
	}
}

// TestOlderReleases runs the suite on models of older releases, where
// methods the newer ones have are missing (reinterpretCast before 13.2,
// int64 reductions before 13.3, binding at an offset and
// reciprocalSquareRoot before 15.0): the lowering must take its fallbacks and
// staging paths, not call what the release lacks.
func TestOlderReleases(t *testing.T) {
	for _, v := range []gpu.Version{{Major: 13, Minor: 0}, {Major: 14, Minor: 6}} {
		t.Run(v.String(), func(t *testing.T) {
			drivertest.Run(t, func() driver.Driver {
				d, err := OpenModel(ModelOptions{MacOS: v})
				if err != nil {
					t.Fatal(err)
				}
				return &watched{Driver: split.New(d, host.New(host.Options{}), split.Options{}), onHost: func(why string) {
					if strings.Contains(why, "contract") || strings.Contains(why, "panicked") {
						t.Errorf("on %v a program ran parts on the host because %s", v, why)
					}
				}}
			})
		})
	}
}

// TestTooOld: a release before MinimumMacOS is declined, naming both;
// Monterey among them, where uint8 (the driver's bool) is not native.
func TestTooOld(t *testing.T) {
	for _, v := range []gpu.Version{{Major: 12, Minor: 2}, {Major: 12, Minor: 7}} {
		_, err := OpenModel(ModelOptions{MacOS: v})
		if err == nil || !strings.Contains(err.Error(), v.String()) || !strings.Contains(err.Error(), "macOS 13.0") {
			t.Errorf("OpenModel on %v = %v, want a refusal naming it and macOS 13.0", v, err)
		}
	}
}
