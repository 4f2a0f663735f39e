// Package split runs a program where each part of it can run: the parts
// the device driver compiles (MPSGraph on Metal) on the device, the rest
// (matrix decompositions, host callbacks, what the running macOS release
// lacks) on the host driver, over the same unified memory, with no copies
// and in stream order. It sits above the drivers, so no driver owns
// another: a Driver wraps the device's driver and answers for it.
//
// A program is cut into segments (partition.go). Each boundary costs a
// command-buffer commit and, before a host part, a wait for the GPU, so the
// order of the instructions is chosen to make few segments. A while loop
// the device cannot run is driven from the host: its cond and body are
// split programs of their own, run once per iteration (with a wait per
// iteration to read the condition, unless its trip count is known when it
// is compiled, when the body is simply enqueued that many times).
//
// Every executable reports its segments and why each host one is there
// (Segments); the counters of backend/stats say what ran where, per
// frontend, and the first time a part leaves the GPU for a reason other
// than an op whose home is the host, Options.Warn says so once.
package split

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/metalplug/metalplug/backend/cache"
	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/driver/host"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/stats"
)

// Options configure a Driver.
type Options struct {
	// Host says which parts of a program may run on the host; a program
	// that needs another fails to compile, naming the op and the reason:
	// for sweeping what the device runs (METALPLUG_NO_CPU_FALLBACK).
	Host HostPolicy
	// Debug, when set, receives each program's segments once, when it is
	// compiled (METALPLUG_DEBUG=1).
	Debug func(msg string)
	// SmallWork is the most elements a device part may produce, in all,
	// and still be moved to the host when it borders a host part (0: the
	// default, 1<<16; negative: never), since the boundary costs a commit
	// and a wait for the GPU that small elementwise work does not.
	SmallWork int
	// Warn, when set, receives once per op and reason the news that a part
	// of a program runs on the host for a reason other than an op whose
	// home is the host.
	Warn func(msg string)
}

// HostPolicy says which parts of programs may run on the host.
type HostPolicy int

const (
	AnyHostPart HostPolicy = iota // whatever the device does not run
	PlannedOnly                   // only the ops whose home is the host (METALPLUG_NO_CPU_FALLBACK=unplanned)
	NoHostPart                    // none (METALPLUG_NO_CPU_FALLBACK=1)
)

// Driver is a device driver whose programs may run partly on the host. It
// is a driver.Driver itself: memory comes from the device, and its
// streams, events and executables wrap the device's.
type Driver struct {
	driver.Driver               // the device's
	placer        driver.Placer // nil: the device runs every program whole
	host          *host.Driver  // runs the host parts
	opts          Options

	cache  *cache.LRU[ir.Key, *Executable]
	warned sync.Map // op and reason -> struct{}
	views  sync.Map // *stats.Counters -> *view

	mu      sync.Mutex
	private []driver.Stream // device streams for host-driven loops, idle
}

var _ driver.Driver = (*Driver)(nil)

// New wraps dev. Where dev can say which instructions it runs
// (driver.Placer), the rest run on hostDrv; otherwise dev runs every
// program whole and hostDrv may be nil.
func New(dev driver.Driver, hostDrv *host.Driver, opts Options) *Driver {
	d := &Driver{Driver: dev, host: hostDrv, opts: opts, cache: cache.NewWeighted[ir.Key](cache.ExecutableCacheSize, cache.ExecutableCacheInstructions, func(e *Executable) int64 { return int64(e.prog.Size()) })}
	if p, ok := dev.(driver.Placer); ok && hostDrv != nil {
		d.placer = p
	}
	return d
}

// Device is the wrapped device driver.
func (d *Driver) Device() driver.Driver { return d.Driver }

// CachedExecutables is how many compiled programs the driver keeps, for the
// figures that show whether a long run's caches stay bounded.
func (d *Driver) CachedExecutables() int { return d.cache.Len() }

// For is the driver as one frontend uses it: its compiles, executions,
// host parts and waits are counted in c. The same c gives the same view.
func (d *Driver) For(c *stats.Counters) driver.Driver {
	v, _ := d.views.LoadOrStore(c, &view{Driver: d, c: c})
	return v.(*view)
}

