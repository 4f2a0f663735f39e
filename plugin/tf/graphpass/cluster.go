package graphpass

import (
	"container/heap"
	"iter"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	pb "github.com/metalplug/metalplug/plugin/tfproto"
)

// Clustering. On a Mac every device kernel is one GPU dispatch (15-20 us),
// so a training step of thousands of small kernels is bound by dispatches,
// not arithmetic. Clusters replaces each maximal connected group of device
// nodes the library can lower by one node of the plugin's own op ClusterOp,
// whose kernel composes the members into one program and runs it as one
// dispatch.
//
// A cluster node, as the kernel reads it:
//
//	Input        the device args, then the host args, then "^x" for each
//	             distinct non-member x some member waits for
//	Tin, Thost   list(type): the dtypes of the device args, of the host args
//	Tout         list(type): the dtypes of the outputs
//	inputs       list(string): the device args' tensor names, as in Input
//	host_inputs  list(string): the host args' tensor names, as in Input
//	outputs      list(string): the member tensors the node yields, output j
//	             being outputs[j]
//	members      string: a serialized GraphDef of the members, in
//	             topological order, without their control inputs
//
// An arg is a tensor a non-member produces and a member reads: a host arg
// when some member reads it at one of its host input positions (an axis, a
// shape: the lowering needs its value on the host before the program
// runs), a device arg when some member reads it elsewhere; a tensor may be
// both. Args are listed in order of first use (members in order, each one's
// inputs in order). A member input names either an earlier member's output
// or an entry of inputs or host_inputs (by its position's kind); tensor
// names are canonical throughout: "n" for output 0, "n:k" for output k.
// The outputs are the member outputs some non-member reads as data, in the
// order the graph's nodes first read them.

// ClusterOp is the op of a cluster node.
const ClusterOp = "_MetalplugCluster"

// ClusterOptions say what may be clustered.
type ClusterOptions struct {
	// DeviceType is the plugin's device type: only nodes placed on it (as
	// Options.onDevice decides) may be members.
	DeviceType string
	// Preserve are the nodes TensorFlow must keep (fetches, feeds): never
	// members.
	Preserve []string
	// Member reports whether n may join a cluster (its op has a lowering,
	// its dtypes are supported, ...) and which of its data input positions
	// (0-based, control inputs not counted) are host inputs. Nil means
	// nothing is clustered.
	Member func(n *pb.NodeDef) (host []int, ok bool)
	// OpDef is the running TensorFlow's definition of an op, or nil: the
	// dtypes of a cluster's inputs and outputs come from the definitions of
	// the ops producing them, and a cluster whose dtypes cannot be told is
	// not formed.
	OpDef func(op string) *pb.OpDef
	// MinSize is the fewest members a cluster may have; 0 means 2.
	MinSize int
}

// Cluster is one rewrite.
type Cluster struct {
	Name    string   // the cluster node
	Members []string // the nodes it replaced, in the order of its members attribute
	Ops     []string // their ops
}

// controlFlowOps are TensorFlow's v1 control flow ops (Grappler sees them
// after TensorFlow lowers While and If): never members, since a cluster
// runs as one program, in which nothing is dead or waits for an iteration.
var controlFlowOps = map[string]bool{
	"Switch": true, "RefSwitch": true, "_SwitchN": true, "Merge": true, "RefMerge": true,
	"Enter": true, "RefEnter": true, "Exit": true, "RefExit": true,
	"NextIteration": true, "RefNextIteration": true, "LoopCond": true, "ControlTrigger": true,
}

