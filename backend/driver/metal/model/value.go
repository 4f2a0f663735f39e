package model

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// value is a tensor's contents during a run. Floats are held as float64 but
// are always exactly representable in their type (every primitive rounds its
// result), so float64 arithmetic followed by one rounding gives what the
// narrow type's arithmetic would. Integers are held as int64 wrapped to their
// width, uint64 as the same bits, bool as 0 or 1: exact for every type.
type value struct {
	shape []int
	dt    gpu.DataType
	f     []float64 // float32 and float16
	i     []int64   // integers and bool
}

func newValue(shape []int, dt gpu.DataType) *value {
	n := elements(shape)
	if n <= 1 && len(shape) <= len(scalarValue{}.shape) {
		// A scalar's value, shape and element in one allocation: the model
		// runs many tiny programs.
		s := &scalarValue{}
		v := &s.v
		v.shape, v.dt = append(s.shape[:0], shape...), dt
		if dt.IsFloat() {
			v.f = s.f[:n]
		} else {
			v.i = s.i[:n]
		}
		return v
	}
	v := &value{shape: append([]int(nil), shape...), dt: dt}
	if dt.IsFloat() {
		v.f = make([]float64, n)
	} else {
		v.i = make([]int64, n)
	}
	return v
}

// scalarValue is the storage of a value of at most one element.
type scalarValue struct {
	v     value
	shape [4]int
	f     [1]float64
	i     [1]int64
}

func (v *value) size() int { return elements(v.shape) }

// set copies element j of src, of v's type, into element k of v.
func (v *value) set(k int, src *value, j int) {
	if v.f != nil {
		v.f[k] = src.f[j]
	} else {
		v.i[k] = src.i[j]
	}
}

func (v *value) clone() *value {
	out := newValue(v.shape, v.dt)
	copy(out.f, v.f)
	copy(out.i, v.i)
	return out
}

func (v *value) String() string { return fmt.Sprintf("%v%v", v.dt, v.shape) }

func elements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// strides are the row-major element strides of shape.
func strides(shape []int) []int {
	s := make([]int, len(shape))
	n := 1
	for d := len(shape) - 1; d >= 0; d-- {
		s[d] = n
		n *= shape[d]
	}
	return s
}

// forEach calls f with every multi-index of shape in row-major order, along
// with its linear index. The slice is reused between calls.
func forEach(shape []int, f func(k int, idx []int)) {
	n := elements(shape)
	idx := make([]int, len(shape))
	for k := 0; k < n; k++ {
		f(k, idx)
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// broadcastMap gives, for every element of to in row-major order, the
// linear index of the element of from that NumPy broadcasting puts there:
// shapes align at the right, and a dimension of 1 (or a missing one) repeats.
func broadcastMap(from, to []int) []int {
	fs := strides(from)
	step := make([]int, len(to)) // from's stride along each dimension of to, 0 where it repeats
	for d := range to {
		if j := len(from) - len(to) + d; j >= 0 && from[j] != 1 {
			step[d] = fs[j]
		}
	}
	m := make([]int, elements(to))
	forEach(to, func(k int, idx []int) {
		off := 0
		for d, i := range idx {
			off += i * step[d]
		}
		m[k] = off
	})
	return m
}

// take builds a value of shape whose element k is src's element idx[k], or
// fill's only element where idx[k] is negative (padding).
func take(src *value, shape []int, idx []int, fill *value) *value {
	out := newValue(shape, src.dt)
	for k, j := range idx {
		if j < 0 {
			out.set(k, fill, 0)
		} else {
			out.set(k, src, j)
		}
	}
	return out
}

// lines describes a tensor as outer × n × inner around one axis, so that
// element l of line (o, in) is at o*n*inner + l*inner + in.
func lines(shape []int, axis int) (outer, n, inner int) {
	return elements(shape[:axis]), shape[axis], elements(shape[axis+1:])
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
