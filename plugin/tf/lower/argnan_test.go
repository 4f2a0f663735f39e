package lower

import (
	"math"
	"testing"

	"github.com/metalplug/metalplug/backend/ir"
)

// TestArgMaxMinLikeTheCPU: ArgMax and ArgMin give TensorFlow's CPU answer
// when NaN or the type's bounds are in the row: NaN never wins, nor does a
// value at or past the lowest (highest) finite one, and a row where nothing
// beats it gives 0. The expectations were measured with tf.argmax and
// tf.argmin on TensorFlow 2.21's CPU (oneDNN off).
func TestArgMaxMinLikeTheCPU(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		d              ir.DType
		row            []float64
		argmax, argmin float64
	}{
		{ir.F32, []float64{1, nan, 3}, 2, 0},
		{ir.F32, []float64{nan, 5, nan}, 1, 1},
		{ir.F32, []float64{nan, nan}, 0, 0},
		{ir.F32, []float64{nan, -inf}, 0, 1},
		{ir.F32, []float64{-inf, nan}, 0, 0},
		{ir.F32, []float64{nan, inf}, 1, 0},
		{ir.F32, []float64{inf, nan}, 0, 0},
		{ir.F32, []float64{nan, 1, nan, 1}, 1, 1},
		{ir.F32, []float64{nan, -3.4e38}, 1, 1},
		{ir.F16, []float64{nan, -3.4e38}, 0, 1}, // -inf in float16
		{ir.BF16, []float64{nan, 2, nan}, 1, 1},
	}
	for _, c := range cases {
		x := val(c.d, ir.Shape{len(c.row)}, c.row...)
		for op, want := range map[string]float64{"ArgMax": c.argmax, "ArgMin": c.argmin} {
			got := run(t, op, A(), x, val(ir.I32, nil, 0))[0]
			expectClose(t, op+" of "+c.d.String(), got, []float64{want}, 0)
		}
	}
}