// Clusters replaces, in place, each cluster of nodes ClusterOptions allow
// by a ClusterOp node and says what it did (nil when nothing changed).
//
// Nodes share a cluster only if
//   - each is a candidate: o.Member accepts it, it is on the device, not
//     preserved, not a cluster node already and not control flow;
//   - they have the same device string, frame and deadness (controlFlow);
//   - they are connected by data edges into device inputs: an edge into a
//     host input is never inside a cluster, since its consumer reads the
//     value before the program runs;
//   - contracting the cluster leaves the graph acyclic.
//
// Clusters are grown greedily over every such edge, in a deterministic
// order; those with fewer than MinSize members, or whose dtypes cannot be
// told, are left as they were. The cluster nodes are appended to the
// graph, named metalplug_cluster_<k> with k the smallest that names no
// node yet, so the pass can run again over its own output (Grappler
// iterates): cluster nodes are never members.
func Clusters(g *pb.GraphDef, o ClusterOptions) []Cluster {
	if o.Member == nil || len(g.Node) == 0 {
		return nil
	}
	x := indexGraph(g)
	order, ok := x.topoOrder()
	if !ok {
		return nil // a cycle not through NextIteration: not a graph TensorFlow runs
	}
	frame, dead := controlFlow(x, order)
	cand, host := candidates(x, o, frame)
	alike := func(u, v int) bool {
		return x.nodes[u].Device == x.nodes[v].Device && frame[u] == frame[v] && dead[u] == dead[v]
	}
	groups := grow(x, order, cand, host, alike)

	minSize := o.MinSize
	if minSize == 0 {
		minSize = 2
	}
	// owner is the plan each node is a member of, or -1. A group is
	// planned with owner set to it, and undone if it cannot be; that
	// changes nothing for the others, since ungrouping nodes never makes a
	// cycle and each plan looks only at its own members.
	owner := make([]int, len(x.nodes))
	for i := range owner {
		owner[i] = -1
	}
	types := &typer{x: x, def: o.OpDef, defs: map[string]*pb.OpDef{}, known: map[int][]pb.DataType{}}
	var plans []*plan
	for _, members := range groups {
		if len(members) < minSize {
			continue
		}
		id := len(plans)
		for _, m := range members {
			owner[m] = id
		}
		p, ok := planCluster(x, members, func(n int) bool { return owner[n] == id }, host, types)
		if !ok {
			for _, m := range members {
				owner[m] = -1
			}
			continue
		}
		plans = append(plans, p)
	}
	if len(plans) == 0 {
		return nil
	}

	k := 0
	for _, p := range plans {
		for ; x.has(clusterName(k)); k++ {
		}
		p.name = clusterName(k)
		k++
	}
	clusterNodes := make([]*pb.NodeDef, len(plans))
	for i, p := range plans {
		n, err := p.node(x, owner, plans)
		if err != nil {
			return nil // a node proto cannot serialize; nothing is rewritten yet
		}
		clusterNodes[i] = n
	}
	kept := make([]*pb.NodeDef, 0, len(x.nodes)+len(clusterNodes))
	for i, n := range x.nodes {
		if owner[i] < 0 {
			rewire(x, i, owner, plans)
			kept = append(kept, n)
		}
	}
	g.Node = append(kept, clusterNodes...)

	out := make([]Cluster, len(plans))
	for i, p := range plans {
		out[i].Name = p.name
		for _, m := range p.members {
			out[i].Members = append(out[i].Members, x.nodes[m].Name)
			out[i].Ops = append(out[i].Ops, x.nodes[m].Op)
		}
	}
	return out
}

func clusterName(k int) string { return "metalplug_cluster_" + strconv.Itoa(k) }

func (x *graph) has(name string) bool { _, ok := x.index[name]; return ok }

// tensor is output port of node (an index into graph.nodes, -1 when the
// graph has no node of that name).
type tensor struct{ node, port int }

// graph is a GraphDef indexed by node position.
type graph struct {
	nodes   []*pb.NodeDef
	index   map[string]int
	data    [][]tensor // each node's data inputs, by position
	control [][]int    // each node's control inputs (-1: no such node)
	// consumers are the nodes reading each node, data or control, each
	// once, in graph order.
	consumers [][]int
}

func indexGraph(g *pb.GraphDef) *graph {
	x := &graph{
		nodes:     g.Node,
		index:     make(map[string]int, len(g.Node)),
		data:      make([][]tensor, len(g.Node)),
		control:   make([][]int, len(g.Node)),
		consumers: make([][]int, len(g.Node)),
	}
	for i, n := range g.Node {
		x.index[n.Name] = i
	}
	for i, n := range g.Node {
		for _, in := range n.Input {
			name, port, control := parseInput(in)
			p, ok := x.index[name]
			if !ok {
				p = -1
			}
			if control {
				x.control[i] = append(x.control[i], p)
			} else {
				x.data[i] = append(x.data[i], tensor{p, port})
			}
			if c := x.consumers; p >= 0 && (len(c[p]) == 0 || c[p][len(c[p])-1] != i) {
				c[p] = append(c[p], i)
			}
		}
	}
	return x
}

