package eval

// dot_general and convolution, summed in float64.

import (
	"slices"

	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	register(func(in ir.Instr, a []Tensor, out Tensor) (Tensor, error) {
		evalDot(in, a[0], a[1], out)
		return out, nil
	}, ir.OpDotGeneral)
	register(func(in ir.Instr, a []Tensor, out Tensor) (Tensor, error) {
		evalConv(in, a[0], a[1], out)
		return out, nil
	}, ir.OpConvolution)
}

func evalDot(in ir.Instr, x, y, out Tensor) {
	d := in.Dot
	tx, ty := x.Type.Shape, y.Type.Shape
	xfree := freeOf(tx, d.LhsBatch, d.LhsContract)
	yfree := freeOf(ty, d.RhsBatch, d.RhsContract)
	cshape := make(ir.Shape, len(d.LhsContract))
	for i, a := range d.LhsContract {
		cshape[i] = tx[a]
	}
	for k := range out.Type.Shape.Size() {
		o := Unravel(k, out.Type.Shape)
		xi, yi := make([]int, len(tx)), make([]int, len(ty))
		p := 0
		for i := range d.LhsBatch {
			xi[d.LhsBatch[i]], yi[d.RhsBatch[i]] = o[p], o[p]
			p++
		}
		for _, a := range xfree {
			xi[a] = o[p]
			p++
		}
		for _, a := range yfree {
			yi[a] = o[p]
			p++
		}
		sum := 0.0
		for m := range cshape.Size() {
			ci := Unravel(m, cshape)
			for i := range ci {
				xi[d.LhsContract[i]], yi[d.RhsContract[i]] = ci[i], ci[i]
			}
			sum += x.At(Ravel(xi, tx)) * y.At(Ravel(yi, ty))
		}
		out.Set(k, sum)
	}
}

func freeOf(s ir.Shape, batch, contract []int) []int {
	var f []int
	for i := range s {
		if !slices.Contains(batch, i) && !slices.Contains(contract, i) {
			f = append(f, i)
		}
	}
	return f
}

func evalConv(in ir.Instr, x, k, out Tensor) {
	a := in.Conv
	xs, ks, os := x.Type.Shape, k.Type.Shape, out.Type.Shape
	ns := len(xs) - 2
	strides, pad, ld, rd := ones(a.Strides, ns), a.Padding, ones(a.LhsDilation, ns), ones(a.RhsDilation, ns)
	if pad == nil {
		pad = make([][2]int, ns)
	}
	g := max(a.FeatureGroups, 1)
	cg := xs[ns+1] / g
	og := ks[ns+1] / g
	win := ks[:ns]
	for n := range os.Size() {
		o := Unravel(n, os)
		oc := o[ns+1]
		grp := oc / og
		sum := 0.0
		for m := range win.Size() {
			w := Unravel(m, win)
			xi := make([]int, ns+2)
			xi[0] = o[0]
			ok := true
			for i := range ns {
				j := o[1+i]*strides[i] + w[i]*rd[i] - pad[i][0]
				if j < 0 || j%ld[i] != 0 || j/ld[i] >= xs[1+i] {
					ok = false
					break
				}
				xi[1+i] = j / ld[i]
			}
			if !ok {
				continue
			}
			for ci := range cg {
				xi[ns+1] = grp*cg + ci
				ki := append(slices.Clone(w), ci, oc)
				sum += x.At(Ravel(xi, xs)) * k.At(Ravel(ki, ks))
			}
		}
		out.Set(n, sum)
	}
}

func ones(s []int, n int) []int {
	if s != nil {
		return s
	}
	return filled(n, 1)
}
