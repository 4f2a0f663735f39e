package model

import (
	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// Contractions accumulate in float32 whatever the operand type, one
// multiply-add at a time in the order of the contracted index, rounding the
// product and then the sum as float32 arithmetic does (the explicit float32
// conversions keep Go from fusing them into one FMA). The result is then
// rounded to the result type.

func checkFloats(op gpu.Op, vs ...*value) error {
	for _, v := range vs {
		if !v.dt.IsFloat() {
			return opError(op, "%v operands are outside the contract", v.dt)
		}
	}
	return nil
}

// evalMatMul multiplies the last two dimensions, [.., M, K] x [.., K, N],
// broadcasting the batch dimensions.
func evalMatMul(n *gpu.Node, a, b *value) (*value, error) {
	if err := checkFloats(n.Op, a, b); err != nil {
		return nil, err
	}
	out := newValue(n.Out.Shape, n.Out.DType)
	ra, rb, ro := len(a.shape), len(b.shape), len(out.shape)
	m, k, nn := a.shape[ra-2], a.shape[ra-1], b.shape[rb-1]
	batch := out.shape[:ro-2]
	ma := broadcastMap(a.shape[:ra-2], batch)
	mb := broadcastMap(b.shape[:rb-2], batch)
	for bi := range ma {
		ao, bo, oo := ma[bi]*m*k, mb[bi]*k*nn, bi*m*nn
		for i := range m {
			for j := range nn {
				var acc float32
				for l := range k {
					p := float32(float32(a.f[ao+i*k+l]) * float32(b.f[bo+l*nn+j]))
					acc = float32(acc + p)
				}
				out.f[oo+i*nn+j] = roundTo(out.dt, float64(acc))
			}
		}
	}
	return out, nil
}

// evalConv2D convolves an NHWC source with HWIO weights [KH, KW, I, O]
// without padding: out[b, y, x, o] is the sum over (ky, kx, i), in that
// order, of src[b, y*sy + ky*dy, x*sx + kx*dx, g*I + i] * w[ky, kx, i, o],
// where g = o / (O/groups) is the output channel's group.
func evalConv2D(n *gpu.Node, x, w *value) (*value, error) {
	if err := checkFloats(n.Op, x, w); err != nil {
		return nil, err
	}
	c := n.Conv
	out := newValue(n.Out.Shape, n.Out.DType)
	h, wd, ch := x.shape[1], x.shape[2], x.shape[3]
	kh, kw, ci, co := w.shape[0], w.shape[1], w.shape[2], w.shape[3]
	oh, ow := out.shape[1], out.shape[2]
	perGroup := co / c.Groups
	src := func(b, y, xx, i int) float32 { return float32(x.f[((b*h+y)*wd+xx)*ch+i]) }
	wt := func(ky, kx, i, o int) float32 { return float32(w.f[((ky*kw+kx)*ci+i)*co+o]) }
	k := 0
	for b := range out.shape[0] {
		for y := range oh {
			for xx := range ow {
				for o := range co {
					g := o / perGroup
					var acc float32
					for ky := range kh {
						for kx := range kw {
							sy, sx := y*c.StrideY+ky*c.DilationY, xx*c.StrideX+kx*c.DilationX
							for i := range ci {
								p := float32(src(b, sy, sx, g*ci+i) * wt(ky, kx, i, o))
								acc = float32(acc + p)
							}
						}
					}
					out.f[k] = roundTo(out.dt, float64(acc))
					k++
				}
			}
		}
	}
	return out, nil
}