// parseInput splits a NodeDef input: "n" and "n:0" are output 0 of n,
// "n:k" output k, "^n" a control input.
func parseInput(in string) (name string, port int, control bool) {
	if name, ok := strings.CutPrefix(in, "^"); ok {
		return name, 0, true
	}
	if i := strings.LastIndexByte(in, ':'); i >= 0 {
		if k, err := strconv.Atoi(in[i+1:]); err == nil && k >= 0 {
			return in[:i], k, false
		}
	}
	return in, 0, false
}

// canonical is the name of output port of node: "node" or "node:k".
func canonical(node string, port int) string {
	if port == 0 {
		return node
	}
	return node + ":" + strconv.Itoa(port)
}

// dataInputs are n's data inputs, as written: the i-th is graph.data's i-th.
func dataInputs(n *pb.NodeDef) []string {
	var out []string
	for _, in := range n.Input {
		if !strings.HasPrefix(in, "^") {
			out = append(out, in)
		}
	}
	return out
}

// inputs yields the nodes n reads and the output it reads of each (-1 for
// a control input), leaving out names of no node and NextIteration
// outputs: that edge carries a value into the loop's next iteration, not
// this one, and closes the only cycles TensorFlow allows.
func (x *graph) inputs(n int) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for _, in := range x.data[n] {
			if in.node >= 0 && !isOp(x.nodes[in.node], "NextIteration", "RefNextIteration") && !yield(in.node, in.port) {
				return
			}
		}
		for _, p := range x.control[n] {
			if p >= 0 && !isOp(x.nodes[p], "NextIteration", "RefNextIteration") && !yield(p, -1) {
				return
			}
		}
	}
}

// topoOrder is an order of the nodes in which each follows what it reads
// (inputs' edges): the stored order when that is one already. ok is false
// when there is none.
func (x *graph) topoOrder() (order []int, ok bool) {
	const (
		unseen = iota
		open
		done
	)
	state := make([]uint8, len(x.nodes))
	order = make([]int, 0, len(x.nodes))
	var visit func(n int) bool
	visit = func(n int) bool {
		switch state[n] {
		case done:
			return true
		case open:
			return false
		}
		state[n] = open
		for p := range x.inputs(n) {
			if !visit(p) {
				return false
			}
		}
		state[n] = done
		order = append(order, n)
		return true
	}
	for n := range x.nodes {
		if !visit(n) {
			return nil, false
		}
	}
	return order, true
}

func isOp(n *pb.NodeDef, ops ...string) bool { return slices.Contains(ops, n.Op) }

