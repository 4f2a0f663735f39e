package stablehlo

import (
	"fmt"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// Signature is what the PJRT layer needs to know of main beside the
// program: the types of its arguments and results (the program's
// parameters and results, in order) and what jax attached to them.
type Signature struct {
	Args    []Arg
	Results []Result
}

// Arg is one argument of main.
type Arg struct {
	Type ir.TensorType
	// Held is PJRT's name of the argument's element type (u16, u64,
	// f8e4m3fn, s4: XLA's names) when Type's dtype only holds it (ui16 and
	// ui64 as int16 and int64 bits, a narrow float as its byte, a narrow
	// integer as a byte with its value in the low bits), or "".
	Held string
	// AliasOutput is the result jax asks to write into this argument's
	// buffer (jit's donate_argnums, as the arg attribute
	// tf.aliasing_output = N), or -1. jax has already checked that the
	// types match and no longer reads the argument after the call.
	AliasOutput int
	// Donor is set for an argument jax marked jax.buffer_donor: donated,
	// with no result named; the plugin may reuse its buffer for any result
	// of its type.
	Donor bool
	// Sharding and LayoutMode are mhlo.sharding and mhlo.layout_mode as
	// jax wrote them, when it did ("" otherwise); on one device they say
	// nothing a plugin must act on.
	Sharding, LayoutMode string
}

// Result is one result of main.
type Result struct {
	Type ir.TensorType
	// Held as for Arg.
	Held string
	// Info is jax.result_info ("result[0]", or a pytree path).
	Info string
	// Sharding and LayoutMode as for Arg.
	Sharding, LayoutMode string
}

// Donated reports whether jax donated argument i in either way.
func (s *Signature) Donated(i int) bool {
	return i >= 0 && i < len(s.Args) && (s.Args[i].AliasOutput >= 0 || s.Args[i].Donor)
}

// MainSignature reads main's signature without translating its body.
func MainSignature(m *mlir.Module) (*Signature, error) {
	t := &translator{}
	main, err := t.load(m, "main")
	if err != nil {
		return nil, err
	}
	ft, err := funcType(main)
	if err != nil {
		return nil, err
	}
	argAttrs, err := attrDicts(main, "arg_attrs", len(ft.Inputs))
	if err != nil {
		return nil, err
	}
	resAttrs, err := attrDicts(main, "res_attrs", len(ft.Results))
	if err != nil {
		return nil, err
	}
	s := &Signature{}
	for i, in := range ft.Inputs {
		tt, err := boundaryType(main, in, fmt.Sprintf("argument %d", i))
		if err != nil {
			return nil, err
		}
		a := Arg{Type: tt, Held: heldName(in), AliasOutput: -1}
		d := argAttrs[i]
		if v, ok := d.Get("tf.aliasing_output"); ok {
			n, ok := v.(*mlir.IntegerAttr)
			if !ok || n.Value < 0 || n.Value >= int64(len(ft.Results)) {
				return nil, invalid(main, "argument %d: tf.aliasing_output = %s names no result", i, v)
			}
			a.AliasOutput = int(n.Value)
		}
		if v, ok := d.Get("jax.buffer_donor"); ok {
			a.Donor = truthy(v)
		}
		a.Sharding, a.LayoutMode = text(d, "mhlo.sharding"), text(d, "mhlo.layout_mode")
		s.Args = append(s.Args, a)
	}
	for i, out := range ft.Results {
		tt, err := boundaryType(main, out, fmt.Sprintf("result %d", i))
		if err != nil {
			return nil, err
		}
		d := resAttrs[i]
		s.Results = append(s.Results, Result{Type: tt, Held: heldName(out), Info: text(d, "jax.result_info"),
			Sharding: text(d, "mhlo.sharding"), LayoutMode: text(d, "mhlo.layout_mode")})
	}
	for i, a := range s.Args {
		if a.AliasOutput < 0 {
			continue
		}
		r := s.Results[a.AliasOutput].Type
		if r.DType != a.Type.DType || s.Results[a.AliasOutput].Held != a.Held || !r.Shape.Equal(a.Type.Shape) {
			return nil, invalid(main, "argument %d (%v) aliases result %d (%v) of another type", i, a.Type, a.AliasOutput, r)
		}
	}
	return s, nil
}

// attrDicts reads arg_attrs or res_attrs: one dictionary per entry, or
// none at all.
func attrDicts(fn *mlir.Operation, name string, n int) ([]*mlir.DictAttr, error) {
	out := make([]*mlir.DictAttr, n)
	for i := range out {
		out[i] = &mlir.DictAttr{}
	}
	a, ok := fn.Attr(name)
	if !ok {
		return out, nil
	}
	arr, ok := a.(*mlir.ArrayAttr)
	if !ok {
		return nil, invalid(fn, "%s is %s, not an array", name, a)
	}
	if len(arr.Elems) == 0 {
		return out, nil
	}
	if len(arr.Elems) != n {
		return nil, invalid(fn, "%s has %d entries for %d values", name, len(arr.Elems), n)
	}
	for i, el := range arr.Elems {
		d, ok := el.(*mlir.DictAttr)
		if !ok {
			return nil, invalid(fn, "%s entry %d is %s, not a dictionary", name, i, el)
		}
		out[i] = d
	}
	return out, nil
}

func truthy(a mlir.Attr) bool {
	switch a := a.(type) {
	case *mlir.BoolAttr:
		return a.Value
	case *mlir.IntegerAttr:
		return a.Value != 0
	case *mlir.UnitAttr:
		return true
	}
	return false
}

func text(d *mlir.DictAttr, name string) string {
	v, ok := d.Get(name)
	if !ok {
		return ""
	}
	if s, ok := v.(*mlir.StringAttr); ok {
		return s.Value
	}
	return v.String()
}
