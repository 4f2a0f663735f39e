package metal

import (
	"github.com/metalplug/metalplug/backend/driver/metal/gpu"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() { registerLowering(lowerConv, ir.OpConvolution) }

// lowerConv lowers a channels-last convolution of one or two spatial dims
// to MPSGraph's 2-D convolution (NHWC input, HWIO weights: exactly the IR's
// layouts). Input dilation (transposed convolution) and the padding,
// negative amounts included, are applied to the input first with padGeneral,
// so the convolution itself has zero padding; kernel dilation, strides and
// feature groups map onto the descriptor. One spatial dim becomes a height
// of 1. Three or more run on the CPU: darwinkit v0.5.0 binds no 3-D
// convolution descriptor.
func lowerConv(l *lowering, in ir.Instr, args []val) (tensor, error) {
	a := *in.Conv
	ti, tk := args[0].typ, args[1].typ
	ns := ti.Shape.Rank() - 2
	if ns > 2 {
		return tensor{}, fallback(in.Op, "%d spatial dimensions (MPSGraph's 3-D convolution is not bound by darwinkit v0.5.0)", ns)
	}
	def := func(s []int) []int {
		if s == nil {
			return ones(ns)
		}
		return s
	}
	strides, lhsDil, rhsDil := def(a.Strides), def(a.LhsDilation), def(a.RhsDilation)
	padding := a.Padding
	if padding == nil {
		padding = make([][2]int, ns)
	}
	groups := max(a.FeatureGroups, 1)

	x, k := args[0].t, args[1].t
	xs, ks := []int(ti.Shape.Clone()), []int(tk.Shape.Clone())
	if ns == 1 { // [N, W, C] -> [N, 1, W, C]; [KW, I, O] -> [1, KW, I, O]
		xs = []int{xs[0], 1, xs[1], xs[2]}
		ks = []int{1, ks[0], ks[1], ks[2]}
		x, k = l.reshape(x, xs), l.reshape(k, ks)
		strides, lhsDil, rhsDil = []int{1, strides[0]}, []int{1, lhsDil[0]}, []int{1, rhsDil[0]}
		padding = [][2]int{{0, 0}, padding[0]}
	}
	low, high, interior := make([]int, 4), make([]int, 4), make([]int, 4)
	for i := range 2 {
		low[1+i], high[1+i], interior[1+i] = padding[i][0], padding[i][1], lhsDil[i]-1
	}
	x = l.padGeneral(x, xs, low, high, interior, 0)

	out := l.g.Convolution2D(x, k, gpu.Conv2D{
		StrideY: strides[0], StrideX: strides[1],
		DilationY: rhsDil[0], DilationX: rhsDil[1],
		Groups: groups,
	})
	return l.toShape(out, in.Type), nil
}