// controlFlow says, for each node, in which frame its outputs are and how
// they may be dead, as ids: nodes may share a cluster only if both ids are
// equal. A frame is -1 when a node's inputs come from different frames,
// which a valid graph does not have: such a node joins nothing.
//
// Frames: a node is in the frame of its inputs (the root frame when it has
// none); an Enter's outputs are in the child frame its frame_name names,
// an Exit's in its input's parent frame. In topological order (loops' back
// edges left out) each node's inputs are known before it, so one pass is
// the fixed point.
//
// Deadness: the key of a node is a set of tokens, each something that may
// be dead: "pred@p" for output p of a Switch on predicate pred not taken
// (switchToken: one token for all the Switches of a loop or a cond), the
// name of a cond's Merge for its output (a Merge is live when any input
// is, not the union of its inputs); a loop's Merge has its Enter's key
// (loopMerge), an Exit its input's but the tokens of its loop (outside).
// Tokens carry the frame they were made in (frameToken). A node reading output p of Switch s has key(s) and s's token
// for p; a control edge from a
// Switch carries key(s) alone, since the executor signals it whenever the
// Switch runs live; any other node has the union of its inputs' keys, as a
// node is dead exactly when one of its inputs (data or control) is. By
// induction in that order, a node is dead exactly when one of its key's
// tokens is, so nodes with equal keys in one frame are dead together, in
// each iteration. A cluster node is dead when one of its inputs is; each
// of those is some member's input, so then that member and (equal keys)
// every member is dead. Conversely a dead member reads a dead input, which
// is the cluster's or (members in topological order) comes from an
// earlier member that is dead too: so the cluster is dead exactly when its
// members are, and its outputs carry the deadness they carried before.
func controlFlow(x *graph, order []int) (frame, dead []int) {
	type child struct {
		parent int
		name   string
	}
	frames := map[child]int{}
	parent := []int{-1} // frame 0 is the root
	keyIDs := map[string]int{"": 0}
	keys := [][]string{nil}
	intern := func(set []string) int {
		s := strings.Join(set, "\x00")
		id, ok := keyIDs[s]
		if !ok {
			id = len(keys)
			keyIDs[s] = id
			keys = append(keys, set)
		}
		return id
	}

	frame = make([]int, len(x.nodes))
	dead = make([]int, len(x.nodes))
	for _, v := range order {
		n := x.nodes[v]
		f, seen := 0, false
		var key []string
		for p, port := range x.inputs(v) {
			if !seen {
				f, seen = frame[p], true
			} else if frame[p] != f {
				f = -1
			}
			key = union(key, keys[dead[p]])
			if port >= 0 && isOp(x.nodes[p], "Switch", "RefSwitch", "_SwitchN") {
				key = union(key, []string{frameToken(frame[p], switchToken(x.nodes[p], port))})
			}
		}
		switch {
		case f < 0:
		case isOp(n, "Enter", "RefEnter"):
			c := child{f, string(n.Attr["frame_name"].GetS())}
			id, ok := frames[c]
			if !ok {
				id = len(parent)
				frames[c] = id
				parent = append(parent, f)
			}
			f = id
		case isOp(n, "Exit", "RefExit"):
			key = outside(key, f)
			f = parent[f] // -1 out of the root frame
		case isOp(n, "Merge", "RefMerge") && !x.loopMerge(v):
			key = []string{frameToken(f, n.Name)}
		}
		frame[v] = f
		dead[v] = intern(key)
	}
	return frame, dead
}

// frameToken is token as made in frame f: outside drops it at f's Exits.
func frameToken(f int, token string) string { return strconv.Itoa(f) + "|" + token }

// outside is key without the tokens made in frame f. An Exit's output is
// live exactly when its loop ran live to its end, whatever the iterations'
// Switches and conds did: that is, when its loop variable's Enter was, and
// the loop's condition variables' Enters were, whose keys are what is left.
func outside(key []string, f int) []string {
	prefix := strconv.Itoa(f) + "|"
	var out []string
	for _, t := range key {
		if !strings.HasPrefix(t, prefix) {
			out = append(out, t)
		}
	}
	return out
}

// switchToken names the condition under which output port of Switch s is
// not taken: its predicate (or _SwitchN's branch index) and the port, so
// that the Switches of one loop or one cond, which share their predicate,
// give one token: their outputs on one port are taken together. The
// Switch's own deadness is in its key, which the reader's key includes.
func switchToken(s *pb.NodeDef, port int) string {
	pred := s.Name
	if data := dataInputs(s); len(data) == 2 {
		name, port, _ := parseInput(data[1])
		pred = canonical(name, port)
	}
	return pred + "@" + strconv.Itoa(port)
}

// loopMerge reports whether node v is a while loop's Merge (it reads a
// NextIteration). Its output is live in an iteration exactly when its
// Enter's was: the executor starts no iteration with a dead NextIteration
// value. So its key is its Enter's (inputs leaves the NextIteration out),
// one key for every loop variable of a loop, whose body then clusters
// across variables.
func (x *graph) loopMerge(v int) bool {
	if !isOp(x.nodes[v], "Merge", "RefMerge") {
		return false
	}
	for _, in := range x.data[v] {
		if in.node >= 0 && isOp(x.nodes[in.node], "NextIteration", "RefNextIteration") {
			return true
		}
	}
	return false
}

