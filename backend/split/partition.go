package split

import (
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
)

// where says where a part of a program runs.
type where int

const (
	onDevice where = iota
	onHost
	asLoop // a while driven from the host, its cond and body split programs of their own
)

func (w where) String() string {
	switch w {
	case onDevice:
		return "device"
	case onHost:
		return "host"
	}
	return "loop"
}

// segment is a run of instructions of one program that execute together:
// one device execution, one host run, or one loop.
type segment struct {
	where  where
	instrs []int // indexes into the program, in an order that respects every use
}

// free instructions belong to no segment: parameters are the program's
// inputs, and constants are copied into every segment that uses them, so
// that neither ever makes a boundary.
func free(in ir.Instr) bool { return in.Op == ir.OpParameter || in.Op == ir.OpConstant }

// partition orders p's instructions into segments, each placed as places
// says (free instructions and get_results have no place of their own: a
// get_result goes with the tuple it takes apart, since tuples never cross
// a segment). Every boundary costs a command-buffer commit and, before a
// host part, a wait for the GPU, so the order is chosen to make few
// segments: a list schedule that keeps taking ready instructions of the
// current place and moves on only when none is left, which hoists host
// work that depends on nothing recent and merges neighbours. It is tried
// starting on each side; the one with fewer segments wins.
func partition(p *ir.Program, places []where) []segment {
	n := len(p.Instrs)
	owner := make([]int, n) // the node an instruction belongs to
	for i, in := range p.Instrs {
		owner[i] = i
		if in.Op == ir.OpGetResult {
			owner[i] = owner[in.Args[0]]
		}
	}
	members := make([][]int, n) // a node's get_results, in order
	users := make([][]int, n)
	indeg := make([]int, n)
	var nodes []int
	for i, in := range p.Instrs {
		if free(in) {
			continue
		}
		if owner[i] != i {
			members[owner[i]] = append(members[owner[i]], i)
		} else {
			nodes = append(nodes, i)
		}
		for _, a := range in.Args {
			if free(p.Instrs[a]) || owner[a] == owner[i] {
				continue
			}
			u := owner[i]
			if !slices.Contains(users[owner[a]], u) {
				users[owner[a]] = append(users[owner[a]], u)
				indeg[u]++
			}
		}
	}
	best := schedule(nodes, members, users, indeg, places, onDevice)
	if alt := schedule(nodes, members, users, indeg, places, onHost); len(alt) < len(best) {
		best = alt
	}
	return best
}

// defaultSmallWork is the most elements a device part may produce, in all,
// and still be moved to the host beside a host part: elementwise work of
// that size takes the host microseconds, less than the commit and the wait
// for the GPU that the boundary costs.
const defaultSmallWork = 1 << 16

// absorb partitions p, then moves small device parts that border host
// parts to the host, and partitions again, until no such part is left. A
// chain that alternates between ops the GPU runs and ops it lacks (a
// random-bits hash on a macOS without 32-bit shifts) becomes one host part
// instead of one boundary per op.
func absorb(p *ir.Program, places []where, smallWork int) []segment {
	wh := slices.Clone(places)
	segs := partition(p, wh)
	if smallWork < 0 {
		return segs
	}
	for range len(p.Instrs) {
		moved := false
		for k, s := range segs {
			if s.where != onDevice || !small(p, s, smallWork) {
				continue
			}
			before := k > 0 && segs[k-1].where == onHost
			after := k+1 < len(segs) && segs[k+1].where == onHost
			edge := k == 0 || k == len(segs)-1
			if (before && after) || ((before || after) && edge) {
				for _, i := range s.instrs {
					wh[i] = onHost
				}
				moved = true
			}
		}
		if !moved {
			return segs
		}
		segs = partition(p, wh)
	}
	return segs
}

// small says whether a device part is cheap enough for the host: no
// contraction or convolution, and few elements produced.
func small(p *ir.Program, s segment, smallWork int) bool {
	n := 0
	for _, i := range s.instrs {
		in := p.Instrs[i]
		switch in.Op {
		case ir.OpDotGeneral, ir.OpConvolution, ir.OpFFT:
			return false
		}
		if in.Tuple == nil {
			n += in.Type.Shape.Size()
		}
	}
	return n <= smallWork
}

