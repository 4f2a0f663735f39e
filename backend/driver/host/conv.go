package host

import (
	"github.com/metalplug/metalplug/backend/ir"
)

func init() {
	// A convolution costs a multiply-add per result element and kernel tap.
	register(opKernel{make: convKernel, work: func(in ir.Instr, argTypes []ir.TensorType) int {
		ks := argTypes[1].Shape
		return in.Type.Shape.Size() * max(1, ks.Size()/max(1, ks[len(ks)-1]))
	}}, ir.OpConvolution)
}

// tap is one kernel position along one spatial dimension that lands on a
// real input element (not padding, not an lhs-dilation hole), as element
// offsets into the kernel and the input.
type tap struct{ k, in int }

// convPlan precomputes, per spatial dimension and output coordinate, the taps
// that contribute, so the loop nest never tests for padding or holes: padded
// and dilated convolutions cost only the work that touches data.
type convPlan struct {
	ns         int
	batch      int
	c, o       int // input and output channels
	groups     int
	cg, og     int // channels per group
	outSpatial []int
	outPos     int // product of outSpatial
	taps       [][][]tap
	inImage    int // elements per input image
	work       int // multiply-adds per output position, for splitting
}

func newConvPlan(input, kernelShape ir.Shape, a *ir.ConvAttrs, out ir.Shape) *convPlan {
	ns := len(input) - 2
	p := &convPlan{
		ns:         ns,
		batch:      input[0],
		c:          input[ns+1],
		o:          kernelShape[ns+1],
		groups:     a.FeatureGroups,
		outSpatial: out[1 : ns+1],
		outPos:     ir.Shape(out[1 : ns+1]).Size(),
		inImage:    ir.Shape(input[1:]).Size(),
	}
	p.cg, p.og = p.c/p.groups, p.o/p.groups
	inStrides, kStrides := input.Strides(), kernelShape.Strides()
	kpos := 1
	p.taps = make([][][]tap, ns)
	for d := range ns {
		size, kd := input[1+d], kernelShape[d]
		kpos *= kd
		dilated := 0 // extent of the input after lhs dilation
		if size > 0 {
			dilated = (size-1)*a.LhsDilation[d] + 1
		}
		p.taps[d] = make([][]tap, p.outSpatial[d])
		for o := range p.outSpatial[d] {
			for k := range kd {
				pos := o*a.Strides[d] + k*a.RhsDilation[d] - a.Padding[d][0]
				if pos < 0 || pos >= dilated || pos%a.LhsDilation[d] != 0 {
					continue
				}
				p.taps[d][o] = append(p.taps[d][o], tap{k: k * kStrides[d], in: pos / a.LhsDilation[d] * inStrides[1+d]})
			}
		}
	}
	p.work = max(1, kpos*p.cg*p.o)
	return p
}

func convKernel(in ir.Instr, at []ir.TensorType) (kernel, error) {
	p := newConvPlan(at[0].Shape, at[1].Shape, in.Conv, in.Type.Shape)
	f32 := convOf[float32](p)
	if p.groups == 1 {
		// Ungrouped float32 (and half, widened) convolutions run as a matrix
		// multiply; see conv_gemm.go.
		g := newConvGemm(p, at[0].Shape, at[1].Shape, in.Conv)
		f32 = func(out []byte, ins [][]byte) {
			g.run(view[float32](out), view[float32](ins[0]), view[float32](ins[1]))
		}
	}
	return forFloat(in, at, true, f32, convOf[float64](p))
}

// convOf accumulates each output position's O channels over its taps, with
// the innermost loop running along output channels, contiguous in both the
// kernel and the output. Output positions are split across goroutines.
func convOf[T floatT](p *convPlan) kernel {
	return func(out []byte, ins [][]byte) {
		x, w, z := view[T](ins[0]), view[T](ins[1]), view[T](out)
		parallelFor(p.batch*p.outPos, max(1, parallelWork/p.work), func(lo, hi int) {
			idx := make([]int, p.ns)
			sel := make([]int, p.ns)
			lists := make([][]tap, p.ns)
			for pos := lo; pos < hi; pos++ {
				acc := z[pos*p.o : pos*p.o+p.o]
				clear(acc)
				n, rem := pos/max(p.outPos, 1), pos%max(p.outPos, 1)
				for d := p.ns - 1; d >= 0; d-- {
					idx[d] = rem % p.outSpatial[d]
					rem /= p.outSpatial[d]
				}
				none := false
				for d := range p.ns {
					lists[d] = p.taps[d][idx[d]]
					sel[d] = 0
					none = none || len(lists[d]) == 0
				}
				if none {
					continue
				}
				inBase := n * p.inImage
				for {
					kOff, inOff := 0, inBase
					for d, l := range lists {
						t := l[sel[d]]
						kOff += t.k
						inOff += t.in
					}
					convAccum(acc, x[inOff:inOff+p.c], w[kOff:kOff+p.cg*p.o], p)
					d := p.ns - 1
					for ; d >= 0; d-- {
						if sel[d]++; sel[d] < len(lists[d]) {
							break
						}
						sel[d] = 0
					}
					if d < 0 {
						break
					}
				}
			}
		})
	}
}

// convAccum adds one tap's contribution: acc[o] += sum_c xs[c] * ws[c, o]
// within each feature group.
func convAccum[T floatT](acc, xs, ws []T, p *convPlan) {
	o := p.o
	if p.groups == 1 {
		c := 0
		for ; c+4 <= p.cg; c += 4 {
			x0, x1, x2, x3 := xs[c], xs[c+1], xs[c+2], xs[c+3]
			w0 := ws[c*o : c*o+o]
			w1 := ws[(c+1)*o : (c+1)*o+o]
			w2 := ws[(c+2)*o : (c+2)*o+o]
			w3 := ws[(c+3)*o : (c+3)*o+o]
			w1, w2, w3, acc = w1[:len(w0)], w2[:len(w0)], w3[:len(w0)], acc[:len(w0)]
			for j, v := range w0 {
				acc[j] += x0*v + x1*w1[j] + x2*w2[j] + x3*w3[j]
			}
		}
		for ; c < p.cg; c++ {
			xv := xs[c]
			wr := ws[c*o : c*o+o]
			acc = acc[:len(wr)]
			for j, v := range wr {
				acc[j] += xv * v
			}
		}
		return
	}
	og, cg := p.og, p.cg
	for g := range p.groups {
		accg := acc[g*og : g*og+og]
		for c := range cg {
			xv := xs[g*cg+c]
			wr := ws[c*o+g*og : c*o+g*og+og]
			accg = accg[:len(wr)]
			for j, v := range wr {
				accg[j] += xv * v
			}
		}
	}
}
