package host

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/ir"
)

// The ops with an arbitrary body: the general forms of scatter,
// reduce_window and select_and_scatter, one call of a body per element (the
// fixed forms are the fast kernels of index.go and window.go).

// elem is element k of b, of size bytes.
func elem(b []byte, k, size int) []byte { return b[k*size : (k+1)*size] }

// scatterRegion applies the update body to each update element that lands
// inside the operands, in the order OpScatter applies them.
func scatterRegion(s *step, ins [][]byte) ([][]byte, error) {
	n := len(ins) / 2
	ops, indices, upd := ins[:n], ins[n], ins[n+1:]
	opT, idxT, updT := s.types[:n], s.types[n], s.types[n+1:2*n+1]
	p := newScatterPlan(s.in.Scatter, opT[0].Shape, idxT, updT[0].Shape)
	outs := make([][]byte, n)
	for i := range outs {
		outs[i] = newBuffer(len(ops[i]))
		copy(outs[i], ops[i])
	}
	args := make([][]byte, 2*n)
	var err error
	p.eachWindow(indices, func(outBase, updBase int) {
		p.window.walk(outBase, updBase, func(o, u, count, os, us int) {
			for j := 0; j < count && err == nil; j++ {
				at, from := o+j*os, u+j*us
				for i := range n {
					args[i] = elem(outs[i], at, opT[i].DType.Size())
					args[n+i] = elem(upd[i], from, updT[i].DType.Size())
				}
				var r [][]byte
				if r, err = s.regions[0].runBytes(args); err == nil {
					for i := range n {
						copy(elem(outs[i], at, opT[i].DType.Size()), r[i])
					}
				}
			}
		})
	})
	if err != nil {
		return nil, fmt.Errorf("update body: %w", err)
	}
	return outs, nil
}

// windowWalk calls fn for each output element k of a windowed op and each
// window position in row-major order, with the operand element there, or
// -1 for a position in the padding.
func windowWalk(w *ir.WindowAttrs, in, out ir.Shape, fn func(k, src int) error) error {
	ws := ir.Shape(w.Dims)
	strides := in.Strides()
	oidx := make([]int, len(out))
	for k := range out.Size() {
		for m := range ws.Size() {
			src, rest := 0, m
			for d := len(ws) - 1; d >= 0; d-- {
				off := rest % ws[d]
				rest /= ws[d]
				v := oidx[d]*w.Strides[d] + off - w.Padding[d][0]
				if src >= 0 && v >= 0 && v < in[d] {
					src += v * strides[d]
				} else {
					src = -1
				}
			}
			if err := fn(k, src); err != nil {
				return err
			}
		}
		for d := len(oidx) - 1; d >= 0; d-- { // next output index, row-major
			if oidx[d]++; oidx[d] < out[d] {
				break
			}
			oidx[d] = 0
		}
	}
	return nil
}

// reduceWindowRegion folds each window with the body from the inits; a
// position in the padding folds in the inits.
func reduceWindowRegion(s *step, ins [][]byte) ([][]byte, error) {
	n := len(ins) / 2
	xs, inits := ins[:n], ins[n:]
	inT, outT := s.types[:n], s.types[2*n:]
	outs := make([][]byte, n)
	for i := range outs {
		outs[i] = newBuffer(outT[i].Bytes())
	}
	acc := make([][]byte, n)
	args := make([][]byte, 2*n)
	last := ir.Shape(s.in.Window.Dims).Size() - 1
	m := 0 // the window position within the current output element
	err := windowWalk(s.in.Window, inT[0].Shape, outT[0].Shape, func(k, src int) error {
		if m == 0 {
			copy(acc, inits)
		}
		for i := range n {
			args[i] = acc[i]
			if src < 0 {
				args[n+i] = inits[i]
			} else {
				args[n+i] = elem(xs[i], src, inT[i].DType.Size())
			}
		}
		r, err := s.regions[0].runBytes(args)
		if err != nil {
			return err
		}
		copy(acc, r)
		if m == last {
			for i := range n {
				copy(elem(outs[i], k, outT[i].DType.Size()), acc[i])
			}
			m = 0
			return nil
		}
		m++
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	return outs, nil
}

// selectAndScatterRegion picks each window's position with the select body
// (its first position inside the operand, then each later one the select
// does not keep the pick over; padding is never picked) and folds the
// window's source element into the result there with the scatter body.
func selectAndScatterRegion(s *step, ins [][]byte) ([][]byte, error) {
	x, src, init := ins[0], ins[1], ins[2]
	xt, st, outT := s.types[0], s.types[1], s.types[3]
	xsz, ssz := xt.DType.Size(), st.DType.Size()
	out := newBuffer(outT.Bytes())
	for k := range outT.Shape.Size() {
		copy(elem(out, k, ssz), init)
	}
	last := ir.Shape(s.in.Window.Dims).Size() - 1
	m, at := 0, -1
	err := windowWalk(s.in.Window, xt.Shape, st.Shape, func(k, p int) error {
		switch {
		case p < 0:
		case at < 0:
			at = p
		default:
			keep, err := s.regions[0].runBytes([][]byte{elem(x, at, xsz), elem(x, p, xsz)})
			if err != nil {
				return fmt.Errorf("select body: %w", err)
			}
			if keep[0][0] == 0 {
				at = p
			}
		}
		if m < last {
			m++
			return nil
		}
		if at >= 0 {
			r, err := s.regions[1].runBytes([][]byte{elem(out, at, ssz), elem(src, k, ssz)})
			if err != nil {
				return fmt.Errorf("scatter body: %w", err)
			}
			copy(elem(out, at, ssz), r[0])
		}
		m, at = 0, -1
		return nil
	})
	if err != nil {
		return nil, err
	}
	return [][]byte{out}, nil
}