// union is the sorted set of a's and b's strings, each sorted; it may
// return either.
func union(a, b []string) []string {
	switch {
	case len(a) == 0:
		return b
	case len(b) == 0 || slices.Equal(a, b):
		return a
	}
	s := append(slices.Clip(a), b...)
	slices.Sort(s)
	return slices.Compact(s)
}

// candidates says which nodes may be members, and at which of its data
// input positions each candidate reads values on the host.
func candidates(x *graph, o ClusterOptions, frame []int) (cand []bool, host [][]int) {
	preserved := make(map[string]bool, len(o.Preserve))
	for _, name := range o.Preserve {
		preserved[name] = true
	}
	device := Options{DeviceType: o.DeviceType}
	cand = make([]bool, len(x.nodes))
	host = make([][]int, len(x.nodes))
	for i, n := range x.nodes {
		if frame[i] < 0 || n.Op == ClusterOp || controlFlowOps[n.Op] || preserved[n.Name] || !device.onDevice(n) {
			continue
		}
		host[i], cand[i] = o.Member(n)
	}
	return cand, host
}

// grow forms the clusters: it walks the data edges from a candidate into a
// device input of another, alike, candidate (consumers in topological
// order, each one's inputs in order) and joins the two ends' clusters
// unless that puts both ends of a host edge in one cluster or makes a
// cycle. The clusters come in order of their first member, each one's
// members in topological order.
func grow(x *graph, order []int, cand []bool, host [][]int, alike func(u, v int) bool) [][]int {
	c := newContraction(x, order)
	for v, h := range host {
		for _, pos := range h {
			if pos >= 0 && pos < len(x.data[v]) {
				if u := x.data[v][pos].node; u >= 0 && cand[u] && cand[v] {
					c.hostPeers[u] = append(c.hostPeers[u], v)
					c.hostPeers[v] = append(c.hostPeers[v], u)
				}
			}
		}
	}
	for _, v := range order {
		if !cand[v] {
			continue
		}
		for pos, in := range x.data[v] {
			if u := in.node; u >= 0 && cand[u] && !slices.Contains(host[v], pos) && alike(u, v) {
				c.join(u, v)
			}
		}
	}

	var groups [][]int
	group := map[int]int{} // by root
	for _, v := range order {
		if !cand[v] {
			continue
		}
		r := c.find(v)
		i, ok := group[r]
		if !ok {
			i = len(groups)
			group[r] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], v)
	}
	return groups
}

// contraction is the graph with clusters contracted to single nodes: a
// union-find over the nodes, the root of a set standing for its cluster.
//
// Clusters grow at their consumer v's turn, in topological order, so the
// nodes after v are all still alone, and from such a node only nodes after
// it are reachable: a search for a path into v's cluster leaves them out.
// A root's successors after v wait in a heap until the sweep reaches them,
// so that a cluster whose members also feed nodes far ahead (a training
// step's forward pass, each activation kept for the gradients) is not
// scanned for them over and over: on a chain, each search looks at the
// next node only.
type contraction struct {
	parent, size []int
	// succ are the nodes a root's members feed (inputs' edges) that the
	// sweep has reached, some of them members by now; later are the
	// others, by position in the topological order.
	succ  [][]int
	later []positions
	// hostPeers are the nodes a root's members share a host edge with,
	// either way round.
	hostPeers   [][]int
	order, topo []int // the topological order, and each node's position in it
	seen        []int // marks of the search, by epoch
	epoch       int
	stack       []int
}

func newContraction(x *graph, order []int) *contraction {
	n := len(x.nodes)
	c := &contraction{
		parent: make([]int, n), size: make([]int, n), succ: make([][]int, n), later: make([]positions, n),
		hostPeers: make([][]int, n), order: order, topo: make([]int, n), seen: make([]int, n),
	}
	for i, v := range order {
		c.topo[v] = i
	}
	for i := range n {
		c.parent[i], c.size[i] = i, 1
		for p := range x.inputs(i) {
			c.later[p] = append(c.later[p], c.topo[i])
		}
	}
	for i := range c.later {
		heap.Init(&c.later[i])
	}
	return c
}