// schedule is one list schedule of the nodes, starting on side first.
func schedule(nodes []int, members, users [][]int, indeg0 []int, places []where, first where) []segment {
	indeg := slices.Clone(indeg0)
	ready := map[where][]int{} // sorted: the program's own order among the ready
	push := func(i int) {
		w := places[i]
		at, _ := slices.BinarySearch(ready[w], i)
		ready[w] = slices.Insert(ready[w], at, i)
	}
	for _, i := range nodes {
		if indeg[i] == 0 {
			push(i)
		}
	}
	var segs []segment
	cur, open := first, false
	for range nodes {
		if !open || len(ready[cur]) == 0 {
			switch {
			case len(ready[cur]) > 0:
			case len(ready[onDevice]) > 0:
				cur = onDevice
			case len(ready[onHost]) > 0:
				cur = onHost
			default:
				cur = asLoop
			}
			segs = append(segs, segment{where: cur})
			open = cur != asLoop // a loop is a segment of its own
		}
		i := ready[cur][0]
		ready[cur] = ready[cur][1:]
		s := &segs[len(segs)-1]
		s.instrs = append(s.instrs, i)
		s.instrs = append(s.instrs, members[i]...)
		if cur == asLoop {
			open = false
		}
		for _, u := range users[i] {
			if indeg[u]--; indeg[u] == 0 {
				push(u)
			}
		}
	}
	return segs
}

// origin says where a value a segment reads comes from, or where a value
// it writes goes.
type origin struct {
	kind  originKind
	index int // the parameter, result or temporary
}

type originKind int

const (
	fromParam   originKind = iota // the program's argument
	toResult                      // the program's result buffer (written once, then read by later segments)
	viaTemp                       // a temporary buffer of the execution
	fromLiteral                   // a constant's bytes (loops' and results' inputs only)
)

// cut is one segment as a program of its own: its parameters are the
// values it reads from outside, its results the values later segments or
// the program's results need.
type cut struct {
	seg     segment
	prog    *ir.Program
	inputs  []ir.Value // the original values its parameters are, in order
	outputs []ir.Value // the original values its results are, in order (repeated for each program result a value fills)
	outAt   []origin   // where each result goes
	orig    []int      // per instruction of prog, the original one (-1 for its parameters)
}

// layout is where every value that crosses a boundary lives.
type layout struct {
	at    map[ir.Value]origin
	temps []ir.TensorType
}

// place gives value v its home: the first program result it is, else a new
// temporary.
func (lay *layout) place(p *ir.Program, v ir.Value) origin {
	if o, ok := lay.at[v]; ok {
		return o
	}
	in := p.Instrs[v]
	var o origin
	switch {
	case in.Op == ir.OpParameter:
		o = origin{kind: fromParam, index: in.Param}
	case in.Op == ir.OpConstant:
		o = origin{kind: fromLiteral, index: int(v)}
	default:
		if r := slices.Index(p.Results, v); r >= 0 {
			o = origin{kind: toResult, index: r}
		} else {
			o = origin{kind: viaTemp, index: len(lay.temps)}
			lay.temps = append(lay.temps, in.Type)
		}
	}
	lay.at[v] = o
	return o
}

