package stablehlo

import (
	"path/filepath"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
)

// TestOneDeviceCollectives: on one device a collective has one
// participant, so all_reduce, all_gather, all_to_all and reduce_scatter
// give their operand back and partition_id and replica_id are 0 (jax's
// profiler_test, pjit_test, shard_map_test and checkify_test run them on
// a mesh of the one device). StableHLO's golden functions hold them with
// groups of one participant each.
func TestOneDeviceCollectives(t *testing.T) {
	m := readModule(t, filepath.Join(mlirFixtures, "stablehlo", "stablehlo_legalize_to_vhlo.1_20_0.mlir.bc"))
	p, err := translate(m, "op_all_reduce")
	if err != nil {
		t.Fatal(err)
	}
	x := eval.New(ir.TensorType{DType: ir.F32})
	x.F[0] = 3.5
	got, err := eval.Run(p, []eval.Tensor{x})
	if err != nil || len(got) != 1 || got[0].F[0] != 3.5 {
		t.Errorf("all_reduce of one participant: %v, %v", got, err)
	}
	for _, name := range []string{"op_partition_id", "op_replica_id"} {
		p, err := translate(m, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := eval.Run(p, nil)
		if err != nil || len(got) != 1 || got[0].I[0] != 0 {
			t.Errorf("%s: %v, %v", name, got, err)
		}
	}
}
