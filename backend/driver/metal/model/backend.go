package model

import (
	"fmt"
	"slices"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// backend is an MPSGraph being built: the nodes gpu.Graph checked, by ID.
type backend struct {
	nodes    []*gpu.Node // nodes[id-1]
	released bool
}

// Add records n under n.Out.ID (gpu.Graph numbers nodes from 1 in call
// order, so an operand always has a smaller ID than its user).
func (b *backend) Add(n *gpu.Node) {
	id := n.Out.ID
	if id < 1 {
		return // not a node gpu.Graph made; Compile will not find it
	}
	for len(b.nodes) < id {
		b.nodes = append(b.nodes, nil)
	}
	b.nodes[id-1] = n
}

func (b *backend) Release() {
	b.nodes = nil
	b.released = true
}

// node finds t's node, which must be the one that made t: a tensor of
// another graph may carry the same ID.
func (b *backend) node(t gpu.Tensor) (*gpu.Node, error) {
	if t.ID < 1 || t.ID > len(b.nodes) || b.nodes[t.ID-1] == nil {
		return nil, fmt.Errorf("MPSGraph model: compile: %v (node %d) is not a tensor of this graph", t, t.ID)
	}
	n := b.nodes[t.ID-1]
	if n.Out.DType != t.DType || !slices.Equal(n.Out.Shape, t.Shape) {
		return nil, fmt.Errorf("MPSGraph model: compile: %v (node %d) is not a tensor of this graph, whose node %d is %v", t, t.ID, t.ID, n.Out)
	}
	return n, nil
}

// Compile keeps the nodes the targets need, in ID order (which is an
// order of evaluation), after checking that feeds are distinct placeholders
// and that every placeholder the targets need is fed, as MPSGraph's
// compilation does.
func (b *backend) Compile(feeds, targets []gpu.Tensor) (gpu.Executable, error) {
	if b.released {
		return nil, fmt.Errorf("MPSGraph model: compile: the graph was released")
	}
	fed := map[int]bool{}
	for i, f := range feeds {
		n, err := b.node(f)
		if err != nil {
			return nil, err
		}
		if n.Op != gpu.OpPlaceholder {
			return nil, fmt.Errorf("MPSGraph model: compile: feed %d is %v, not a placeholder", i, n)
		}
		if fed[f.ID] {
			return nil, fmt.Errorf("MPSGraph model: compile: feed %d (%v) is fed twice", i, f)
		}
		fed[f.ID] = true
	}
	need := map[int]bool{}
	var visit func(n *gpu.Node) error
	visit = func(n *gpu.Node) error {
		if need[n.Out.ID] {
			return nil
		}
		need[n.Out.ID] = true
		if n.Op == gpu.OpPlaceholder && !fed[n.Out.ID] {
			return fmt.Errorf("MPSGraph model: compile: placeholder %v (node %d) is needed but not fed", n.Out, n.Out.ID)
		}
		for _, a := range n.Args {
			an, err := b.node(a)
			if err != nil {
				return err
			}
			if err := visit(an); err != nil {
				return err
			}
		}
		return nil
	}
	for _, t := range targets {
		n, err := b.node(t)
		if err != nil {
			return nil, err
		}
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	e := &executable{feeds: slices.Clone(feeds), targets: slices.Clone(targets), lastUse: map[int]int{}}
	for _, n := range b.nodes {
		if n != nil && need[n.Out.ID] {
			e.nodes = append(e.nodes, n)
		}
	}
	// An intermediate value is dropped after its last use, so a run holds
	// about what MPSGraph's would rather than every value of the graph.
	for k, n := range e.nodes {
		for _, a := range n.Args {
			e.lastUse[a.ID] = k
		}
	}
	for _, t := range targets {
		e.lastUse[t.ID] = len(e.nodes)
	}
	e.peak = peakBytes(e)
	return e, nil
}

// peakBytes is the most bytes of intermediates a run of e holds at once:
// each computed value that is not a target, from its node to its last
// use. MPSGraph takes its intermediates from the device's memory; the model
// has a run ask for this much (device.reserve), so that a graph that does
// not fit fails as its command buffer would on a Mac.
func peakBytes(e *executable) int64 {
	targets := map[int]bool{}
	for _, t := range e.targets {
		targets[t.ID] = true
	}
	freed := make([]int64, len(e.nodes)+1) // bytes given back after node k
	var live, peak int64
	for k, n := range e.nodes {
		// Placeholders and targets are the bound buffers, memory
		// allocated already.
		if n.Op != gpu.OpPlaceholder && !targets[n.Out.ID] {
			b := int64(elements(n.Out.Shape) * n.Out.DType.Size())
			live += b
			peak = max(peak, live)
			freed[max(e.lastUse[n.Out.ID], k)] += b
		}
		live -= freed[k] // what node k read last
	}
	return peak
}
