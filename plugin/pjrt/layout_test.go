package pjrt

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestShapeBytes(t *testing.T) {
	for _, c := range []struct {
		dims []int64
		elem int
		want int64
		ok   bool
	}{
		{nil, 4, 4, true},
		{[]int64{2, 3}, 4, 24, true},
		{[]int64{0, 7}, 8, 0, true},
		{[]int64{-1}, 4, 0, false},
		{[]int64{1 << 40, 1 << 30}, 4, 0, false},
	} {
		got, err := shapeBytes(c.dims, c.elem)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("shapeBytes(%v, %d) = %d, %v; want %d, ok %v", c.dims, c.elem, got, err, c.want, c.ok)
		}
	}
}

func TestDenseAndSpan(t *testing.T) {
	if got := denseStrides([]int64{2, 3, 4}, 2); !slices.Equal(got, []int64{24, 8, 2}) {
		t.Errorf("denseStrides = %v", got)
	}
	if !isDense([]int64{2, 1, 3}, []int64{12, 999, 4}, 4) {
		t.Error("a size-1 dimension's stride must not matter")
	}
	if isDense([]int64{2, 3}, []int64{4, 8}, 4) {
		t.Error("a transposed layout is not dense")
	}
	// A numpy a[::-1, ::-1] view of a 3x4 float32 array: element [0,0] is
	// the last of the base, strides negative.
	lo, hi, err := span([]int64{3, 4}, []int64{-16, -4}, 4)
	if err != nil || lo != -44 || hi != 4 {
		t.Errorf("span of a flipped 3x4 = [%d, %d), %v; want [-44, 4)", lo, hi, err)
	}
	if lo, hi, _ := span([]int64{3, 0}, []int64{-16, -4}, 4); lo != 0 || hi != 0 {
		t.Errorf("an empty array spans [%d, %d)", lo, hi)
	}
	if _, _, err := span([]int64{1 << 40}, []int64{1 << 40}, 4); err == nil {
		t.Error("an overflowing span must fail")
	}
}

func TestMinorToMajor(t *testing.T) {
	s, err := stridesOfMinorToMajor([]int64{2, 3}, []int64{0, 1}, 4)
	if err != nil || !slices.Equal(s, []int64{4, 8}) {
		t.Errorf("column-major 2x3: %v, %v", s, err)
	}
	if _, err := stridesOfMinorToMajor([]int64{2, 3}, []int64{1, 1}, 4); err == nil {
		t.Error("a repeated dimension must fail")
	}
	if !isDescending([]int64{2, 1, 0}) || isDescending([]int64{0, 1}) {
		t.Error("isDescending")
	}
}

// reference copies element by element, the plain loop copyStrided must
// agree with.
func reference(dst []byte, dstAt int64, ds []int64, src []byte, srcAt int64, ss []int64, dims []int64, elem int) {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	idx := make([]int64, len(dims))
	for k := int64(0); k < n; k++ {
		s, d := srcAt, dstAt
		for i := range dims {
			s += idx[i] * ss[i]
			d += idx[i] * ds[i]
		}
		copy(dst[d:d+int64(elem)], src[s:s+int64(elem)])
		for i := len(dims) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < dims[i] {
				break
			}
			idx[i] = 0
		}
	}
}

// TestCopyStrided gathers and scatters random arrays through every kind
// of stride jax hands us (dense, transposed, sliced, flipped, broadcast
// zero strides) and compares with the element loop.
func TestCopyStrided(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name    string
		dims    []int64
		strides func(elem int) []int64
	}{
		{"dense", []int64{3, 4}, func(e int) []int64 { return []int64{int64(4 * e), int64(e)} }},
		{"transposed", []int64{4, 3}, func(e int) []int64 { return []int64{int64(e), int64(4 * e)} }},
		{"every other column", []int64{3, 2}, func(e int) []int64 { return []int64{int64(4 * e), int64(2 * e)} }},
		{"flipped", []int64{3, 4}, func(e int) []int64 { return []int64{int64(-4 * e), int64(-e)} }},
		{"rows flipped", []int64{3, 4}, func(e int) []int64 { return []int64{int64(-4 * e), int64(e)} }},
		{"broadcast", []int64{3, 4}, func(e int) []int64 { return []int64{0, int64(e)} }},
		{"3-d mixed", []int64{2, 3, 2}, func(e int) []int64 { return []int64{int64(-6 * e), int64(e), int64(3 * e)} }},
		{"scalar", nil, func(e int) []int64 { return nil }},
		{"empty", []int64{0, 3}, func(e int) []int64 { return []int64{int64(3 * e), int64(e)} }},
	}
	for _, elem := range []int{1, 2, 4, 8} {
		for _, c := range cases {
			strides := c.strides(elem)
			lo, hi, err := span(c.dims, strides, elem)
			if err != nil {
				t.Fatal(err)
			}
			host := make([]byte, hi-lo+16)
			for i := range host {
				host[i] = byte(r.Uint32())
			}
			size, _ := shapeBytes(c.dims, elem)
			dense := denseStrides(c.dims, elem)

			got, want := make([]byte, size), make([]byte, size)
			copyStrided(got, 0, dense, host, -lo, strides, c.dims, elem)
			reference(want, 0, dense, host, -lo, strides, c.dims, elem)
			if !bytes.Equal(got, want) {
				t.Errorf("%s, %d-byte elements: gather differs from the element loop", c.name, elem)
			}
			if c.name == "broadcast" {
				continue // a scatter to overlapping elements has no one answer
			}
			out, ref := make([]byte, len(host)), make([]byte, len(host))
			copyStrided(out, -lo, strides, got, 0, dense, c.dims, elem)
			reference(ref, -lo, strides, got, 0, dense, c.dims, elem)
			if !bytes.Equal(out, ref) {
				t.Errorf("%s, %d-byte elements: scatter differs from the element loop", c.name, elem)
			}
		}
	}
}
