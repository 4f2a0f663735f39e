package host

import "github.com/metalplug/metalplug/backend/ir"

func init() {
	register(opKernel{make: func(ir.Instr, []ir.TensorType) (kernel, error) { return partKernel(0), nil }}, ir.OpReal)
	register(opKernel{make: func(ir.Instr, []ir.TensorType) (kernel, error) { return partKernel(1), nil }}, ir.OpImag)
	register(opKernel{make: func(ir.Instr, []ir.TensorType) (kernel, error) { return complexKernel, nil }}, ir.OpComplex)
}

// A complex64 is its real float32 then its imaginary one: real, imag and
// complex move 32-bit words between the two layouts and never look at
// them as floats, so every bit pattern comes through.

// partKernel copies word part (0 real, 1 imaginary) of each complex64.
func partKernel(part int) kernel {
	return func(out []byte, ins [][]byte) {
		z, x := view[uint32](out), view[uint32](ins[0])
		parallelFor(len(z), grainCheap, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				z[i] = x[2*i+part]
			}
		})
	}
}

// complexKernel interleaves the real and imaginary words.
func complexKernel(out []byte, ins [][]byte) {
	z, re, im := view[uint32](out), view[uint32](ins[0]), view[uint32](ins[1])
	parallelFor(len(re), grainCheap, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			z[2*i], z[2*i+1] = re[i], im[i]
		}
	})
}
