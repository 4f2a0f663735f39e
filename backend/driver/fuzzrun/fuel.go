package fuzzrun

import (
	"encoding/binary"
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
)

// Fuel returns p with every while loop, p's own and those in its regions,
// carrying one more value: an int32 count of the trips so far, which the
// condition also tests, so that no loop runs more than trips times
// whatever its data say. A fuzzer changes a loop's bound or its step as
// easily as anything else; without fuel, a loop that never ends would be
// indistinguishable from a driver that hangs. The loops' results are the
// first ones, unchanged in number and type, so p's other instructions and
// results stay as they were. p is not modified.
func Fuel(p *ir.Program, trips int) *ir.Program {
	if p == nil {
		return nil
	}
	q := &ir.Program{Params: slices.Clone(p.Params)}
	remap := make([]ir.Value, len(p.Instrs))
	mapped := func(vs []ir.Value) []ir.Value {
		out := make([]ir.Value, len(vs))
		for i, v := range vs {
			out[i] = v
			if int(v) >= 0 && int(v) < len(remap) {
				out[i] = remap[v]
			}
		}
		return out
	}
	for i, in := range p.Instrs {
		in.Args = mapped(in.Args)
		if in.Regions != nil {
			rs := make([]*ir.Program, len(in.Regions))
			for j, r := range in.Regions {
				rs[j] = Fuel(r, trips)
			}
			in.Regions = rs
		}
		if in.Op == ir.OpWhile && len(in.Regions) == 2 && in.Regions[0] != nil && in.Regions[1] != nil {
			zero := emit(q, ir.Instr{Op: ir.OpConstant, Type: counterType, Literal: int32Bytes(0)})
			in.Args = append(in.Args, zero)
			in.Tuple = append(slices.Clone(in.Tuple), counterType)
			in.Regions = []*ir.Program{fuelCond(in.Regions[0], trips), fuelBody(in.Regions[1])}
		}
		remap[i] = emit(q, in)
	}
	q.Results = mapped(p.Results)
	return q
}

var counterType = ir.TensorType{DType: ir.I32}

func int32Bytes(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }

func emit(p *ir.Program, in ir.Instr) ir.Value {
	p.Instrs = append(p.Instrs, in)
	return ir.Value(len(p.Instrs) - 1)
}

// withCounter copies a loop region and gives it the counter as its last
// parameter.
func withCounter(r *ir.Program) (*ir.Program, ir.Value) {
	q := &ir.Program{Params: append(slices.Clone(r.Params), counterType), Instrs: slices.Clone(r.Instrs)}
	k := emit(q, ir.Instr{Op: ir.OpParameter, Type: counterType, Param: len(r.Params)})
	return q, k
}

// fuelCond is cond(values) && count < trips.
func fuelCond(cond *ir.Program, trips int) *ir.Program {
	q, k := withCounter(cond)
	if len(cond.Results) != 1 {
		q.Results = slices.Clone(cond.Results) // malformed: Verify will say so
		return q
	}
	limit := emit(q, ir.Instr{Op: ir.OpConstant, Type: counterType, Literal: int32Bytes(int32(min(trips, 1<<31-1)))})
	below := emit(q, ir.Instr{Op: ir.OpCompare, Args: []ir.Value{k, limit}, Type: ir.TensorType{DType: ir.Bool}, Compare: ir.CmpLT})
	both := emit(q, ir.Instr{Op: ir.OpAnd, Args: []ir.Value{cond.Results[0], below}, Type: ir.TensorType{DType: ir.Bool}})
	q.Results = []ir.Value{both}
	return q
}

// fuelBody is body(values), count + 1.
func fuelBody(body *ir.Program) *ir.Program {
	q, k := withCounter(body)
	one := emit(q, ir.Instr{Op: ir.OpConstant, Type: counterType, Literal: int32Bytes(1)})
	next := emit(q, ir.Instr{Op: ir.OpAdd, Args: []ir.Value{k, one}, Type: counterType})
	q.Results = append(slices.Clone(body.Results), next)
	return q
}
