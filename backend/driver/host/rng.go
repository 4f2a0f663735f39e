package host

import (
	"encoding/binary"
	"fmt"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/philox"
)

func init() {
	register(opKernel{make: func(in ir.Instr, _ []ir.TensorType) (kernel, error) { return rngKernel(in) }}, ir.OpRng)
}

// rngKernel draws OpRng's numbers as backend/ir/philox defines them
// (TensorFlow's stateless Philox kernels), its groups spread over the
// workers: each group reads its own stream, so the split never shows.
func rngKernel(in ir.Instr) (kernel, error) {
	d := in.Type.DType
	dist, err := philox.Of(in.Rng.Distribution, d)
	if err != nil {
		return nil, fmt.Errorf("op rng: %w", err)
	}
	size := d.Size()
	return func(out []byte, ins [][]byte) {
		key := binary.LittleEndian.Uint64(ins[0])
		ctr := philox.Counter{Lo: binary.LittleEndian.Uint64(ins[1]), Hi: binary.LittleEndian.Uint64(ins[1][8:])}
		n := len(out) / size
		groups := (n + dist.Group - 1) / dist.Group
		parallelFor(groups, max(1, grainMath/(4*dist.Group)), func(lo, hi int) {
			f := make([]float32, dist.Group)
			v := make([]int64, dist.Group)
			for g := lo; g < hi; g++ {
				s := dist.Stream(key, ctr, g)
				m := min(dist.Group, n-g*dist.Group) // a last partial group keeps its first outputs
				dst := out[g*dist.Group*size : (g*dist.Group+m)*size]
				switch {
				case dist.Floats != nil && d == ir.F32:
					dist.Floats(f, s)
					copy(view[float32](dst), f[:m])
				case dist.Floats != nil:
					dist.Floats(f, s)
					narrow(d, dst, f[:m]) // rounds to nearest even, as Eigen::half and bfloat16 construct from float
				case d == ir.I32:
					dist.Ints(v, s)
					for i, x := range v[:m] {
						binary.LittleEndian.PutUint32(dst[4*i:], uint32(x))
					}
				default:
					dist.Ints(v, s)
					for i, x := range v[:m] {
						binary.LittleEndian.PutUint64(dst[8*i:], uint64(x))
					}
				}
			}
		})
	}, nil
}
