package fuzzrun

import (
	"math"

	"github.com/metalplug/metalplug/backend/ir"
)

// callOverhead is what one run of a region costs beyond its
// instructions, in the units of Cost (element operations): a driver sets up
// a sub-execution for every call of a reduction's or a sort's body.
const callOverhead = 32

// Cost estimates the work of running p once, in element operations, when
// no loop runs more than trips times, and the most elements any one of its
// values (a region's included) holds. It only has to be right within a
// small factor: it decides which programs a fuzzer may run, so that a run
// that takes long is a hang rather than a program that asked for much.
// Dimensions a fuzzer made up can be astronomically large, so everything
// is counted in float64, which saturates rather than wraps.
func Cost(p *ir.Program, trips int) (work, largest float64) {
	c := coster{trips: float64(trips)}
	work = c.program(p)
	return work, c.largest
}

type coster struct {
	trips   float64
	largest float64
}

func (c *coster) elems(t ir.TensorType) float64 {
	n := 1.0
	for _, d := range t.Shape {
		n *= float64(max(d, 0))
	}
	c.largest = max(c.largest, n)
	return n
}

func (c *coster) program(p *ir.Program) float64 {
	if p == nil {
		return 0
	}
	w := 0.0
	for _, t := range p.Params {
		w += c.elems(t)
	}
	for _, in := range p.Instrs {
		w += c.instr(p, in)
	}
	return w
}

// instr is one instruction's work: the elements it reads and writes,
// times what each output element costs beyond that for the ops whose
// work grows faster than their operands.
func (c *coster) instr(p *ir.Program, in ir.Instr) float64 {
	out := c.elems(in.Type)
	for _, t := range in.Tuple {
		out += c.elems(t)
	}
	args := make([]float64, len(in.Args))
	read := 0.0
	for j, a := range in.Args {
		if int(a) >= 0 && int(a) < len(p.Instrs) {
			args[j] = c.elems(p.Instrs[a].Type)
			read += args[j]
		}
	}
	base := out + read
	arg0 := func() ir.TensorType {
		if len(in.Args) == 0 || int(in.Args[0]) >= len(p.Instrs) {
			return ir.TensorType{}
		}
		return p.Instrs[in.Args[0]].Type
	}
	body := func(i int) float64 {
		if i >= len(in.Regions) {
			return callOverhead
		}
		return callOverhead + c.program(in.Regions[i])
	}
	switch in.Op {
	case ir.OpDotGeneral:
		k := 1.0
		if in.Dot != nil {
			for _, d := range in.Dot.LhsContract {
				if s := arg0().Shape; d >= 0 && d < len(s) {
					k *= float64(s[d])
				}
			}
		}
		return base + out*k
	case ir.OpConvolution:
		// Each output element reads one window of the kernel across the
		// input features of its group: the kernel's elements over its
		// output features.
		if len(in.Args) == 2 && int(in.Args[1]) < len(p.Instrs) {
			kt := p.Instrs[in.Args[1]].Type
			if r := kt.Shape.Rank(); r > 0 && kt.Shape[r-1] > 0 {
				return base + out*args[1]/float64(kt.Shape[r-1])
			}
		}
		return base
	case ir.OpReduceWindow, ir.OpSelectAndScatter, ir.OpReduceWindowRegion, ir.OpSelectAndScatterRegion:
		win := 1.0
		if in.Window != nil {
			for _, d := range in.Window.Dims {
				win *= float64(max(d, 1))
			}
		}
		per := 1.0
		switch in.Op {
		case ir.OpReduceWindowRegion:
			per = body(0)
		case ir.OpSelectAndScatterRegion:
			per = body(0) + body(1)
		}
		return base + max(out, read)*win*per
	case ir.OpSort, ir.OpArgSort, ir.OpFFT:
		return base * (1 + math.Log2(1+out))
	case ir.OpSortRegion:
		return base + out*(1+math.Log2(1+out))*body(0)
	case ir.OpCholesky, ir.OpTriangularSolve, ir.OpQr, ir.OpHouseholderProduct, ir.OpEigh, ir.OpLu,
		ir.OpSvd, ir.OpEig, ir.OpHessenberg, ir.OpTridiagonal, ir.OpQrPivoted, ir.OpSchur:
		// Cubic, and iterative for the eigen- and singular values: tens
		// of sweeps of n for each of the n^2 elements.
		n := 1.0
		for _, d := range arg0().Shape {
			n = max(n, float64(d))
		}
		return base + 30*read*n
	case ir.OpWhile:
		return base + (c.trips+1)*body(0) + c.trips*body(1)
	case ir.OpCase:
		w := base
		for i := range in.Regions {
			w += body(i)
		}
		return w
	case ir.OpCall:
		return base + body(0)
	case ir.OpReduceRegion, ir.OpScatterRegion:
		return base + read*body(0)
	}
	return base
}