func (c *contraction) find(n int) int {
	for c.parent[n] != n {
		c.parent[n] = c.parent[c.parent[n]]
		n = c.parent[n]
	}
	return n
}

// join merges the clusters of u and v, across the edge u -> v, unless a
// host edge joins them or the result would be on a cycle. Calls come in
// topological order of v.
func (c *contraction) join(u, v int) {
	a, b := c.find(u), c.find(v)
	if a == b || c.hostLinked(a, b) || c.reachesAround(a, b, c.topo[v]) {
		return
	}
	if c.size[a] < c.size[b] {
		a, b = b, a
	}
	c.parent[b] = a
	c.size[a] += c.size[b]
	c.succ[a] = append(c.succ[a], c.succ[b]...)
	if c.later[a].Len() < c.later[b].Len() {
		c.later[a], c.later[b] = c.later[b], c.later[a]
	}
	for _, p := range c.later[b] {
		heap.Push(&c.later[a], p)
	}
	c.hostPeers[a] = append(c.hostPeers[a], c.hostPeers[b]...)
	c.succ[b], c.later[b], c.hostPeers[b] = nil, nil, nil
}

func (c *contraction) hostLinked(a, b int) bool {
	if len(c.hostPeers[a]) > len(c.hostPeers[b]) {
		a, b = b, a
	}
	for _, p := range c.hostPeers[a] {
		if c.find(p) == b {
			return true
		}
	}
	return false
}

// reachesAround reports whether cluster a reaches cluster b other than by
// an edge from a to b, through nodes up to position limit (v's): then
// contracting the edge a -> b closes a cycle. (There is no path from b to
// a: the contracted graph is acyclic.)
func (c *contraction) reachesAround(a, b, limit int) bool {
	c.epoch++
	c.seen[a] = c.epoch
	c.stack = append(c.stack[:0], a)
	for len(c.stack) > 0 {
		r := c.stack[len(c.stack)-1]
		c.stack = c.stack[:len(c.stack)-1]
		for _, t := range c.successors(r, limit) {
			s := c.find(t)
			if s == b {
				if r != a {
					return true
				}
				continue
			}
			if c.seen[s] != c.epoch {
				c.seen[s] = c.epoch
				c.stack = append(c.stack, s)
			}
		}
	}
	return false
}

// successors are the nodes up to position limit that root r's members
// feed, outside r. Edges merging made internal are dropped for good.
func (c *contraction) successors(r, limit int) []int {
	for h := &c.later[r]; h.Len() > 0 && (*h)[0] <= limit; {
		c.succ[r] = append(c.succ[r], c.order[heap.Pop(h).(int)])
	}
	out := c.succ[r][:0]
	for _, t := range c.succ[r] {
		if c.find(t) != r {
			out = append(out, t)
		}
	}
	c.succ[r] = out
	return out
}

// positions is a min-heap of positions in the topological order.
type positions []int

func (h positions) Len() int           { return len(h) }
func (h positions) Less(i, j int) bool { return h[i] < h[j] }
func (h positions) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *positions) Push(x any)        { *h = append(*h, x.(int)) }
func (h *positions) Pop() any {
	x := (*h)[len(*h)-1]
	*h = (*h)[:len(*h)-1]
	return x
}

// plan is one cluster, before the graph is rewritten.
type plan struct {
	name       string
	members    []int    // in topological order
	dev, host  []tensor // the args, each kind in order of first use
	tin, thost []pb.DataType
	control    []string // the non-members members wait for
	outputs    []tensor // the member outputs read outside, in order
	tout       []pb.DataType
	output     map[tensor]int // position in outputs
}