type view struct {
	*Driver
	c *stats.Counters
}

func (v *view) Compile(p *ir.Program) (driver.Executable, error) { return v.compile(p, v.c) }
func (v *view) NewStream() (driver.Stream, error)                { return v.newStream(v.c) }
func (v *view) NewEvent() driver.Event                           { return v.newEvent(v.c) }

// Compile implements driver.Driver, counting in stats.Other.
func (d *Driver) Compile(p *ir.Program) (driver.Executable, error) { return d.compile(p, stats.Other) }

// NewStream implements driver.Driver, counting in stats.Other.
func (d *Driver) NewStream() (driver.Stream, error) { return d.newStream(stats.Other) }

// NewEvent implements driver.Driver, counting in stats.Other.
func (d *Driver) NewEvent() driver.Event { return d.newEvent(stats.Other) }

// Segment describes one part of a compiled program, for reports and logs.
type Segment struct {
	Where  string // "device", "host", "loop" or "case"
	Instrs int    // instructions of the program in it
	Ops    []string
	Reason string // for a host part: why it is not on the device
	Trips  int    // for a loop: its trip count, -1 when the data decide it
}

func (s Segment) String() string {
	ops := strings.Join(s.Ops, " ")
	if len(ops) > 120 {
		ops = ops[:117] + "..."
	}
	out := fmt.Sprintf("%s: %d instructions (%s)", s.Where, s.Instrs, ops)
	switch {
	case s.Where == "loop" && s.Trips < 0:
		out += ", data-dependent trip count: one wait per iteration"
	case s.Where == "loop":
		out += fmt.Sprintf(", %d trips enqueued without waiting", s.Trips)
	case s.Where == "case":
		out += ", driven from the host: one wait to read the branch index"
	}
	if s.Reason != "" {
		out += ": " + s.Reason
	}
	return out
}

// Executable is a program compiled into steps.
type Executable struct {
	d    *Driver
	prog *ir.Program

	steps    []step
	temps    []ir.TensorType // the intermediates that cross a boundary
	literals map[int]unsafe.Pointer
	segments []Segment
	// hostUnplanned is set when a host part is there for want of a
	// lowering, not by design.
	hostUnplanned bool
	// unplannedReasons are the reasons of those parts.
	unplannedReasons []string
	// direct is set when one step runs the program itself, on its own
	// arguments and results.
	direct bool

	pool chan []unsafe.Pointer // sets of temporaries, reused
}

var _ driver.Executable = (*Executable)(nil)

// Program implements driver.Executable.
func (e *Executable) Program() *ir.Program { return e.prog }

// Segments are the program's parts in the order they run.
func (e *Executable) Segments() []Segment { return slices.Clone(e.segments) }

// OnHost says whether any part of the program runs on the host, and the
// reasons.
func (e *Executable) OnHost() (bool, []string) {
	var why []string
	for _, s := range e.segments {
		if s.Reason != "" && !slices.Contains(why, s.Reason) {
			why = append(why, s.Reason)
		}
	}
	for _, st := range e.steps {
		if st.loop != nil {
			for _, sub := range st.loop.subs() {
				if _, w := sub.OnHost(); len(w) > 0 {
					why = append(why, w...)
				}
			}
		}
	}
	return len(why) > 0, why
}

// step is one part of an execution.
type step struct {
	where  where
	exe    driver.Executable // on the device or the host driver
	in     []origin          // the executable's parameters
	out    []origin          // its results
	reason string            // why a host step is not on the device
	loop   *loop
	size   int // for a copy step (no exe, no loop): the bytes it copies
}

// loop is a while driven from the host: carried values ping-pong between
// two sets of temporaries. With branches set it is a case driven from the
// host instead: the index read once, the branch it picks run with the
// case's operands into a (carried are then the case's results).
type loop struct {
	cond, body *Executable
	branches   []*Executable
	trips      int // -1: the condition decides, read after every iteration
	carried    []ir.TensorType
	a, b       []int // temporaries of the two sets
	flag       int   // temporary the condition writes
	outs       []int // per output: the carried value it is
}

