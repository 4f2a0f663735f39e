package split_test

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/drivertest"
	"github.com/metalplug/metalplug/backend/driver/host"
	"github.com/metalplug/metalplug/backend/driver/metal"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/split"
	"github.com/metalplug/metalplug/backend/stats"
)

func newSplit(t *testing.T, opts split.Options) *split.Driver {
	t.Helper()
	m, err := metal.OpenModel(metal.ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return split.New(m, host.New(host.Options{}), opts)
}

// run executes p on d with args, returning each result's bytes.
func run(t *testing.T, d driver.Driver, p *ir.Program, args ...[]byte) [][]byte {
	t.Helper()
	return drivertest.RunBytes(t, d, p, args...)
}

func f32(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func floats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// same runs p split on the model and whole on the host driver, and
// requires the same results (to float32 rounding: MPSGraph's arithmetic is
// not the host's), returning the split executable.
func same(t *testing.T, d *split.Driver, p *ir.Program, args ...[]byte) *split.Executable {
	t.Helper()
	got := run(t, d, p, args...)
	want := run(t, host.New(host.Options{}), p, args...)
	for r := range want {
		if p.ResultTypes()[r].DType != ir.F32 {
			if string(got[r]) != string(want[r]) {
				t.Errorf("result %d = %v, want %v", r, got[r], want[r])
			}
			continue
		}
		g, w := floats(got[r]), floats(want[r])
		for k := range w {
			if d := math.Abs(float64(g[k] - w[k])); d > 1e-5*math.Max(1, math.Abs(float64(w[k]))) {
				t.Errorf("result %d element %d = %v, want %v", r, k, g[k], w[k])
			}
		}
	}
	exe, err := d.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	return exe.(*split.Executable)
}

func wheres(e *split.Executable) string {
	var w []string
	for _, s := range e.Segments() {
		w = append(w, s.Where)
	}
	return strings.Join(w, ",")
}

var mat = ir.TensorType{DType: ir.F32, Shape: ir.Shape{3, 3}}

// spd builds x x^T + 3I, a matrix Cholesky takes.
func spd(b *ir.Builder, x ir.Value) ir.Value {
	xxt := b.DotGeneral(x, x, ir.DotDims{LhsContract: []int{1}, RhsContract: []int{1}})
	eye := b.Constant(mat, f32(3, 0, 0, 0, 3, 0, 0, 0, 3))
	return b.Binary(ir.OpAdd, xxt, eye)
}

var xArg = f32(1, 2, 0, -1, 0.5, 2, 0, 1, 1)

// keepCuts turns off the moving of small device parts to the host, for
// tests of the cutting itself, whose programs are small.
var keepCuts = split.Options{SmallWork: -1}

// A decomposition between device work: three parts, the host's in the
// middle, with the numbers of the whole program on the host.
func TestDeviceHostDevice(t *testing.T) {
	d := newSplit(t, keepCuts)
	b := ir.NewBuilder()
	x := b.Parameter(mat)
	l := b.Cholesky(spd(b, x), true)
	y := b.Binary(ir.OpMul, l, b.Unary(ir.OpExp, x))
	p, err := b.Build(y, b.Reduce(y, ir.ReduceSum, []int{0, 1}))
	if err != nil {
		t.Fatal(err)
	}
	e := same(t, d, p, xArg)
	if got := wheres(e); got != "device,host,device" {
		t.Errorf("segments %s, want device,host,device", got)
	}
	segs := e.Segments()
	if !strings.Contains(segs[1].Reason, "cholesky") || segs[1].Ops[0] != "cholesky" {
		t.Errorf("the host part says %+v, want cholesky and why", segs[1])
	}
}

// Host work that depends on nothing recent is hoisted, and device work on
// either side of it merges: program order alternates four times, the
// schedule has two parts.
func TestFewestBoundaries(t *testing.T) {
	d := newSplit(t, keepCuts)
	b := ir.NewBuilder()
	x := b.Parameter(mat)
	a := b.Unary(ir.OpExp, x)
	c1 := b.Cholesky(spd(b, x), true) // needs only x
	a2 := b.Binary(ir.OpAdd, a, a)
	c2 := b.Cholesky(spd(b, b.Unary(ir.OpNeg, x)), true) // device then host
	out := b.Binary(ir.OpAdd, b.Binary(ir.OpAdd, a2, c1), c2)
	p, err := b.Build(out)
	if err != nil {
		t.Fatal(err)
	}
	e := same(t, d, p, xArg)
	if got := wheres(e); got != "device,host,device" {
		t.Errorf("segments %s, want device,host,device (the program's own order would cut it into 5)", got)
	}
}

// Results that no part computes (a parameter, a constant), a value
// returned twice, and a host result read by a device part.
func TestResultsOfEveryKind(t *testing.T) {
	d := newSplit(t, split.Options{})
	b := ir.NewBuilder()
	x := b.Parameter(mat)
	l := b.Cholesky(spd(b, x), true)
	k := b.Constant(ir.TensorType{DType: ir.I32, Shape: ir.Shape{2}}, []byte{7, 0, 0, 0, 9, 0, 0, 0})
	y := b.Unary(ir.OpNeg, l)
	p, err := b.Build(x, k, l, y, l, y)
	if err != nil {
		t.Fatal(err)
	}
	same(t, d, p, xArg)
}

// countdown is while (n > 0) { n -= 1; acc = acc*1.5 + x }: a trip count
// only the data know.
func countdown(t *testing.T, withHost bool) *ir.Program {
	t.Helper()
	i32 := ir.TensorType{DType: ir.I32}
	cb := ir.NewBuilder()
	n := cb.Parameter(i32)
	cb.Parameter(mat)
	cb.Parameter(mat)
	cond, err := cb.Build(cb.Compare(ir.CmpGT, n, cb.Scalar(ir.I32, 0)))
	if err != nil {
		t.Fatal(err)
	}
	bb := ir.NewBuilder()
	n = bb.Parameter(i32)
	acc := bb.Parameter(mat)
	x := bb.Parameter(mat)
	next := bb.Binary(ir.OpAdd, bb.Binary(ir.OpMul, acc, bb.Full(mat, 1.5)), x)
	if withHost {
		next = bb.Binary(ir.OpAdd, next, bb.Cholesky(spd(bb, x), true))
	}
	body, err := bb.Build(bb.Binary(ir.OpSub, n, bb.Scalar(ir.I32, 1)), next, x)
	if err != nil {
		t.Fatal(err)
	}
	b := ir.NewBuilder()
	trips := b.Parameter(i32)
	x = b.Parameter(mat)
	w := b.While(cond, body, trips, b.Full(mat, 0), x)
	p, err := b.Build(b.Unary(ir.OpExp, b.Unary(ir.OpNeg, b.GetResult(w, 1))))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func i32(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }

// A data-dependent while whose body the device runs is driven from the
// host, one wait per iteration to read the condition; with a host op in
// the body the body is itself split.
func TestHostDrivenLoop(t *testing.T) {
	for _, withHost := range []bool{false, true} {
		d := newSplit(t, split.Options{})
		p := countdown(t, withHost)
		for _, trips := range []int32{0, 1, 5} {
			before := stats.Other.Snapshot()
			e := same(t, d, p, i32(trips), xArg)
			if got := wheres(e); !strings.Contains(got, "loop") {
				t.Errorf("withHost %v: segments %s, want a loop", withHost, got)
			}
			// same runs the program once on d (then once on the host driver).
			delta := stats.Other.Snapshot().Sub(before)
			if delta.Waits < int64(trips)+1 {
				t.Errorf("withHost %v, %d trips: %d waits counted, want at least one per condition read (%d)", withHost, trips, delta.Waits, trips+1)
			}
			if withHost && delta.HostSegments < int64(trips) {
				t.Errorf("%d trips with a host op in the body: %d host parts counted", trips, delta.HostSegments)
			}
		}
	}
}

// NoHostPart refuses a program with a host part, naming the op;
// PlannedOnly takes a decomposition but not an op that lacks a lowering.
func TestHostPolicy(t *testing.T) {
	b := ir.NewBuilder()
	x := b.Parameter(mat)
	chol, err := b.Build(b.Unary(ir.OpNeg, b.Cholesky(spd(b, x), true)))
	if err != nil {
		t.Fatal(err)
	}
	b = ir.NewBuilder()
	key := b.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{1}})
	ctr := b.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{2}})
	rng, err := b.Build(b.Unary(ir.OpNeg, b.Rng(key, ctr, ir.RngNormal, mat)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		policy   split.HostPolicy
		p        *ir.Program
		op, want string // want: "" when it compiles
	}{
		{split.NoHostPart, chol, "cholesky", "METALPLUG_NO_CPU_FALLBACK=1"},
		{split.PlannedOnly, chol, "cholesky", ""},
		{split.PlannedOnly, rng, "rng", "METALPLUG_NO_CPU_FALLBACK=unplanned"},
		{split.AnyHostPart, rng, "rng", ""},
	} {
		_, err := newSplit(t, split.Options{Host: c.policy}).Compile(c.p)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("policy %d, %s: %v", c.policy, c.op, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.op) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("policy %d, %s: Compile = %v, want a refusal naming %s and %s", c.policy, c.op, err, c.op, c.want)
		}
	}
}