// cutAll turns segments into programs. A value is an output of its segment
// when a later segment or the program's results use it.
func cutAll(p *ir.Program, segs []segment, lay *layout) []cut {
	segOf := make([]int, len(p.Instrs))
	for i := range segOf {
		segOf[i] = -1
	}
	for s, seg := range segs {
		for _, i := range seg.instrs {
			segOf[i] = s
		}
	}
	usedLater := make([]bool, len(p.Instrs))
	for i, in := range p.Instrs {
		for _, a := range in.Args {
			if segOf[a] >= 0 && segOf[i] != segOf[a] {
				usedLater[a] = true
			}
		}
	}
	for _, r := range p.Results {
		usedLater[r] = true
	}
	cuts := make([]cut, len(segs))
	for s, seg := range segs {
		c := cut{seg: seg}
		if seg.where == asLoop {
			// The loop reads the while's operands and yields its
			// get_results; its cond and body are programs already.
			c.inputs = slices.Clone(p.Instrs[seg.instrs[0]].Args)
			for _, i := range seg.instrs[1:] {
				if v := ir.Value(i); usedLater[v] {
					c.outputs, c.outAt = appendHomes(p, lay, v, c.outputs, c.outAt)
				}
			}
			cuts[s] = c
			continue
		}
		sub := &ir.Program{}
		local := map[ir.Value]ir.Value{}
		arg := func(a ir.Value) ir.Value {
			if v, ok := local[a]; ok {
				return v
			}
			in := p.Instrs[a]
			nv := ir.Value(len(sub.Instrs))
			if in.Op == ir.OpConstant {
				sub.Instrs = append(sub.Instrs, in)
				c.orig = append(c.orig, int(a))
			} else {
				sub.Instrs = append(sub.Instrs, ir.Instr{Op: ir.OpParameter, Type: in.Type, Param: len(sub.Params)})
				sub.Params = append(sub.Params, in.Type)
				c.inputs = append(c.inputs, a)
				c.orig = append(c.orig, -1)
			}
			local[a] = nv
			return nv
		}
		for _, i := range seg.instrs {
			in := p.Instrs[i]
			in.Args = slices.Clone(in.Args)
			for j, a := range in.Args {
				in.Args[j] = arg(a)
			}
			local[ir.Value(i)] = ir.Value(len(sub.Instrs))
			sub.Instrs = append(sub.Instrs, in)
			c.orig = append(c.orig, i)
		}
		for _, i := range seg.instrs {
			v := ir.Value(i)
			if !usedLater[v] || p.Instrs[i].Tuple != nil {
				continue
			}
			before := len(c.outputs)
			c.outputs, c.outAt = appendHomes(p, lay, v, c.outputs, c.outAt)
			for range c.outputs[before:] {
				sub.Results = append(sub.Results, local[v])
			}
		}
		if len(sub.Results) == 0 {
			// Nothing later reads what this part computes (dead code, or
			// a host callback run for its effect): it still runs, so it
			// gets a result of its own that nobody reads.
			sub.Results = append(sub.Results, deadResult(sub, lay, &c))
		}
		c.prog = sub
		cuts[s] = c
	}
	return cuts
}

// appendHomes appends v's home, and every further program result v is, to
// a segment's outputs: a value that is several of the program's results
// fills each.
func appendHomes(p *ir.Program, lay *layout, v ir.Value, outs []ir.Value, at []origin) ([]ir.Value, []origin) {
	home := lay.place(p, v)
	outs, at = append(outs, v), append(at, home)
	for r, pr := range p.Results {
		if pr == v && (home.kind != toResult || home.index != r) {
			outs, at = append(outs, v), append(at, origin{kind: toResult, index: r})
		}
	}
	return outs, at
}

// deadResult gives a part whose values nobody reads one result, in a
// temporary of its own: its last value, or the first result of its last
// tuple.
func deadResult(sub *ir.Program, lay *layout, c *cut) ir.Value {
	last := ir.Value(len(sub.Instrs) - 1)
	in := sub.Instrs[last]
	if in.Tuple != nil {
		sub.Instrs = append(sub.Instrs, ir.Instr{Op: ir.OpGetResult, Args: []ir.Value{last}, Type: in.Tuple[0], Param: 0})
		c.orig = append(c.orig, -1)
		last = ir.Value(len(sub.Instrs) - 1)
		in = sub.Instrs[last]
	}
	c.outputs = append(c.outputs, -1)
	c.outAt = append(c.outAt, origin{kind: viaTemp, index: len(lay.temps)})
	lay.temps = append(lay.temps, in.Type)
	return last
}
