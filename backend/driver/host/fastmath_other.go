//go:build !amd64

package host

import "github.com/metalplug/metalplug/backend/ir"

func tanhSlice(z, x []float32) {
	x = x[:len(z)]
	for i, v := range x {
		z[i] = tanh32(v)
	}
}

func sumF32(x []float32) float32 { return fold(ir.ReduceSum, 0, x) }
