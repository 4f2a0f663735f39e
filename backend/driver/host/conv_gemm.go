package host

import "github.com/metalplug/metalplug/backend/ir"

// convGemm runs an ungrouped float32 convolution as one sgemm over the
// implicit im2col matrix: row r is output position r (batch-major), column
// t*C+c is input channel c at kernel position t (row-major over the window),
// so the HWIO kernel [K..., C, O] is already the K x O right-hand matrix and
// the NHWC output the M x O result. The im2col rows are never built: the A
// packer reads each row's window straight from the input, writing zeros for
// padding and lhs-dilation holes.
type convGemm struct {
	p *convPlan
	// offs[d][o*kd+k] is the input element offset, along spatial dim d, that
	// output coordinate o reads at kernel index k, or -1 when it lands on
	// padding or a hole.
	offs  [][]int
	kdims []int // kernel window size per spatial dim
	kpos  int   // positions in the window
}

func newConvGemm(p *convPlan, input, kernelShape ir.Shape, a *ir.ConvAttrs) *convGemm {
	g := &convGemm{p: p, kpos: 1}
	inStrides := input.Strides()
	for d := range p.ns {
		size, kd := input[1+d], kernelShape[d]
		g.kdims = append(g.kdims, kd)
		g.kpos *= kd
		dilated := 0
		if size > 0 {
			dilated = (size-1)*a.LhsDilation[d] + 1
		}
		t := make([]int, p.outSpatial[d]*kd)
		for o := range p.outSpatial[d] {
			for k := range kd {
				pos := o*a.Strides[d] + k*a.RhsDilation[d] - a.Padding[d][0]
				if pos < 0 || pos >= dilated || pos%a.LhsDilation[d] != 0 {
					t[o*kd+k] = -1
				} else {
					t[o*kd+k] = pos / a.LhsDilation[d] * inStrides[1+d]
				}
			}
		}
		g.offs = append(g.offs, t)
	}
	return g
}

// rowOffsets fills offs[t] for the window positions t0 <= t <= t1 of output
// position r with their input offsets, -1 where they read nothing.
func (g *convGemm) rowOffsets(offs []int, r, t0, t1 int, idx []int) {
	p := g.p
	n, rem := r/max(p.outPos, 1), r%max(p.outPos, 1)
	for d := p.ns - 1; d >= 0; d-- {
		idx[d] = rem % p.outSpatial[d]
		rem /= p.outSpatial[d]
	}
	base := n * p.inImage
	for t := t0; t <= t1; t++ {
		off := base
		rest := t // window position, last dim fastest (the kernel's order)
		for d := p.ns - 1; d >= 0; d-- {
			k := rest % g.kdims[d]
			rest /= g.kdims[d]
			o := g.offs[d][idx[d]*g.kdims[d]+k]
			if o < 0 {
				off = -1
				break
			}
			off += o
		}
		offs[t] = off
	}
}

func (g *convGemm) run(z, x, w []float32) {
	p := g.p
	M, N, K := p.batch*p.outPos, p.o, g.kpos*p.c
	clear(z)
	C := p.c
	packA := func(dst []float32, i0, rows, k0, kc int) {
		t0, t1 := k0/C, (k0+kc-1)/C
		var offs [gemmMR][]int
		for y := range offs {
			offs[y] = make([]int, g.kpos)
		}
		idx := make([]int, p.ns)
		for ir := 0; ir < rows; ir += gemmMR {
			pan := dst[ir*kc : ir*kc+gemmMR*kc]
			r := min(gemmMR, rows-ir)
			for y := range gemmMR {
				if y < r {
					g.rowOffsets(offs[y], i0+ir+y, t0, t1, idx)
				} else {
					for t := t0; t <= t1; t++ {
						offs[y][t] = -1 // past the last row: zeros
					}
				}
			}
			for t := t0; t <= t1; t++ {
				c0, c1 := max(k0-t*C, 0), min(k0+kc-t*C, C)
				dk := t*C + c0 - k0 // column in the block
				n := c1 - c0
				cols := pan[dk*gemmMR : (dk+n)*gemmMR]
				all := true
				for y := range gemmMR {
					all = all && offs[y][t] >= 0
				}
				if all {
					// Every row reads real input: six contiguous runs
					// interleaved into the panel.
					s0 := x[offs[0][t]+c0 : offs[0][t]+c1]
					s1 := x[offs[1][t]+c0 : offs[1][t]+c1][:n]
					s2 := x[offs[2][t]+c0 : offs[2][t]+c1][:n]
					s3 := x[offs[3][t]+c0 : offs[3][t]+c1][:n]
					s4 := x[offs[4][t]+c0 : offs[4][t]+c1][:n]
					s5 := x[offs[5][t]+c0 : offs[5][t]+c1][:n]
					for j, v := range s0 {
						o := cols[j*gemmMR : j*gemmMR+gemmMR : j*gemmMR+gemmMR]
						o[0], o[1], o[2], o[3], o[4], o[5] = v, s1[j], s2[j], s3[j], s4[j], s5[j]
					}
					continue
				}
				for y := range gemmMR {
					off := offs[y][t]
					if off < 0 {
						for j := range n {
							cols[j*gemmMR+y] = 0
						}
						continue
					}
					for j, v := range x[off+c0 : off+c1] {
						cols[j*gemmMR+y] = v
					}
				}
			}
		}
	}
	sgemm(z, N, M, N, K, packA, packRowMajorB(w, N, N))
}
