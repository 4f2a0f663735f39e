package ir

import (
	"fmt"
	"strings"
)

// Shape is a list of dimension sizes, outermost first. A nil or empty Shape is
// a scalar.
type Shape []int

// Rank is the number of dimensions.
func (s Shape) Rank() int { return len(s) }

// Size is the number of elements: the product of the dimensions (1 for a scalar).
func (s Shape) Size() int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// Equal reports whether s and t have the same dimensions.
func (s Shape) Equal(t Shape) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if s[i] != t[i] {
			return false
		}
	}
	return true
}

// Clone returns a copy that shares no memory with s.
func (s Shape) Clone() Shape { return append(Shape(nil), s...) }

// Strides are the row-major element strides of s.
func (s Shape) Strides() []int {
	st := make([]int, len(s))
	n := 1
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = n
		n *= s[i]
	}
	return st
}

// String formats s as TensorFlow does: [2,3,4], or [] for a scalar.
func (s Shape) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// TensorType is a value's static type: its dtype and shape.
type TensorType struct {
	DType DType
	Shape Shape
}

func (t TensorType) String() string { return t.DType.String() + t.Shape.String() }

// Bytes is the storage a dense row-major tensor of type t needs.
func (t TensorType) Bytes() int { return t.Shape.Size() * t.DType.Size() }

func (t TensorType) validate() error {
	if !t.DType.Valid() {
		return fmt.Errorf("invalid dtype %v", t.DType)
	}
	for _, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("negative dimension in shape %v", t.Shape)
		}
	}
	return nil
}

// BroadcastShapes is NumPy's broadcast of two shapes (TensorFlow's and
// MPSGraph's too): aligned at the end, a dimension of 1 stretches.
func BroadcastShapes(a, b Shape) (Shape, bool) {
	n := max(len(a), len(b))
	out := make(Shape, n)
	for i := range n {
		da, db := 1, 1
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db, db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}