// An op that leaves the GPU for want of a lowering is said once; a
// decomposition, whose home is the host, is not.
func TestWarnOnce(t *testing.T) {
	var said []string
	d := newSplit(t, split.Options{Warn: func(s string) { said = append(said, s) }})
	for range 2 {
		b := ir.NewBuilder()
		key := b.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{1}})
		ctr := b.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{2}})
		x := b.Parameter(mat)
		b.SetLoc("jit(f)/normal at model.py:3:4")
		r := b.Rng(key, ctr, ir.RngNormal, mat)
		b.SetLoc("")
		p, err := b.Build(b.Binary(ir.OpAdd, r, b.Cholesky(spd(b, x), true)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Compile(p); err != nil {
			t.Fatal(err)
		}
		b2 := ir.NewBuilder() // another program, the same reason
		key = b2.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{1}})
		ctr = b2.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{2}})
		p2, err := b2.Build(b2.Unary(ir.OpNeg, b2.Rng(key, ctr, ir.RngNormal, mat)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Compile(p2); err != nil {
			t.Fatal(err)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "rng") || !strings.Contains(said[0], "model.py:3:4") {
		t.Errorf("warnings %q, want one naming rng and its source line", said)
	}
}

// The counters of a frontend's view: one execution, its device parts, its
// host part and the wait before it, and one compile however often the
// program is compiled.
func TestCounters(t *testing.T) {
	c := &stats.Counters{}
	d := newSplit(t, keepCuts).For(c)
	b := ir.NewBuilder()
	x := b.Parameter(mat)
	p, err := b.Build(b.Unary(ir.OpNeg, b.Cholesky(spd(b, x), true)))
	if err != nil {
		t.Fatal(err)
	}
	run(t, d, p, xArg)
	run(t, d, p, xArg)
	got := c.Snapshot()
	want := stats.Figures{Executions: 2, Compiles: 1, DeviceExecutions: 4, HostSegments: 2, Waits: 4}
	if got.Executions != want.Executions || got.Compiles != want.Compiles || got.DeviceExecutions != want.DeviceExecutions ||
		got.HostSegments != want.HostSegments || got.Waits != want.Waits {
		t.Errorf("counters %+v, want %+v", got, want)
	}
	if len(got.HostReasons) != 1 {
		t.Errorf("host reasons %v, want cholesky's", got.HostReasons)
	}
}

// counted is fori_loop(0, n, acc = acc*0.999 + x) over matrices of t: a
// trip count known at compile time.
func counted(t *testing.T, n int, m ir.TensorType) *ir.Program {
	t.Helper()
	i32 := ir.TensorType{DType: ir.I32}
	cb := ir.NewBuilder()
	k := cb.Parameter(i32)
	cb.Parameter(m)
	cb.Parameter(m)
	cond, err := cb.Build(cb.Compare(ir.CmpLT, k, cb.Scalar(ir.I32, float64(n))))
	if err != nil {
		t.Fatal(err)
	}
	bb := ir.NewBuilder()
	k = bb.Parameter(i32)
	acc := bb.Parameter(m)
	x := bb.Parameter(m)
	next := bb.Binary(ir.OpAdd, bb.Binary(ir.OpMul, acc, bb.Full(m, 0.999)), x)
	body, err := bb.Build(bb.Binary(ir.OpAdd, k, bb.Scalar(ir.I32, 1)), next, x)
	if err != nil {
		t.Fatal(err)
	}
	b := ir.NewBuilder()
	x = b.Parameter(m)
	w := b.While(cond, body, b.Scalar(ir.I32, 0), b.Full(m, 0), x)
	p, err := b.Build(b.GetResult(w, 1))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A loop of known trip count is unrolled into the one graph while it fits
// UnrollBudget; beyond it, a loop over a large body is replayed (its body
// enqueued once per trip, with no wait) and one over a small body runs on
// the host, cheaper than a dispatch per trip.
func TestCountedLoops(t *testing.T) {
	d := newSplit(t, split.Options{})
	e := same(t, d, counted(t, 5, mat), xArg)
	if got := wheres(e); got != "device" {
		t.Errorf("5 trips: segments %s, want one device part (unrolled)", got)
	}
	e = same(t, d, counted(t, 4000, mat), xArg)
	if segs := e.Segments(); len(segs) != 1 || segs[0].Where != "host" || !strings.Contains(segs[0].Reason, "4000 trips over a small body") {
		t.Errorf("4000 trips over 3x3: segments %v, want the host's, saying why", segs)
	}
	// With a smaller idea of small, the 3x3 body counts as large.
	d = newSplit(t, split.Options{SmallWork: 4})
	before := stats.Other.Snapshot()
	e = same(t, d, counted(t, 4000, mat), xArg)
	delta := stats.Other.Snapshot().Sub(before)
	var loops, devices int
	for _, s := range e.Segments() {
		switch {
		case s.Where == "loop" && s.Trips == 4000:
			loops++
		case s.Where == "device":
			devices++
		}
	}
	if loops != 1 {
		t.Fatalf("4000 trips over a large body: segments %v, want a loop of 4000 trips", e.Segments())
	}
	if delta.DeviceExecutions != int64(4000+devices) || delta.Waits != 1 {
		t.Errorf("4000 trips replayed: %d device executions and %d waits, want %d and the final one", delta.DeviceExecutions, delta.Waits, 4000+devices)
	}
}

func splitNew(dev driver.Driver) *split.Driver {
	return split.New(dev, host.New(host.Options{}), keepCuts)
}

// A small device part between host parts, or at either end beside one,
// moves to the host; a large one stays.
func TestSmallPartsJoinTheHost(t *testing.T) {
	build := func(n int) *ir.Program {
		typ := ir.TensorType{DType: ir.F32, Shape: ir.Shape{n}}
		b := ir.NewBuilder()
		key := b.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{1}})
		ctr := b.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{2}})
		x := b.Parameter(typ)
		y := b.Binary(ir.OpMul, b.Unary(ir.OpExp, x), b.Rng(key, ctr, ir.RngNormal, typ)) // device, host
		z := b.Binary(ir.OpAdd, y, b.Rng(key, ctr, ir.RngTruncatedNormal, typ))           // host
		p, err := b.Build(b.Unary(ir.OpTanh, z))                                          // device
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	d := newSplit(t, split.Options{})
	key := make([]byte, 8)
	ctr := make([]byte, 16)
	small := same(t, d, build(8), key, ctr, f32(1, 2, 3, 4, 5, 6, 7, 8))
	if got := wheres(small); got != "host" {
		t.Errorf("8 elements: parts %s, want the host's alone", got)
	}
	big := make([]float32, 1<<17)
	large, err := d.Compile(build(len(big)))
	if err != nil {
		t.Fatal(err)
	}
	if got := wheres(large.(*split.Executable)); got != "host,device" {
		t.Errorf("%d elements: parts %s, want host,device (the large part stays on the device)", len(big), got)
	}
}

