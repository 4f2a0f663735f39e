// Command testlib is a c-shared library of the PJRT frontend alone, for
// plugin/pjrt's end-to-end test with a real jax: it needs no TensorFlow,
// unlike plugin/libmetalplug, which links both frontends.
//
//	go build -buildmode=c-shared -o libmetalplug.so ./plugin/pjrt/internal/testlib
//
// With METALPLUG_TEST_TRANSLATOR=affine it fills the translation seam with
// a stand-in that reads nothing and returns the program of
// jax.jit(lambda a: a * 2 + 1) on f32[3], so that jax's whole compile and
// execute path runs before a real translator exists. The end-to-end test
// compiles only that function when it sets the variable.
package main

import (
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/cenv"
	"github.com/metalplug/metalplug/plugin/pjrt"
)

func init() {
	if cenv.Get("METALPLUG_TEST_TRANSLATOR") != "affine" {
		return
	}
	pjrt.Translate = func(code []byte, format string) (*ir.Program, error) {
		b := ir.NewBuilder()
		t := ir.TensorType{DType: ir.F32, Shape: ir.Shape{3}}
		a := b.Parameter(t)
		return b.Build(b.Binary(ir.OpAdd, b.Binary(ir.OpMul, a, b.Full(t, 2)), b.Full(t, 1)))
	}
}

func main() {}
