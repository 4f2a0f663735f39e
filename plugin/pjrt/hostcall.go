package pjrt

/*
#include <stdint.h>
#include <stdlib.h>

// mp_host_fn is the entry point jax_plugins.metalplug hands the library
// (a ctypes function, which takes the GIL itself): it runs callback id on
// nargs operands and fills nresults results, each a pointer and a size in
// bytes; it returns 0, or writes a message of at most errlen bytes
// (NUL-terminated) into err and returns nonzero.
typedef int32_t (*mp_host_fn)(uint64_t id, int32_t nargs, void **args, int64_t *arg_sizes,
                              int32_t nresults, void **results, int64_t *result_sizes, char *err, int64_t errlen);

static int32_t mp_call_host(void *f, uint64_t id, int32_t nargs, void **args, int64_t *arg_sizes,
                            int32_t nresults, void **results, int64_t *result_sizes, char *err, int64_t errlen) {
	return ((mp_host_fn)f)(id, nargs, args, arg_sizes, nresults, results, result_sizes, err, errlen);
}
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/metalplug/metalplug/backend/hostcall"
)

// hostErrLen bounds the message a callback's failure reports.
const hostErrLen = 4096

// metalplug_set_host_callback makes fn the process's runner of host
// functions (backend/hostcall), or removes it when fn is NULL: the
// jax_plugins module calls it through ctypes when it registers the
// platform. It returns 1, or 0 when it failed (a panic, logged: the zero
// value a recovered panic leaves).
//
//export metalplug_set_host_callback
func metalplug_set_host_callback(fn unsafe.Pointer) (res C.int32_t) {
	defer boundary("metalplug_set_host_callback", nil)
	hook("metalplug_set_host_callback")
	if fn == nil {
		hostcall.Set(nil)
		return 1
	}
	hostcall.Set(func(id uint64, args, results [][]byte) error { return callHost(fn, id, args, results) })
	return 1
}

// callHost runs callback id through fn. The operands and results cross in
// C memory: the callback sees pointers valid for the call only, and Go's
// memory never holds a pointer C keeps.
func callHost(fn unsafe.Pointer, id uint64, args, results [][]byte) error {
	n := len(args) + len(results)
	total := 0
	for _, b := range args {
		total += len(b)
	}
	for _, b := range results {
		total += len(b)
	}
	word := C.size_t(unsafe.Sizeof(uintptr(0)))
	ptrs := (*unsafe.Pointer)(C.calloc(C.size_t(n+1), word))
	sizes := (*C.int64_t)(C.calloc(C.size_t(n+1), 8))
	data := C.malloc(C.size_t(total + 1))
	msg := (*C.char)(C.calloc(1, hostErrLen))
	defer func() {
		C.free(unsafe.Pointer(ptrs))
		C.free(unsafe.Pointer(sizes))
		C.free(data)
		C.free(unsafe.Pointer(msg))
	}()
	if ptrs == nil || sizes == nil || data == nil || msg == nil {
		return errors.New("out of host memory for a callback's operands")
	}
	ps, ss := unsafe.Slice(ptrs, n+1), unsafe.Slice(sizes, n+1)
	buf := unsafe.Slice((*byte)(data), total+1)
	at := 0
	for i, b := range append(append([][]byte{}, args...), results...) {
		ps[i], ss[i] = unsafe.Pointer(&buf[at]), C.int64_t(len(b))
		if i < len(args) {
			copy(buf[at:], b)
		}
		at += len(b)
	}
	rc := C.mp_call_host(fn, C.uint64_t(id), C.int32_t(len(args)), ptrs, sizes,
		C.int32_t(len(results)), (*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(ptrs), uintptr(len(args))*uintptr(word))),
		(*C.int64_t)(unsafe.Add(unsafe.Pointer(sizes), len(args)*8)), msg, hostErrLen)
	if rc != 0 {
		text := C.GoString(msg)
		if text == "" {
			text = "the callback failed and said nothing"
		}
		return errors.New(text)
	}
	for i, b := range results {
		copy(b, unsafe.Slice((*byte)(ps[len(args)+i]), len(b)))
	}
	return nil
}
