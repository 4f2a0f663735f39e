package driver

import (
	"fmt"
	"unsafe"
)

// Fill and Fill32 are the memset work both drivers do on the CPU, since
// device memory is unified: validate, then repeat the pattern over dst.

// Fill sets n bytes at dst to b.
func Fill(dst unsafe.Pointer, b byte, n int) error {
	if n < 0 || (n > 0 && dst == nil) {
		return fmt.Errorf("memset %d bytes at %p: invalid arguments", n, dst)
	}
	if n > 0 {
		Repeat(unsafe.Slice((*byte)(dst), n), []byte{b})
	}
	return nil
}

// Fill32 sets n bytes at dst to the little-endian 32-bit pattern v. The
// pattern is written byte by byte, so an unaligned dst is fine.
func Fill32(dst unsafe.Pointer, v uint32, n int) error {
	if n < 0 || n%4 != 0 || (n > 0 && dst == nil) {
		return fmt.Errorf("memset32 %d bytes at %p: size must be a non-negative multiple of 4", n, dst)
	}
	if n > 0 {
		Repeat(unsafe.Slice((*byte)(dst), n), []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
	}
	return nil
}

// Repeat copies pattern over dst by doubling copies, which is memmove-fast.
func Repeat(dst, pattern []byte) {
	n := copy(dst, pattern)
	for n < len(dst) {
		n += copy(dst[n:], dst[:n])
	}
}
