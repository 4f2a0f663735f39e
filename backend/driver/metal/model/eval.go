package model

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// executable is a compiled graph: the nodes its targets need, in an order
// of evaluation. It is read-only once compiled, so several queues may run
// it at once.
type executable struct {
	nodes    []*gpu.Node
	feeds    []gpu.Tensor
	targets  []gpu.Tensor
	lastUse  map[int]int // node ID -> index in nodes of its last user; len(nodes) for targets
	peak     int64       // bytes of intermediates a run holds at most (peakBytes)
	released atomic.Bool
}

func (e *executable) Release() { e.released.Store(true) }

// opError is an error of one primitive during a run.
func opError(op gpu.Op, format string, a ...any) error {
	return fmt.Errorf("MPSGraph model: %s: %s", op, fmt.Sprintf(format, a...))
}

// run computes the targets from the feeds' values.
func (e *executable) run(inputs []*value) ([]*value, error) {
	vals := make(map[int]*value, len(e.nodes))
	for i, f := range e.feeds {
		vals[f.ID] = inputs[i]
	}
	for k, n := range e.nodes {
		if n.Op == gpu.OpPlaceholder {
			continue // Compile checked that it is fed
		}
		args := make([]*value, len(n.Args))
		for j, a := range n.Args {
			args[j] = vals[a.ID]
		}
		v, err := evalNode(n, args)
		if err != nil {
			return nil, err
		}
		vals[n.Out.ID] = v
		for _, a := range n.Args {
			if e.lastUse[a.ID] == k {
				delete(vals, a.ID)
			}
		}
	}
	outs := make([]*value, len(e.targets))
	for i, t := range e.targets {
		outs[i] = vals[t.ID]
	}
	return outs, nil
}

// evalNode computes one primitive. A panic (a node gpu.Graph did not check,
// or a bug here) becomes the primitive's error: the model never takes the
// process down.
func evalNode(n *gpu.Node, args []*value) (v *value, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, opError(n.Op, "%v: %v", n, r)
		}
	}()
	for j, a := range args {
		if a == nil {
			return nil, opError(n.Op, "operand %d has no value", j)
		}
	}
	v, err = dispatch(n, args)
	if err == nil && (v.dt != n.Out.DType || !slices.Equal(v.shape, n.Out.Shape)) {
		err = opError(n.Op, "the model computed %v for %v", v, n.Out)
	}
	return v, err
}

func dispatch(n *gpu.Node, a []*value) (*value, error) {
	switch op := n.Op; {
	case op == gpu.OpConstant:
		return evalConstant(n)
	case op == gpu.OpFill || op == gpu.OpScalar:
		return evalFill(n), nil
	case op >= gpu.OpIdentity && op <= gpu.OpNot:
		return evalUnary(n, a[0])
	case op >= gpu.OpAddition && op <= gpu.OpBitwiseRightShift:
		return evalBinary(n, a[0], a[1])
	case op == gpu.OpSelect:
		return evalSelect(n, a[0], a[1], a[2]), nil
	case op == gpu.OpCast:
		return evalCast(n, a[0]), nil
	case op == gpu.OpReinterpretCast:
		return evalReinterpret(n, a[0])
	case op == gpu.OpReshape:
		return evalReshape(n, a[0]), nil
	case op == gpu.OpBroadcast:
		return evalBroadcast(n, a[0]), nil
	case op == gpu.OpTranspose:
		return evalTranspose(n, a[0]), nil
	case op == gpu.OpSlice:
		return evalSlice(n, a[0]), nil
	case op == gpu.OpConcat:
		return evalConcat(n, a), nil
	case op == gpu.OpPad:
		return evalPad(n, a[0]), nil
	case op == gpu.OpReverse:
		return evalReverse(n, a[0]), nil
	case op == gpu.OpMatMul:
		return evalMatMul(n, a[0], a[1])
	case op == gpu.OpConvolution2D:
		return evalConv2D(n, a[0], a[1])
	case op >= gpu.OpReductionSum && op <= gpu.OpReductionMinimumNaN:
		return evalReduce(n, a[0])
	case op == gpu.OpArgSort:
		return evalArgSort(n, a[0]), nil
	case op == gpu.OpCumulativeSum:
		return evalCumSum(n, a[0]), nil
	case op == gpu.OpGather:
		return throughFloat32(evalGather(n, a[0], a[1]))
	case op == gpu.OpGatherAlongAxis:
		return throughFloat32(evalGatherAlongAxis(n, a[0], a[1]))
	case op == gpu.OpScatterND:
		return throughFloat32(evalScatterND(n, a[0], a[1], a[2]))
	}
	return nil, opError(n.Op, "not modelled")
}

// evalConstant reads the node's row-major little-endian bytes.
func evalConstant(n *gpu.Node) (*value, error) {
	v := newValue(n.Out.Shape, n.Out.DType)
	size := v.dt.Size()
	if len(n.Data) != v.size()*size {
		return nil, opError(n.Op, "%d bytes for %v", len(n.Data), n.Out)
	}
	for k := range v.size() {
		v.load(k, n.Data[k*size:])
	}
	return v, nil
}

// evalFill is a fill or a scalar: Value converted to the type as cast would.
func evalFill(n *gpu.Node) *value {
	one := fromFloat64(n.Value, n.Out.DType)
	v := newValue(n.Out.Shape, n.Out.DType)
	for k := range v.size() {
		v.set(k, one, 0)
	}
	return v
}
