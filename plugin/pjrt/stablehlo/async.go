package stablehlo

import (
	"encoding/json"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// jax's asynchronous collectives (parallel.all_gather_start and the like)
// are async_start, whose region computes the collective from the start's
// operands and whose result is a future, and async_done, which takes the
// future and yields its values. One device runs in order, so the start's
// region is translated in place, and the future stands for its values
// until async_done hands them out.

func asyncStart(e *env, op *mlir.Operation) ([]ir.Value, error) {
	if len(op.Regions) != 1 || len(op.Regions[0].Blocks) != 1 {
		return nil, unsupported(op, "an async_start of other than one region of one block")
	}
	if len(op.Results) != 1 {
		return nil, invalid(op, "has %d results, want its future", len(op.Results))
	}
	blk := op.Regions[0].Blocks[0]
	args, err := e.operands(op)
	if err != nil {
		return nil, err
	}
	if len(blk.Args) != len(args) {
		return nil, invalid(op, "its region takes %d arguments for %d operands", len(blk.Args), len(args))
	}
	for i, a := range blk.Args {
		e.vals[a] = args[i]
	}
	results, err := e.block(op, blk)
	if err != nil {
		return nil, err
	}
	e.futures[op.Results[0]] = results
	return nil, nil
}

func asyncDone(e *env, op *mlir.Operation) ([]ir.Value, error) {
	if len(op.Operands) != 1 {
		return nil, invalid(op, "has %d operands, want a future", len(op.Operands))
	}
	vals, ok := e.futures[op.Operands[0]]
	if !ok {
		return nil, unsupported(op, "a future that is not an async_start's in the same region")
	}
	if len(vals) != len(op.Results) {
		return nil, invalid(op, "has %d results for a future of %d values", len(op.Results), len(vals))
	}
	for i, r := range op.Results {
		e.vals[r] = vals[i]
	}
	return nil, nil
}

// jax 0.12 writes the same collectives as pairs of custom calls,
// "all-gather-start" then "all-gather-done" and so on, whose frontend
// attribute async_collective_config (JSON) holds the collective's
// parameters. On one device each start is its operand, or for a
// collective-permute that sends the device nothing, zeros; each done is
// its start.
var asyncCollectives = []string{"all-gather", "all-reduce", "reduce-scatter", "all-to-all", "collective-permute"}

func init() {
	for _, name := range asyncCollectives {
		customCalls[name+"-start"] = asyncCollectiveStart
		customCalls[name+"-done"] = asyncCollectiveDone
	}
}

// asyncConfig is what async_collective_config says that matters on one
// device.
type asyncConfig struct {
	ReplicaGroups [][]int64 `json:"replica_groups"`
	Permutation   [][]int64 `json:"permutation"`
}

func asyncCollectiveStart(e *env, op *mlir.Operation) ([]ir.Value, error) {
	if len(op.Operands) != 1 || len(op.Results) != 1 || !mlir.Equal(op.Operands[0].Type, op.Results[0].Type) {
		return nil, unsupported(op, "an asynchronous collective of %d operands and %d results, or of another result type", len(op.Operands), len(op.Results))
	}
	target, _ := stringAttr(op, "call_target_name")
	var cfg asyncConfig
	if fa, ok := op.Attr("mhlo.frontend_attributes"); ok {
		if d, ok := fa.(*mlir.DictAttr); ok {
			if raw, ok := d.Get("async_collective_config"); ok {
				s, isString := raw.(*mlir.StringAttr)
				if !isString {
					return nil, invalid(op, "async_collective_config is %s, not a string", raw)
				}
				if err := json.Unmarshal([]byte(s.Value), &cfg); err != nil {
					return nil, invalid(op, "async_collective_config %q: %v", s.Value, err)
				}
			}
		}
	}
	for _, g := range cfg.ReplicaGroups {
		for _, id := range g {
			if id != 0 {
				return nil, invalid(op, "%s names device %d; the program runs on one device", target, id)
			}
		}
	}
	x, err := oneOperand(e, op)
	if err != nil {
		return nil, err
	}
	if target != "collective-permute-start" {
		return one(x), nil
	}
	for _, pair := range cfg.Permutation {
		if len(pair) != 2 || pair[0] != 0 || pair[1] != 0 {
			return nil, invalid(op, "the pair %v names a device other than the one this program runs on", pair)
		}
	}
	if len(cfg.Permutation) > 0 {
		return one(x), nil // the device sends to itself
	}
	t := e.b.Type(x)
	return one(e.b.Constant(t, make([]byte, t.Bytes()))), nil
}

func asyncCollectiveDone(e *env, op *mlir.Operation) ([]ir.Value, error) {
	if len(op.Operands) != 1 || len(op.Results) != 1 || !mlir.Equal(op.Operands[0].Type, op.Results[0].Type) {
		return nil, unsupported(op, "an asynchronous collective's done of %d operands and %d results, or of another result type", len(op.Operands), len(op.Results))
	}
	return identity(e, op)
}