// subs are the loop's own split programs.
func (lp *loop) subs() []*Executable {
	if lp.branches != nil {
		return lp.branches
	}
	return []*Executable{lp.cond, lp.body}
}

func (d *Driver) compile(p *ir.Program, c *stats.Counters) (driver.Executable, error) {
	if p == nil {
		return nil, fmt.Errorf("%s: compile: nil program", d.Name())
	}
	key := p.Key()
	if e, ok := d.cache.Get(key); ok {
		return e, nil
	}
	e, err := d.build(p, c)
	if err != nil {
		return nil, err
	}
	c.Compiled()
	if d.opts.Debug != nil {
		var b strings.Builder
		fmt.Fprintf(&b, "%s: a program of %d instructions runs as %d part(s):", d.Name(), len(p.Instrs), len(e.segments))
		for _, s := range e.segments {
			b.WriteString("\n  " + s.String())
		}
		d.opts.Debug(b.String())
	}
	return d.cache.Add(key, e), nil
}

// build compiles p into steps.
func (d *Driver) build(p *ir.Program, c *stats.Counters) (*Executable, error) {
	e := &Executable{d: d, prog: p, pool: make(chan []unsafe.Pointer, 2), literals: map[int]unsafe.Pointer{}}
	runtime.AddCleanup(e, func(x cleanupState) { x.release() }, cleanupState{d: d.Driver, pool: e.pool, literals: e.literals})
	if d.placer == nil {
		exe, err := d.Driver.Compile(p)
		if err != nil {
			return nil, err
		}
		e.whole(onDevice, exe, p, "")
		return e, nil
	}
	// What runs is p straightened (the same computation without the
	// control flow MPSGraph lacks, where that can be done at compile
	// time); Program still reports p.
	p, err := d.straighten(p)
	if err != nil {
		return nil, fmt.Errorf("%s: compile: %w", d.Name(), err)
	}
	places, err := d.placer.Place(p)
	if u, ok := driver.AsUnsupported(err); ok && u.Instr < 0 {
		return d.wholeOnHost(e, p, u)
	}
	if err != nil {
		return nil, err
	}
	// Each round compiles the segments; a device segment that turns out
	// not to compile (which Place should have said) moves its instruction
	// to the host and the program is cut again.
	for range len(p.Instrs) + 1 {
		err := d.plan(e, p, places)
		var u *driver.Unsupported
		switch {
		case err == nil:
			return e, d.require(e)
		case errors.As(err, &u) && u.Instr >= 0 && places[ownerOf(p, u.Instr)] == nil:
			places[ownerOf(p, u.Instr)] = u
			e.reset()
		case errors.As(err, &u) && u.Instr < 0: // a part's parameters the device cannot take
			e.reset()
			return d.wholeOnHost(e, p, u)
		default:
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s: compile: cutting the program did not converge", d.Name())
}

// require refuses an executable with host parts the options forbid.
func (d *Driver) require(e *Executable) error {
	setting := "1"
	switch d.opts.Host {
	case AnyHostPart:
		return nil
	case PlannedOnly:
		if !e.unplanned() {
			return nil
		}
		setting = "unplanned"
	}
	on, why := e.OnHost()
	if d.opts.Host == PlannedOnly {
		why = e.unplannedWhy()
	}
	if on {
		// The setting first: the list that follows may be long, and
		// frameworks cut long messages.
		return fmt.Errorf("%s: compile: METALPLUG_NO_CPU_FALLBACK=%s forbids the host these parts of the program: %s", d.Name(), setting, strings.Join(why, "; "))
	}
	return nil
}

// unplannedWhy are the reasons of the host parts there for want of a
// lowering.
func (e *Executable) unplannedWhy() []string {
	why := slices.Clone(e.unplannedReasons)
	for _, st := range e.steps {
		if st.loop != nil {
			for _, sub := range st.loop.subs() {
				why = append(why, sub.unplannedWhy()...)
			}
		}
	}
	return why
}

// unplanned says whether a part of e runs on the host for want of a
// lowering rather than by design.
func (e *Executable) unplanned() bool {
	if e.hostUnplanned {
		return true
	}
	for _, st := range e.steps {
		if st.loop != nil && slices.ContainsFunc(st.loop.subs(), (*Executable).unplanned) {
			return true
		}
	}
	return false
}

func (e *Executable) reset() {
	e.steps, e.temps, e.segments, e.hostUnplanned, e.direct, e.unplannedReasons = nil, nil, nil, false, false, nil
}

// whole makes e one step that runs p itself.
func (e *Executable) whole(w where, exe driver.Executable, p *ir.Program, reason string) {
	st := step{where: w, exe: exe, reason: reason}
	for i := range p.Params {
		st.in = append(st.in, origin{kind: fromParam, index: i})
	}
	for r := range p.Results {
		st.out = append(st.out, origin{kind: toResult, index: r})
	}
	e.steps = []step{st}
	e.direct = true
	e.segments = []Segment{{Where: w.String(), Instrs: len(p.Instrs), Ops: opsOf(p, nil), Reason: reason}}
}

func (d *Driver) wholeOnHost(e *Executable, p *ir.Program, u *driver.Unsupported) (*Executable, error) {
	exe, err := d.host.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("%s: compile: %v; and on the host: %w", d.Name(), u, err)
	}
	reason := u.Error()
	e.whole(onHost, exe, p, reason)
	e.hostUnplanned = !u.Planned
	if !u.Planned {
		e.unplannedReasons = []string{u.Op.String() + ": " + u.Reason}
	}
	d.warn(u, "")
	return e, d.require(e)
}

// plan places, cuts and compiles p into e's steps.
func (d *Driver) plan(e *Executable, p *ir.Program, places []*driver.Unsupported) error {
	// A tuple never crosses a segment, so a get_result the device cannot
	// take sends the instruction whose tuple it takes apart to the host.
	for i, u := range places {
		if u != nil && p.Instrs[i].Op == ir.OpGetResult {
			if o := ownerOf(p, i); places[o] == nil {
				places[o] = u
			}
		}
	}
	wh := make([]where, len(p.Instrs))
	loops := map[int]*loop{}
	host := 0
	for i, u := range places {
		if u == nil || p.Instrs[i].Op == ir.OpGetResult {
			continue
		}
		wh[i] = onHost
		if p.Instrs[i].Op == ir.OpWhile {
			lp, why, err := d.loopOf(p, i)
			if err != nil {
				return err
			}
			if lp != nil {
				wh[i], loops[i] = asLoop, lp
				continue
			}
			if why != "" {
				places[i] = &driver.Unsupported{Instr: i, Op: ir.OpWhile, Planned: true, Reason: why}
			}
		}
		if p.Instrs[i].Op == ir.OpCase {
			lp, err := d.caseOf(p, i)
			if err != nil {
				return err
			}
			if lp != nil {
				wh[i], loops[i] = asLoop, lp
				continue
			}
		}
		if !places[i].Planned && len(p.Instrs[i].Regions) > 0 && d.regionsPlanned(p.Instrs[i]) {
			// Its regions need the host only for ops whose home is the
			// host (a decomposition in a branch): so does it.
			places[i] = &driver.Unsupported{Instr: i, Op: p.Instrs[i].Op, Planned: true,
				Reason: "its regions hold ops whose home is the CPU (a decomposition or a host callback), so it runs there whole"}
		}
		host++
	}
	switch {
	case host == 0 && len(loops) == 0:
		exe, err := d.Driver.Compile(p)
		if err != nil {
			return err
		}
		e.whole(onDevice, exe, p, "")
		return nil
	case len(loops) == 0 && host == countNodes(p):
		exe, err := d.host.Compile(p)
		if err != nil {
			return err
		}
		e.whole(onHost, exe, p, reasons(p, places, nil))
		e.hostUnplanned = anyUnplanned(p, places, nil)
		e.unplannedReasons = unplannedReasons(p, places, nil)
		warnAll(d, p, places)
		return nil
	}
	segs := absorb(p, wh, d.smallWork())
	lay := &layout{at: map[ir.Value]origin{}}
	cuts := cutAll(p, segs, lay)
	e.temps = slices.Clone(lay.temps) // the loops' own come after
	for _, c := range cuts {
		st := step{where: c.seg.where, out: c.outAt}
		for _, v := range c.inputs {
			o, err := e.source(d, p, lay, v)
			if err != nil {
				return err
			}
			st.in = append(st.in, o)
		}
		seg := Segment{Where: c.seg.where.String(), Instrs: len(c.seg.instrs), Ops: opsOf(p, c.seg.instrs)}
		switch c.seg.where {
		case onDevice:
			exe, err := d.Driver.Compile(c.prog)
			if u, ok := driver.AsUnsupported(err); ok && u.Instr >= 0 {
				return &driver.Unsupported{Instr: c.orig[u.Instr], Op: u.Op, Reason: u.Reason, Planned: u.Planned, Tell: u.Tell}
			}
			if err != nil {
				return err
			}
			st.exe = exe
		case onHost:
			exe, err := d.host.Compile(c.prog)
			if err != nil {
				return err
			}
			st.exe = exe
			st.reason = reasons(p, places, c.seg.instrs)
			seg.Reason = st.reason
			e.hostUnplanned = e.hostUnplanned || anyUnplanned(p, places, c.seg.instrs)
			e.unplannedReasons = append(e.unplannedReasons, unplannedReasons(p, places, c.seg.instrs)...)
			for _, i := range c.seg.instrs {
				if places[i] != nil {
					d.warn(places[i], p.Instrs[i].Loc)
				}
			}
		case asLoop:
			lp := loops[c.seg.instrs[0]]
			for _, v := range c.outputs {
				lp.outs = append(lp.outs, p.Instrs[v].Param)
			}
			e.allocLoop(lp)
			st.loop = lp
			seg.Trips = lp.trips
			if lp.branches != nil {
				seg.Where, seg.Trips = "case", 0
			}
		}
		e.steps = append(e.steps, st)
		e.segments = append(e.segments, seg)
	}
	// Results no segment writes: a parameter or a constant returned as it is.
	for r, v := range p.Results {
		if o, ok := lay.at[v]; ok && o.kind == toResult {
			continue
		}
		if written(e.steps, r) {
			continue
		}
		o, err := e.source(d, p, lay, v)
		if err != nil {
			return err
		}
		e.steps = append(e.steps, step{where: onDevice, in: []origin{o}, out: []origin{{kind: toResult, index: r}}, size: p.Instrs[v].Type.Bytes()})
	}
	return nil
}

// written says whether some step writes program result r.
func written(steps []step, r int) bool {
	for _, st := range steps {
		if slices.Contains(st.out, origin{kind: toResult, index: r}) {
			return true
		}
	}
	return false
}

// source is where a segment reads value v from: the program's argument, a
// constant's bytes (materialised once in device memory), or the home an
// earlier segment wrote it to.
func (e *Executable) source(d *Driver, p *ir.Program, lay *layout, v ir.Value) (origin, error) {
	in := p.Instrs[v]
	switch in.Op {
	case ir.OpParameter:
		return origin{kind: fromParam, index: in.Param}, nil
	case ir.OpConstant:
		if _, ok := e.literals[int(v)]; !ok {
			n := len(in.Literal)
			var ptr unsafe.Pointer
			if n > 0 {
				var err error
				if ptr, err = d.Driver.Allocate(n); err != nil {
					return origin{}, fmt.Errorf("%s: compile: a constant of %v: %w", d.Name(), in.Type, err)
				}
				copy(unsafe.Slice((*byte)(ptr), n), in.Literal)
			}
			e.literals[int(v)] = ptr
		}
		return origin{kind: fromLiteral, index: int(v)}, nil
	}
	o, ok := lay.at[v]
	if !ok {
		return origin{}, fmt.Errorf("%s: compile: value %%%d is read before any part writes it (a bug in cutting the program)", d.Name(), v)
	}
	return o, nil
}

// allocLoop gives a loop its temporaries: two sets of carried values and
// the condition's flag.
func (e *Executable) allocLoop(lp *loop) {
	add := func(t ir.TensorType) int {
		e.temps = append(e.temps, t)
		return len(e.temps) - 1
	}
	lp.a, lp.b = nil, nil
	for _, t := range lp.carried {
		lp.a = append(lp.a, add(t))
		if lp.branches == nil {
			lp.b = append(lp.b, add(t))
		}
	}
	if lp.branches == nil {
		lp.flag = add(ir.TensorType{DType: ir.Bool})
	}
}

// caseOf is how the case at instruction i runs when the device cannot run
// it whole (a branch holds a loop whose trip count the data decide, or a
// host part): driven from the host, which reads the index after the work
// before it (one wait) and runs the branch it picks as a split program of
// its own; nil when no branch has device work (then the whole case runs
// on the host).
func (d *Driver) caseOf(p *ir.Program, i int) (*loop, error) {
	in := p.Instrs[i]
	lp := &loop{carried: in.Tuple}
	device := false
	for _, r := range in.Regions {
		br, err := d.build(r, stats.Other)
		if err != nil {
			return nil, err
		}
		device = device || br.hasDevice()
		lp.branches = append(lp.branches, br)
	}
	if !device {
		return nil, nil
	}
	return lp, nil
}

// loopOf is how the while at instruction i runs when the device cannot run
// it whole: driven from the host, if its cond or body has device work;
// nil when both would run on the host anyway (then the whole while does).
func (d *Driver) loopOf(p *ir.Program, i int) (*loop, string, error) {
	in := p.Instrs[i]
	cond, err := d.build(in.Regions[0], stats.Other)
	if err != nil {
		return nil, "", err
	}
	body, err := d.build(in.Regions[1], stats.Other)
	if err != nil {
		return nil, "", err
	}
	if !cond.hasDevice() && !body.hasDevice() {
		return nil, "", nil
	}
	trips, ok := tripCount(p, i)
	if !ok {
		trips = -1
	}
	if ok && trips > 1 && d.smallWork() >= 0 && smallProgram(in.Regions[1], d.smallWork()) {
		// Replayed, each trip would be a dispatch of its own; the host
		// runs a small body's trips for less than one of them.
		return nil, fmt.Sprintf("a loop of %d trips over a small body, past the unrolling budget: the CPU runs it for less than %d dispatches", trips, trips), nil
	}
	return &loop{cond: cond, body: body, trips: trips, carried: in.Tuple}, "", nil
}

// smallProgram says whether a program's work is small enough for the
// host (as small says of a part), its regions included.
func smallProgram(p *ir.Program, smallWork int) bool {
	n := 0
	var walk func(p *ir.Program) bool
	walk = func(p *ir.Program) bool {
		for _, in := range p.Instrs {
			switch in.Op {
			case ir.OpDotGeneral, ir.OpConvolution, ir.OpFFT:
				return false
			}
			if in.Tuple == nil {
				n += in.Type.Shape.Size()
			}
			for _, r := range in.Regions {
				if !walk(r) {
					return false
				}
			}
		}
		return n <= smallWork
	}
	return walk(p)
}

func (e *Executable) hasDevice() bool {
	for _, st := range e.steps {
		if st.where == onDevice && st.exe != nil || st.loop != nil {
			return true
		}
	}
	return false
}

// countNodes is the instructions that are placed: neither parameters,
// constants nor get_results.
func countNodes(p *ir.Program) int {
	n := 0
	for _, in := range p.Instrs {
		if !free(in) && in.Op != ir.OpGetResult {
			n++
		}
	}
	return n
}

// reasons joins the distinct reasons of the instructions (all of p's when
// instrs is nil) that cannot run on the device.
func reasons(p *ir.Program, places []*driver.Unsupported, instrs []int) string {
	if instrs == nil {
		instrs = make([]int, len(p.Instrs))
		for i := range instrs {
			instrs[i] = i
		}
	}
	var out []string
	for _, i := range instrs {
		if u := places[i]; u != nil && p.Instrs[i].Op != ir.OpGetResult {
			s := u.Op.String() + ": " + u.Reason
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return strings.Join(out, "; ")
}

// anyUnplanned says whether an instruction (of instrs, or all when nil)
// leaves the device for want of a lowering.
func anyUnplanned(p *ir.Program, places []*driver.Unsupported, instrs []int) bool {
	for i, u := range places {
		if u != nil && !u.Planned && p.Instrs[i].Op != ir.OpGetResult && (instrs == nil || slices.Contains(instrs, i)) {
			return true
		}
	}
	return false
}

// unplannedReasons are the distinct reasons of the instructions (of
// instrs, or all when nil) that leave the device for want of a lowering.
func unplannedReasons(p *ir.Program, places []*driver.Unsupported, instrs []int) []string {
	var out []string
	for i, u := range places {
		if u == nil || u.Planned || p.Instrs[i].Op == ir.OpGetResult || (instrs != nil && !slices.Contains(instrs, i)) {
			continue
		}
		if r := u.Op.String() + ": " + u.Reason; !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

func warnAll(d *Driver, p *ir.Program, places []*driver.Unsupported) {
	for i, u := range places {
		if u != nil {
			d.warn(u, p.Instrs[i].Loc)
		}
	}
}

// warn says once per op and reason that a part leaves the GPU for a reason
// other than an op whose home is the host (or for one the user should hear
// of even so: Tell), naming where the source wrote it (loc) when the
// frontend said.
func (d *Driver) warn(u *driver.Unsupported, loc string) {
	if d.opts.Warn == nil || (u.Planned && !u.Tell) || u.Op == ir.OpGetResult {
		return
	}
	// A reason the user chose by a type is said once for every op.
	key, once := u.Op.String()+"\x00"+u.Reason, "once per op and reason"
	if u.Tell {
		key, once = u.Reason, "once for every op"
	}
	if _, seen := d.warned.LoadOrStore(key, struct{}{}); seen {
		return
	}
	where := ""
	if loc != "" {
		where = " (" + loc + ")"
	}
	d.opts.Warn(fmt.Sprintf("%s: %s%s runs on the CPU, not the GPU: %s (said %s; metalplug.stats() counts every run)", d.Name(), u.Op, where, u.Reason, once))
}

// opsOf lists the distinct ops of instrs (all of p's when nil), for reports.
func opsOf(p *ir.Program, instrs []int) []string {
	var ops []string
	add := func(in ir.Instr) {
		if free(in) || in.Op == ir.OpGetResult {
			return
		}
		if s := in.Op.String(); !slices.Contains(ops, s) {
			ops = append(ops, s)
		}
	}
	if instrs == nil {
		for _, in := range p.Instrs {
			add(in)
		}
	}
	for _, i := range instrs {
		add(p.Instrs[i])
	}
	return ops
}

// cleanupState is what an executable gives back when it is collected.
type cleanupState struct {
	d        driver.Driver
	pool     chan []unsafe.Pointer
	literals map[int]unsafe.Pointer
}

func (c cleanupState) release() {
	for _, p := range c.literals {
		if p != nil {
			c.d.Free(p)
		}
	}
	for {
		select {
		case set := <-c.pool:
			freeSet(c.d, set)
		default:
			return
		}
	}
}

// Declines says whether the driver refuses a dtype outright: never where
// the host runs what the device cannot (Metal's float64 runs there), as
// the device does otherwise.
func (d *Driver) Declines(dt ir.DType) bool {
	if d.placer != nil {
		return false
	}
	dec, ok := d.Driver.(interface{ Declines(ir.DType) bool })
	return ok && dec.Declines(dt)
}

// ownerOf is the instruction whose tuple the get_result at i takes apart,
// or i itself.
func ownerOf(p *ir.Program, i int) int {
	for p.Instrs[i].Op == ir.OpGetResult {
		i = int(p.Instrs[i].Args[0])
	}
	return i
}

// smallWork is Options.SmallWork, or -1 (never) where the options forbid
// host parts: moving device work to the host is for speed, and a sweep of
// what the device runs must see it run there.
func (d *Driver) smallWork() int {
	if d.opts.Host != AnyHostPart {
		return -1
	}
	if d.opts.SmallWork == 0 {
		return defaultSmallWork
	}
	return d.opts.SmallWork
}

// regionsPlanned says whether every region of in compiles with host parts
// only for ops whose home is the host.
func (d *Driver) regionsPlanned(in ir.Instr) bool {
	planned := false // a region with nothing on the host explains nothing
	for _, r := range in.Regions {
		e, err := d.build(r, stats.Other)
		if err != nil || e.unplanned() {
			return false
		}
		if on, _ := e.OnHost(); on {
			planned = true
		}
	}
	return planned
}