// A scatter whose index vector has no components (jax's x.at[()].set(y)
// of a whole array, inside its generic LU) updates one window at the
// origin: its indices are empty and its updates are not, so it is no
// "nothing to scatter" case (the Metal lowering once returned the operand
// for it, and every complex LU came out unpivoted).
func TestScatterWithAnEmptyIndexVector(t *testing.T) {
	d := newSplit(t, split.Options{})
	vec := ir.TensorType{DType: ir.I32, Shape: ir.Shape{4}}
	b := ir.NewBuilder()
	x := b.Parameter(vec)
	u := b.Parameter(vec)
	idx := b.Constant(ir.TensorType{DType: ir.I32, Shape: ir.Shape{0}}, nil)
	y := b.Scatter(x, idx, u, ir.ScatterDims{UpdateWindowDims: []int{0}, IndexVectorDim: 0, Kind: ir.ScatterReplace})
	p, err := b.Build(y)
	if err != nil {
		t.Fatal(err)
	}
	args := [][]byte{i32s(0, 0, 0, 0), i32s(3, 1, 2, 3)}
	got := run(t, d, p, args...)[0]
	if want := i32s(3, 1, 2, 3); string(got) != string(want) {
		t.Errorf("scatter = % x, want % x", got, want)
	}
}

func i32s(vs ...int32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// Under PlannedOnly, a case with a decomposition in a branch runs on the
// host (its regions need it only for ops whose home is the host), and a
// refusal names only the parts there for want of a lowering.
func TestPlannedOnlyCases(t *testing.T) {
	d := newSplit(t, split.Options{Host: split.PlannedOnly})
	branch := func(chol bool) *ir.Program {
		b := ir.NewBuilder()
		x := b.Parameter(mat)
		y := b.Unary(ir.OpNeg, x)
		if chol {
			y = b.Cholesky(spd(b, x), true)
		}
		p, err := b.Build(y)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	b := ir.NewBuilder()
	i := b.Parameter(ir.TensorType{DType: ir.I32})
	x := b.Parameter(mat)
	p, err := b.Build(b.GetResult(b.Case(i, []*ir.Program{branch(false), branch(true)}, x), 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Compile(p); err != nil {
		t.Errorf("a case with a Cholesky in a branch: %v", err)
	}
	b = ir.NewBuilder()
	key := b.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{1}})
	ctr := b.Parameter(ir.TensorType{DType: ir.I64, Shape: ir.Shape{2}})
	x = b.Parameter(mat)
	p, err = b.Build(b.Binary(ir.OpAdd, b.Rng(key, ctr, ir.RngNormal, mat), b.Cholesky(spd(b, x), true)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Compile(p)
	if err == nil || !strings.Contains(err.Error(), "rng") || strings.Contains(err.Error(), "cholesky") {
		t.Errorf("Compile = %v, want a refusal naming rng and not cholesky", err)
	}
}

// The whole-window form of that scatter runs on the device, each kind.
func TestScatterWithAnEmptyIndexVectorOnTheDevice(t *testing.T) {
	d := newSplit(t, keepCuts)
	vec := ir.TensorType{DType: ir.I32, Shape: ir.Shape{4}}
	for kind, want := range map[ir.ScatterKind][]int32{
		ir.ScatterReplace: {3, 1, 2, 3}, ir.ScatterAdd: {4, 3, 5, 7}, ir.ScatterMax: {3, 2, 3, 4},
	} {
		b := ir.NewBuilder()
		x := b.Parameter(vec)
		u := b.Parameter(vec)
		idx := b.Constant(ir.TensorType{DType: ir.I32, Shape: ir.Shape{0}}, nil)
		p, err := b.Build(b.Scatter(x, idx, u, ir.ScatterDims{UpdateWindowDims: []int{0}, IndexVectorDim: 0, Kind: kind}))
		if err != nil {
			t.Fatal(err)
		}
		e := same(t, d, p, i32s(1, 2, 3, 4), i32s(3, 1, 2, 3))
		if got := run(t, d, p, i32s(1, 2, 3, 4), i32s(3, 1, 2, 3))[0]; string(got) != string(i32s(want...)) {
			t.Errorf("kind %v: % x, want %v", kind, got, want)
		}
		if w := wheres(e); w != "device" {
			t.Errorf("kind %v: parts %s, want the device's", kind, w)
		}
	}
}

func f64(vs ...float64) []byte {
	b := make([]byte, 8*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return b
}

// Apple GPUs have no float64: a program's float64 part runs on the host,
// in float64 (1+2^-40 survives, which float32 would round away), beside
// its float32 work on the device; it is allowed where only the host's
// planned parts are (METALPLUG_NO_CPU_FALLBACK=unplanned) and said once.
func TestFloat64RunsOnTheHost(t *testing.T) {
	var said []string
	d := newSplit(t, split.Options{Host: split.PlannedOnly, SmallWork: -1, Warn: func(s string) { said = append(said, s) }})
	v64 := ir.TensorType{DType: ir.F64, Shape: ir.Shape{3}}
	v32 := ir.TensorType{DType: ir.F32, Shape: ir.Shape{3}}
	for range 2 {
		b := ir.NewBuilder()
		x, y := b.Parameter(v64), b.Parameter(v32)
		tiny := b.Constant(v64, f64(0x1p-40, 0x1p-40, 0x1p-40))
		sum := b.Binary(ir.OpAdd, x, tiny) // float64: on the host
		back := b.Binary(ir.OpSub, sum, x) // 2^-40 exactly, in float64
		sq := b.Binary(ir.OpMul, y, y)     // float32: on the device
		// A comparison of float64s, on the host, read by float32 work.
		pos := b.Compare(ir.CmpGT, x, b.Constant(v64, f64(1.5, 1.5, 1.5)))
		sq = b.Select(pos, sq, b.Unary(ir.OpNeg, sq))
		p, err := b.Build(back, b.Unary(ir.OpTanh, sq), sum)
		if err != nil {
			t.Fatal(err)
		}
		got := run(t, d, p, f64(1, 2, 3), f32(1, 2, 3))
		if want := f64(0x1p-40, 0x1p-40, 0x1p-40); string(got[0]) != string(want) {
			t.Errorf("(x + 2^-40) - x in float64 = %v, want 2^-40 each", got[0])
		}
		if want := f64(1+0x1p-40, 2+0x1p-40, 3+0x1p-40); string(got[2]) != string(want) {
			t.Errorf("x + 2^-40 in float64 = %v, want %v", got[2], want)
		}
		exe, err := d.Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		e := exe.(*split.Executable)
		if w := wheres(e); !strings.Contains(w, "host") || !strings.Contains(w, "device") {
			t.Errorf("segments %s, want the float64 part on the host and the float32 one on the device", w)
		}
		if on, why := e.OnHost(); !on || !strings.Contains(strings.Join(why, ";"), "float64") {
			t.Errorf("OnHost = %v %q, want a host part for float64", on, why)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "float64") {
		t.Errorf("said %q, want float64's host part said once", said)
	}
}

// A case whose branch holds a data-dependent while cannot become selects
// (the branch not taken could loop for ever), nor run on the GPU as one
// graph: the host reads the index after the work before it (one wait) and
// runs the branch it picks as a split program, its loop driven in turn.
// Every index, out of range included (the last branch), and both results,
// one of them read twice, equal the host driver's; nothing runs on the
// host but the reading, and PlannedOnly takes it.
func TestHostDrivenCase(t *testing.T) {
	i32t := ir.TensorType{DType: ir.I32}
	loopy := countdown(t, false) // (trips, x) -> exp(-acc)
	bb := ir.NewBuilder()
	bb.Parameter(i32t)
	x := bb.Parameter(mat)
	plain, err := bb.Build(bb.Unary(ir.OpTanh, x))
	if err != nil {
		t.Fatal(err)
	}
	b := ir.NewBuilder()
	index := b.Parameter(i32t)
	trips := b.Parameter(i32t)
	x = b.Parameter(mat)
	c := b.Case(index, []*ir.Program{loopy, plain}, trips, b.Unary(ir.OpNeg, x))
	r := b.GetResult(c, 0)
	p, err := b.Build(b.Binary(ir.OpAdd, r, x), r)
	if err != nil {
		t.Fatal(err)
	}
	d := newSplit(t, split.Options{Host: split.PlannedOnly})
	for _, k := range []int32{0, 1, 7, -1} {
		before := stats.Other.Snapshot()
		e := same(t, d, p, i32(k), i32(3), xArg)
		if got := wheres(e); !strings.Contains(got, "case") {
			t.Errorf("index %d: segments %s, want a case", k, got)
		}
		delta := stats.Other.Snapshot().Sub(before)
		if delta.HostSegments != 0 || delta.Waits < 1 {
			t.Errorf("index %d: %d host parts and %d waits, want none and at least the index's", k, delta.HostSegments, delta.Waits)
		}
	}
}
