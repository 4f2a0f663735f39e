package host

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/metalplug/metalplug/backend/ir"
)

// Element type sets the kernels are written over. Half types are not here:
// they are stored as uint16 and computed in float32 (see halfKernel).
type (
	floatT interface{ ~float32 | ~float64 }
	intT   interface {
		~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint32
	}
	numT interface{ floatT | intT }
)

// view reinterprets a byte buffer as elements of T. Buffers come from mmap,
// from the caller, or from newBuffer, all aligned for any T.
func view[T any](b []byte) []T {
	var z T
	if len(b) < int(unsafe.Sizeof(z)) {
		// Not even one element: no pointer conversion, which would claim
		// bytes past the buffer (and trips -race's checkptr).
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(z)))
}

// bytesOf views a typed slice as its bytes.
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

// newBuffer allocates n bytes of scratch on the Go heap, 8-byte aligned so
// that it can be viewed as any element type.
func newBuffer(n int) []byte {
	if n == 0 {
		return nil
	}
	return bytesOf(make([]uint64, (n+7)/8))[:n]
}

// ptrBytes views n bytes at p; nil for an empty range.
func ptrBytes(p unsafe.Pointer, n int) []byte {
	if n == 0 || p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

// isHalf reports the dtypes stored as 16 bits and computed in float32.
func isHalf(d ir.DType) bool { return d == ir.F16 || d == ir.BF16 }

// widen converts a half buffer to float32.
func widen(d ir.DType, src []byte) []float32 {
	s := view[uint16](src)
	out := make([]float32, len(s))
	if d == ir.F16 {
		for i, h := range s {
			out[i] = ir.F16ToF32(h)
		}
	} else {
		for i, h := range s {
			out[i] = ir.BF16ToF32(h)
		}
	}
	return out
}

// narrow rounds float32 values into a half buffer.
func narrow(d ir.DType, dst []byte, src []float32) {
	s := view[uint16](dst)
	if d == ir.F16 {
		for i, f := range src {
			s[i] = ir.F32ToF16(f)
		}
	} else {
		for i, f := range src {
			s[i] = ir.F32ToBF16(f)
		}
	}
}

// halfKernel runs a float32 kernel on half operands: every half input is
// widened, and the output is narrowed when outHalf (compare yields bool).
func halfKernel(d ir.DType, halfIn []bool, outHalf bool, outBytes int, k kernel) kernel {
	return func(out []byte, ins [][]byte) {
		wide := make([][]byte, len(ins))
		for i, in := range ins {
			if halfIn[i] {
				wide[i] = bytesOf(widen(d, in))
			} else {
				wide[i] = in
			}
		}
		if !outHalf {
			k(out, wide)
			return
		}
		tmp := make([]float32, outBytes/2)
		k(bytesOf(tmp), wide)
		narrow(d, out, tmp)
	}
}

// parallelFor splits [0,n) into chunks of at least grain and runs them on up
// to GOMAXPROCS goroutines, the caller's included. A panic in any chunk is
// re-raised on the caller, where execution turns it into an error: a panic
// on a bare goroutine would kill the process.
func parallelFor(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	workers := min(runtime.GOMAXPROCS(0), n/max(grain, 1))
	if workers <= 1 {
		fn(0, n)
		return
	}
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	var mu sync.Mutex
	var panicked any
	for lo := chunk; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					panicked = r
					mu.Unlock()
				}
			}()
			debug.SetPanicOnFault(true)
			fn(lo, hi)
		}()
	}
	func() {
		defer wg.Wait() // even if our own chunk panics, never leave workers behind
		fn(0, min(chunk, n))
	}()
	if panicked != nil {
		panic(fmt.Sprint(panicked))
	}
}

// strideIter walks a row-major index space of shape and tracks, for each of
// several operands, a linear offset advancing by that operand's strides.
// Kernels use it for everything but the innermost dimension, which they loop
// over directly.
type strideIter struct {
	shape   []int
	strides [][]int // per operand, per dim
	idx     []int
	off     []int
}

func newStrideIter(shape []int, strides ...[]int) *strideIter {
	return &strideIter{shape: shape, strides: strides, idx: make([]int, len(shape)), off: make([]int, len(strides))}
}

// next advances to the next index and reports false after the last.
func (it *strideIter) next() bool {
	for d := len(it.shape) - 1; d >= 0; d-- {
		it.idx[d]++
		for k, st := range it.strides {
			it.off[k] += st[d]
		}
		if it.idx[d] < it.shape[d] {
			return true
		}
		for k, st := range it.strides {
			it.off[k] -= st[d] * it.shape[d]
		}
		it.idx[d] = 0
	}
	return false
}

// coalesce merges neighbouring dimensions that every operand walks
// contiguously and drops size-1 dimensions, so that for example a transpose
// of the two outer dims of a [a,b,c] tensor runs as a copy of c-long rows.
// strides are per operand, aligned with shape; the results are new slices.
func coalesce(shape []int, strides ...[]int) ([]int, [][]int) {
	var outShape []int
	outStrides := make([][]int, len(strides))
	for d, n := range shape {
		if n == 1 {
			continue
		}
		if len(outShape) > 0 {
			last := len(outShape) - 1
			merge := true
			for k := range strides {
				if outStrides[k][last] != strides[k][d]*n {
					merge = false
					break
				}
			}
			if merge {
				outShape[last] *= n
				for k := range strides {
					outStrides[k][last] = strides[k][d]
				}
				continue
			}
		}
		outShape = append(outShape, n)
		for k := range strides {
			outStrides[k] = append(outStrides[k], strides[k][d])
		}
	}
	return outShape, outStrides
}
