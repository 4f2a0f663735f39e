package pjrt

import (
	"fmt"
	"math"
	"math/bits"
)

// Layout arithmetic, in plain Go over byte slices so that it is tested on
// its own (layout_test.go). Device buffers are always dense, row-major
// ("descending" in XLA's words: minor_to_major = [rank-1 ... 0]); host
// arrays may have any byte strides, negative ones included (numpy's
// flipped views), in which case the data pointer is the address of
// element [0, ..., 0], somewhere inside the array.

// shapeBytes is the dense size of dims elements of elem bytes each, with
// the checks a caller's dims need: none negative, no overflow.
func shapeBytes(dims []int64, elem int) (int64, error) {
	n := uint64(elem)
	for i, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("dimension %d is %d, negative", i, d)
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt64/2 {
			return 0, fmt.Errorf("dims %v of %d-byte elements overflow", dims, elem)
		}
		n = lo
	}
	return int64(n), nil
}

// denseStrides are the byte strides of a dense row-major array.
func denseStrides(dims []int64, elem int) []int64 {
	s := make([]int64, len(dims))
	n := int64(elem)
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = n
		n *= dims[i]
	}
	return s
}

// isDense reports whether strides lay dims out densely row-major. The
// stride of a dimension of size 1 is never used, and an empty array has
// no layout at all.
func isDense(dims, strides []int64, elem int) bool {
	want := denseStrides(dims, elem)
	for i, d := range dims {
		if d == 0 {
			return true
		}
		if d != 1 && strides[i] != want[i] {
			return false
		}
	}
	return true
}

// span is the byte range [lo, hi) a strided array covers, relative to the
// address of its element [0, ..., 0]; lo is negative when strides are.
// An empty array spans nothing.
func span(dims, strides []int64, elem int) (lo, hi int64, err error) {
	hi = int64(elem)
	for i, d := range dims {
		if d == 0 {
			return 0, 0, nil
		}
		reach, ok := mulOK(d-1, strides[i])
		if !ok {
			return 0, 0, fmt.Errorf("dimension %d of size %d with byte stride %d overflows", i, d, strides[i])
		}
		if reach < 0 {
			lo += reach
		} else {
			hi += reach
		}
		if lo < math.MinInt64/4 || hi > math.MaxInt64/4 {
			return 0, 0, fmt.Errorf("byte strides %v of dims %v overflow", strides, dims)
		}
	}
	return lo, hi, nil
}

func mulOK(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	return c, c/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64)
}

// stridesOfMinorToMajor are the byte strides of a dense array whose
// dimensions are laid out in minor_to_major order (m2m[0] varies fastest).
func stridesOfMinorToMajor(dims, m2m []int64, elem int) ([]int64, error) {
	if len(m2m) != len(dims) {
		return nil, fmt.Errorf("minor_to_major %v has %d entries for %d dimensions", m2m, len(m2m), len(dims))
	}
	s := make([]int64, len(dims))
	seen := make([]bool, len(dims))
	n := int64(elem)
	for _, d := range m2m {
		if d < 0 || int(d) >= len(dims) || seen[d] {
			return nil, fmt.Errorf("minor_to_major %v is not a permutation of the %d dimensions", m2m, len(dims))
		}
		seen[d] = true
		s[d] = n
		n *= dims[d]
	}
	return s, nil
}

// isDescending reports whether minor_to_major is [rank-1, ..., 0].
func isDescending(m2m []int64) bool {
	for i, d := range m2m {
		if d != int64(len(m2m)-1-i) {
			return false
		}
	}
	return true
}

// copyStrided copies the dims-shaped array of elem-byte elements whose
// element [0, ..., 0] is at src[srcAt] with byte strides srcStrides into
// dst, element [0, ..., 0] at dst[dstAt], strides dstStrides. Runs that are
// contiguous on both sides in the innermost dimension copy at once. The
// caller has checked that both spans lie inside their slices.
func copyStrided(dst []byte, dstAt int64, dstStrides []int64, src []byte, srcAt int64, srcStrides []int64, dims []int64, elem int) {
	for _, d := range dims {
		if d == 0 {
			return
		}
	}
	if len(dims) == 0 {
		copy(dst[dstAt:dstAt+int64(elem)], src[srcAt:srcAt+int64(elem)])
		return
	}
	last := len(dims) - 1
	run := int64(elem)
	contiguous := srcStrides[last] == int64(elem) && dstStrides[last] == int64(elem)
	if contiguous {
		run = dims[last] * int64(elem)
	}
	var walk func(k int, s, d int64)
	walk = func(k int, s, d int64) {
		if k == last {
			if contiguous {
				copy(dst[d:d+run], src[s:s+run])
				return
			}
			for i := int64(0); i < dims[last]; i++ {
				copy(dst[d:d+run], src[s:s+run])
				s += srcStrides[last]
				d += dstStrides[last]
			}
			return
		}
		for i := int64(0); i < dims[k]; i++ {
			walk(k+1, s, d)
			s += srcStrides[k]
			d += dstStrides[k]
		}
	}
	walk(0, srcAt, dstAt)
}
