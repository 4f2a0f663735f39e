package host

import (
	"encoding/binary"
	"fmt"
	"sort"
	"unsafe"

	"github.com/metalplug/metalplug/backend/ir"
)

// Control flow and the ops with a body: a region step runs sub-executables
// (compiled by plan from the instruction's regions) on Go buffers.

// runRegion runs a region step (control flow, or an op with a body) and
// returns its results.
func (e *executable) runRegion(s *step, vals [][]byte) ([][]byte, error) {
	ins := make([][]byte, len(s.args))
	for j, a := range s.args {
		ins[j] = vals[a]
	}
	fail := func(err error) error {
		return fmt.Errorf("host: execute: instruction %%%d: %s: %w", s.instr, s.desc, err)
	}
	switch s.op {
	case ir.OpWhile:
		cond, body := s.regions[0], s.regions[1]
		for {
			c, err := cond.runBytes(ins)
			if err != nil {
				return nil, fail(err)
			}
			if c[0][0] == 0 {
				return ins, nil
			}
			if ins, err = body.runBytes(ins); err != nil {
				return nil, fail(err)
			}
		}
	case ir.OpCase:
		k := int(int32(binary.LittleEndian.Uint32(ins[0])))
		if k < 0 || k >= len(s.regions) {
			k = len(s.regions) - 1 // out of range runs the last branch, as in StableHLO
		}
		rs, err := s.regions[k].runBytes(ins[1:])
		if err != nil {
			return nil, fail(err)
		}
		return rs, nil
	case ir.OpCall:
		rs, err := s.regions[0].runBytes(ins)
		if err != nil {
			return nil, fail(err)
		}
		return rs, nil
	case ir.OpReduceRegion:
		rs, err := reduceRegion(s, ins)
		if err != nil {
			return nil, fail(err)
		}
		return rs, nil
	case ir.OpSortRegion:
		rs, err := sortRegion(s, ins)
		if err != nil {
			return nil, fail(err)
		}
		return rs, nil
	case ir.OpScatterRegion:
		rs, err := scatterRegion(s, ins)
		if err != nil {
			return nil, fail(err)
		}
		return rs, nil
	case ir.OpReduceWindowRegion:
		rs, err := reduceWindowRegion(s, ins)
		if err != nil {
			return nil, fail(err)
		}
		return rs, nil
	case ir.OpSelectAndScatterRegion:
		rs, err := selectAndScatterRegion(s, ins)
		if err != nil {
			return nil, fail(err)
		}
		return rs, nil
	}
	return nil, fail(fmt.Errorf("%s is not a region op", s.op))
}

// runBytes runs e on Go buffers and returns new buffers of its results.
func (e *executable) runBytes(ins [][]byte) ([][]byte, error) {
	args := make([]unsafe.Pointer, len(ins))
	for i, b := range ins {
		args[i] = unsafe.Pointer(unsafe.SliceData(b))
	}
	outs := make([][]byte, len(e.results))
	ptrs := make([]unsafe.Pointer, len(outs))
	for i, t := range e.results {
		outs[i] = newBuffer(t.Bytes())
		ptrs[i] = unsafe.Pointer(unsafe.SliceData(outs[i]))
	}
	if err := e.run(args, ptrs); err != nil {
		return nil, err
	}
	return outs, nil
}

// reduceRegion folds each operand element, in row-major order, into the
// accumulators of its output element by running the body on scalars. It
// is the general form, one call of the body per element; the fixed monoids
// are OpReduce's kernels.
func reduceRegion(s *step, ins [][]byte) ([][]byte, error) {
	n := len(ins) / 2
	in, outT := s.types[:n], s.types[2*n:]
	outs := make([][]byte, n)
	sizes := make([]int, n)
	for i := range outs {
		sizes[i] = outT[i].DType.Size()
		outs[i] = newBuffer(outT[i].Bytes())
		for k := range outT[i].Shape.Size() {
			copy(outs[i][k*sizes[i]:], ins[n+i][:sizes[i]])
		}
	}
	shape := in[0].Shape
	reduced := make([]bool, shape.Rank())
	for _, a := range s.in.Axes {
		reduced[a] = true
	}
	// outStride[d] is how far output element numbers move per step along
	// operand dimension d (0 for a reduced one).
	outStride := make([]int, shape.Rank())
	for d, m := len(shape)-1, 1; d >= 0; d-- {
		if !reduced[d] {
			outStride[d] = m
			m *= shape[d]
		}
	}
	idx := make([]int, shape.Rank())
	args := make([][]byte, 2*n)
	for k := range shape.Size() {
		o := 0
		for d, v := range idx {
			o += v * outStride[d]
		}
		for i := range n {
			args[i] = outs[i][o*sizes[i] : (o+1)*sizes[i]]
			esz := in[i].DType.Size()
			args[n+i] = ins[i][k*esz : (k+1)*esz]
		}
		acc, err := s.regions[0].runBytes(args)
		if err != nil {
			return nil, err
		}
		for i := range n {
			copy(outs[i][o*sizes[i]:], acc[i])
		}
		for d := len(idx) - 1; d >= 0; d-- { // next index, row-major
			if idx[d]++; idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return outs, nil
}

// sortRegion sorts each line along the sort dimension, stably, asking the
// comparator for each comparison (the general form; fixed orders are
// OpSort's kernels).
func sortRegion(s *step, ins [][]byte) ([][]byte, error) {
	shape, dim := s.types[0].Shape, s.in.Sort.Dim
	sizes := make([]int, len(ins))
	outs := make([][]byte, len(ins))
	for i := range ins {
		sizes[i] = s.types[i].DType.Size()
		outs[i] = newBuffer(len(ins[i]))
	}
	strides := shape.Strides()
	n, stride := shape[dim], strides[dim]
	args := make([][]byte, 2*len(ins))
	var err error
	less := func(a, b int) bool {
		for i, x := range ins {
			args[2*i], args[2*i+1] = x[a*sizes[i]:(a+1)*sizes[i]], x[b*sizes[i]:(b+1)*sizes[i]]
		}
		r, e := s.regions[0].runBytes(args)
		if e != nil {
			if err == nil {
				err = e
			}
			return false
		}
		return r[0][0] != 0
	}
	line := make([]int, n)
	for k := range shape.Size() {
		if (k/stride)%max(n, 1) != 0 {
			continue // one line per start: k has index 0 along dim
		}
		for j := range line {
			line[j] = k + j*stride
		}
		sort.SliceStable(line, func(a, b int) bool { return less(line[a], line[b]) })
		if err != nil {
			return nil, fmt.Errorf("comparator: %w", err)
		}
		for j, src := range line {
			dst := k + j*stride
			for i, x := range ins {
				copy(outs[i][dst*sizes[i]:(dst+1)*sizes[i]], x[src*sizes[i]:])
			}
		}
	}
	return outs, nil
}