// planCluster works out the cluster of members (in says who they are): its
// args, outputs and their dtypes. ok is false when a dtype cannot be told.
func planCluster(x *graph, members []int, in func(int) bool, host [][]int, types *typer) (p *plan, ok bool) {
	p = &plan{members: members, output: map[tensor]int{}}
	devSeen, hostSeen := map[tensor]bool{}, map[tensor]bool{}
	controlSeen := map[string]bool{}
	for _, m := range members {
		for pos, t := range x.data[m] {
			if t.node >= 0 && in(t.node) {
				continue
			}
			dt, ok := types.of(t)
			if !ok {
				return nil, false
			}
			if slices.Contains(host[m], pos) {
				if !hostSeen[t] {
					hostSeen[t] = true
					p.host, p.thost = append(p.host, t), append(p.thost, dt)
				}
			} else if !devSeen[t] {
				devSeen[t] = true
				p.dev, p.tin = append(p.dev, t), append(p.tin, dt)
			}
		}
		for _, s := range x.nodes[m].Input {
			name, _, control := parseInput(s)
			if !control {
				continue
			}
			if i, ok := x.index[name]; ok && in(i) {
				continue
			}
			if !controlSeen[name] {
				controlSeen[name] = true
				p.control = append(p.control, name)
			}
		}
	}

	var readers []int
	for _, m := range members {
		for _, r := range x.consumers[m] {
			if !in(r) {
				readers = append(readers, r)
			}
		}
	}
	slices.Sort(readers)
	for _, r := range slices.Compact(readers) {
		for _, t := range x.data[r] {
			if _, dup := p.output[t]; t.node < 0 || !in(t.node) || dup {
				continue
			}
			dt, ok := types.of(t)
			if !ok {
				return nil, false
			}
			p.output[t] = len(p.outputs)
			p.outputs, p.tout = append(p.outputs, t), append(p.tout, dt)
		}
	}
	return p, true
}

