package metal

import (
	"slices"

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
// of 1; three are a sum of 2-D convolutions (conv3D), since darwinkit
// v0.5.0 binds no 3-D convolution descriptor. More run on the CPU.
func lowerConv(l *lowering, in ir.Instr, args []val) (tensor, error) {
	a := *in.Conv
	ti, tk := args[0].typ, args[1].typ
	ns := ti.Shape.Rank() - 2
	if ns > 3 {
		return tensor{}, fallback(in.Op, "%d spatial dimensions (MPSGraph's 3-D convolution is not bound by darwinkit v0.5.0, and more are folded only from three)", ns)
	}
	if ns == 3 {
		return l.conv3D(in, args)
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

// conv3D is a convolution of three spatial dims (depth, height, width) as
// a sum over the kernel's depth taps of 2-D convolutions: the input padded
// (and dilated) first, tap kd reads the depths kd*dilation + o*stride for
// each output depth o, which fold into the batch for one 2-D convolution
// by the kernel's slice kd; the taps' results add up. Exact as a sum of
// the same products; the order of the additions is MPSGraph's either way.
func (l *lowering) conv3D(in ir.Instr, args []val) (tensor, error) {
	a := *in.Conv
	ti, tk := args[0].typ, args[1].typ
	def := func(s []int) []int {
		if s == nil {
			return ones(3)
		}
		return s
	}
	strides, lhsDil, rhsDil := def(a.Strides), def(a.LhsDilation), def(a.RhsDilation)
	padding := a.Padding
	if padding == nil {
		padding = make([][2]int, 3)
	}
	xs, ks := []int(ti.Shape.Clone()), []int(tk.Shape.Clone())
	low, high, interior := make([]int, 5), make([]int, 5), make([]int, 5)
	for i := range 3 {
		low[1+i], high[1+i], interior[1+i] = padding[i][0], padding[i][1], lhsDil[i]-1
	}
	x := l.padGeneral(args[0].t, xs, low, high, interior, 0)
	for i := range 3 { // the padded, dilated shape
		if xs[1+i] > 0 {
			xs[1+i] = (xs[1+i]-1)*lhsDil[i] + 1
		}
		xs[1+i] += padding[i][0] + padding[i][1]
	}
	n, c := xs[0], xs[4]
	kd, o := ks[0], ks[4]
	out := []int(in.Type.Shape)
	od := out[1]
	if kd > maxWindowElements {
		return tensor{}, fallback(in.Op, "a 3-D kernel %d deep: one 2-D convolution per depth tap, up to %d", kd, maxWindowElements)
	}
	var sum tensor
	for t := range kd {
		from := t * rhsDil[0]
		starts, ends, steps := make([]int, 5), slices.Clone(xs), ones(5)
		starts[1], ends[1], steps[1] = from, from+(od-1)*strides[0]+1, strides[0]
		xt := l.reshape(l.slice(x, starts, ends, steps), []int{n * od, xs[2], xs[3], c})
		kstarts, kends := make([]int, 5), slices.Clone(ks)
		kstarts[0], kends[0] = t, t+1
		kt := l.reshape(l.slice(args[1].t, kstarts, kends, ones(5)), []int{ks[1], ks[2], ks[3], o})
		y := l.g.Convolution2D(xt, kt, gpu.Conv2D{
			StrideY: strides[1], StrideX: strides[2],
			DilationY: rhsDil[1], DilationX: rhsDil[2],
			Groups: max(a.FeatureGroups, 1),
		})
		if !sum.Valid() {
			sum = y
		} else {
			sum = l.add(sum, y)
		}
	}
	return l.toShape(sum, in.Type), nil
}