// node is the cluster's node. owner and plans say which nodes the other
// clusters replace, so that args they produce are named by their outputs.
func (p *plan) node(x *graph, owner []int, plans []*plan) (*pb.NodeDef, error) {
	name := func(t tensor) string { return tensorName(x, t, owner, plans) }
	n := &pb.NodeDef{Name: p.name, Op: ClusterOp, Device: x.nodes[p.members[0]].Device}
	var inputs, hostInputs [][]byte
	for _, t := range p.dev {
		n.Input = append(n.Input, name(t))
		inputs = append(inputs, []byte(name(t)))
	}
	for _, t := range p.host {
		n.Input = append(n.Input, name(t))
		hostInputs = append(hostInputs, []byte(name(t)))
	}
	controls := map[string]bool{}
	for _, c := range p.control {
		if in := "^" + controlName(x, c, owner, plans); !controls[in] {
			controls[in] = true
			n.Input = append(n.Input, in)
		}
	}
	outputs := make([][]byte, len(p.outputs))
	for i, t := range p.outputs {
		outputs[i] = []byte(canonical(x.nodes[t.node].Name, t.port))
	}

	// The members' copies keep their inputs as written, but for those
	// another cluster now produces, which the node's args name so.
	members := &pb.GraphDef{}
	for _, m := range p.members {
		c := proto.Clone(x.nodes[m]).(*pb.NodeDef)
		c.Input = nil
		for i, s := range dataInputs(x.nodes[m]) {
			if t := x.data[m][i]; t.node >= 0 && owner[t.node] >= 0 && plans[owner[t.node]] != p {
				s = name(t)
			}
			c.Input = append(c.Input, s)
		}
		members.Node = append(members.Node, c)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(members)
	if err != nil {
		return nil, err
	}

	types := func(t []pb.DataType) *pb.AttrValue {
		return &pb.AttrValue{Value: &pb.AttrValue_List{List: &pb.AttrValue_ListValue{Type: t}}}
	}
	strs := func(s [][]byte) *pb.AttrValue {
		return &pb.AttrValue{Value: &pb.AttrValue_List{List: &pb.AttrValue_ListValue{S: s}}}
	}
	n.Attr = map[string]*pb.AttrValue{
		"Tin": types(p.tin), "Thost": types(p.thost), "Tout": types(p.tout),
		"inputs": strs(inputs), "host_inputs": strs(hostInputs), "outputs": strs(outputs),
		"members": {Value: &pb.AttrValue_S{S: b}},
	}
	return n, nil
}

// tensorName is t's name in the rewritten graph: an output of the cluster
// t's node went into, or t's canonical name.
func tensorName(x *graph, t tensor, owner []int, plans []*plan) string {
	if o := owner[t.node]; o >= 0 {
		return canonical(plans[o].name, plans[o].output[t])
	}
	return canonical(x.nodes[t.node].Name, t.port)
}

// controlName is the node that stands for node name in the rewritten
// graph: the cluster it went into, or itself.
func controlName(x *graph, name string, owner []int, plans []*plan) string {
	if i, ok := x.index[name]; ok && owner[i] >= 0 {
		return plans[owner[i]].name
	}
	return name
}

// rewire makes non-member n read the clusters in place of their members:
// member outputs become cluster outputs, control inputs from members
// control inputs from their clusters, each once. A node reading no member
// is left exactly as it was.
func rewire(x *graph, n int, owner []int, plans []*plan) {
	reads := slices.ContainsFunc(x.data[n], func(t tensor) bool { return t.node >= 0 && owner[t.node] >= 0 }) ||
		slices.ContainsFunc(x.control[n], func(c int) bool { return c >= 0 && owner[c] >= 0 })
	if !reads {
		return
	}
	nd := x.nodes[n]
	var input []string
	for i, s := range dataInputs(nd) {
		if t := x.data[n][i]; t.node >= 0 && owner[t.node] >= 0 {
			s = tensorName(x, t, owner, plans)
		}
		input = append(input, s)
	}
	controls := map[string]bool{}
	for _, s := range nd.Input {
		if name, _, control := parseInput(s); control {
			if c := "^" + controlName(x, name, owner, plans); !controls[c] {
				controls[c] = true
				input = append(input, c)
			}
		}
	}
	nd.Input = input
}

// typer tells the dtypes of node outputs, from their ops' definitions,
// each asked for once.
type typer struct {
	x     *graph
	def   func(op string) *pb.OpDef
	defs  map[string]*pb.OpDef
	known map[int][]pb.DataType // by node; nil when they cannot be told
}

func (t *typer) of(at tensor) (pb.DataType, bool) {
	if at.node < 0 {
		return 0, false
	}
	out, ok := t.known[at.node]
	if !ok {
		n := t.x.nodes[at.node]
		out = outputTypes(n, t.opDef(n.Op))
		t.known[at.node] = out
	}
	if at.port >= len(out) {
		return 0, false
	}
	return out[at.port], true
}

func (t *typer) opDef(op string) *pb.OpDef {
	d, ok := t.defs[op]
	if !ok && t.def != nil {
		d = t.def(op)
		t.defs[op] = d
	}
	return d
}

// outputTypes are the dtypes of n's outputs, flattened as output ports
// count them ("split:1" is the second tensor of Split's one list output),
// or nil when def (n's op's definition) is missing or they cannot be told.
// A cluster node's are its Tout, whether or not TensorFlow knows its op.
func outputTypes(n *pb.NodeDef, def *pb.OpDef) []pb.DataType {
	if n.Op == ClusterOp {
		return n.Attr["Tout"].GetList().GetType()
	}
	if def == nil {
		return nil
	}
	attr := func(name string) *pb.AttrValue {
		if v, ok := n.Attr[name]; ok {
			return v
		}
		for _, a := range def.Attr {
			if a.Name == name {
				return a.DefaultValue
			}
		}
		return nil
	}
	out := []pb.DataType{}
	for _, arg := range def.OutputArg {
		t := arg.Type
		if arg.TypeAttr != "" {
			t = attr(arg.TypeAttr).GetType()
		}
		switch {
		case arg.TypeListAttr != "":
			list := attr(arg.TypeListAttr)
			if list == nil || slices.Contains(list.GetList().GetType(), pb.DataType_DT_INVALID) {
				return nil
			}
			out = append(out, list.GetList().GetType()...)
		case t == pb.DataType_DT_INVALID:
			return nil
		case arg.NumberAttr != "":
			count := attr(arg.NumberAttr)
			if count == nil || count.GetI() < 0 {
				return nil
			}
			for range count.GetI() {
				out = append(out, t)
			}
		default:
			out = append(out, t)
		}
	}
	return out
}
