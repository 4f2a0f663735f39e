package stablehlo

import (
	le "encoding/binary"
	"math"

	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// Edits of a module that mlir.Read accepted. Mutating the bytecode
// itself mostly breaks its framing, which the reader's fuzzer already
// covers; an edit changes the module as read (a dimension, an element
// type, an integer attribute, an operand) so that the translation meets
// modules that are well formed as bytecode and wrong as StableHLO.

// editReader hands out an edit list's bytes, then zeros.
type editReader struct{ b []byte }

func (r *editReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *editReader) uint16() int { return int(r.byte()) | int(r.byte())<<8 }

// int64 is an edit of v: the values that break arithmetic on shapes and
// indices (0, -1, MLIR's dynamic dimension, overflowing ones) and small
// steps away from v.
func (r *editReader) int64(v int64) int64 {
	switch r.byte() % 10 {
	case 0:
		return 0
	case 1:
		return 1
	case 2:
		return -1
	case 3:
		return v + 1
	case 4:
		return v - 1
	case 5:
		return math.MinInt64 // MLIR's dynamic dimension
	case 6:
		return 1 << 31
	case 7:
		return 1 << 62
	case 8:
		return v * int64(r.byte())
	}
	var b [8]byte
	for i := range b {
		b[i] = r.byte()
	}
	return int64(le.LittleEndian.Uint64(b[:]))
}

// editElemTypes are the element types an edit puts in a tensor type.
var editElemTypes = []mlir.Type{
	&mlir.FloatType{Kind: "f32"}, &mlir.FloatType{Kind: "f16"}, &mlir.FloatType{Kind: "bf16"}, &mlir.FloatType{Kind: "f64"},
	&mlir.IntegerType{Width: 1}, &mlir.IntegerType{Width: 8}, &mlir.IntegerType{Width: 32}, &mlir.IntegerType{Width: 64},
	&mlir.IntegerType{Width: 32, Signedness: mlir.Unsigned}, &mlir.IntegerType{Width: 8, Signedness: mlir.Unsigned},
	&mlir.ComplexType{Elem: &mlir.FloatType{Kind: "f32"}}, &mlir.TokenType{},
}

// applyEdits applies edits to m: each is a site (two bytes, modulo the
// module's sites) and what to do there (the bytes that site's edit reads).
// At most 16 apply, so that a long edit list does not cost a long run.
func applyEdits(m *mlir.Module, edits []byte) {
	r := &editReader{edits}
	sites := editSites(m)
	if len(sites) == 0 {
		return
	}
	for n := 0; n < 16 && len(r.b) > 0; n++ {
		sites[r.uint16()%len(sites)](r)
	}
}

// fitInt is v as the reader holds an integer attribute of type t: cut to
// t's width, then sign-extended unless t is unsigned or i1.
func fitInt(t mlir.Type, v int64) int64 {
	it, ok := t.(*mlir.IntegerType)
	if !ok || it.Width >= 64 || it.Width <= 0 {
		return v
	}
	u := uint64(v) & (1<<it.Width - 1)
	if it.Signedness != mlir.Unsigned && it.Width > 1 && u>>(it.Width-1) == 1 {
		u |= ^uint64(0) << it.Width
	}
	return int64(u)
}

// unshare gives every dense attribute a tensor type of its own: types
// are shared, and an edit of a value's type must not change the type a
// constant's data was read for.
func unshare(m *mlir.Module) {
	var walk func(a mlir.Attr)
	walk = func(a mlir.Attr) {
		switch a := a.(type) {
		case *mlir.DenseAttr:
			if tt, ok := a.Type.(*mlir.TensorType); ok {
				c := *tt
				c.Shape = append([]int64(nil), tt.Shape...)
				a.Type = &c
			}
		case *mlir.ArrayAttr:
			for _, e := range a.Elems {
				walk(e)
			}
		case *mlir.DictAttr:
			for _, e := range a.Entries {
				walk(e.Value)
			}
		}
	}
	m.Walk(func(op *mlir.Operation) bool {
		for _, a := range op.Attrs {
			walk(a.Value)
		}
		return true
	})
}

// editSites lists what an edit may change in m, in the module's order.
func editSites(m *mlir.Module) []func(r *editReader) {
	unshare(m)
	var sites []func(r *editReader)
	seen := map[*mlir.TensorType]bool{}
	addType := func(t mlir.Type) {
		tt, ok := t.(*mlir.TensorType)
		if !ok || seen[tt] {
			return
		}
		seen[tt] = true // types are shared: an edit changes every value of it
		for i := range tt.Shape {
			sites = append(sites, func(r *editReader) {
				if i < len(tt.Shape) { // not cut off by an earlier edit
					tt.Shape[i] = r.int64(tt.Shape[i])
				}
			})
		}
		sites = append(sites, func(r *editReader) { tt.Elem = editElemTypes[int(r.byte())%len(editElemTypes)] })
		sites = append(sites, func(r *editReader) { tt.Shape = tt.Shape[:int(r.byte())%(len(tt.Shape)+1)] })
	}
	var addAttr func(a mlir.Attr)
	addAttr = func(a mlir.Attr) {
		switch a := a.(type) {
		case *mlir.IntegerAttr:
			sites = append(sites, func(r *editReader) { a.Value = fitInt(a.Type, r.int64(a.Value)) })
		case *mlir.BoolAttr:
			sites = append(sites, func(r *editReader) { a.Value = !a.Value })
		case *mlir.DenseArrayAttr:
			if w := len(a.Data) / max(a.Size, 1); w == 8 {
				for i := range a.Size {
					sites = append(sites, func(r *editReader) {
						if 8*i+8 > len(a.Data) {
							return // cut off by an earlier edit
						}
						v := int64(le.LittleEndian.Uint64(a.Data[8*i:]))
						le.LittleEndian.PutUint64(a.Data[8*i:], uint64(r.int64(v)))
					})
				}
			}
			if a.Size > 0 {
				sites = append(sites, func(r *editReader) {
					n := int(r.byte()) % a.Size
					a.Data, a.Size = a.Data[:len(a.Data)/a.Size*n], n
				})
			}
		case *mlir.DenseAttr:
			// Its type is its own (unshare), and stays as it is: the
			// reader holds the data's length to it.
			if len(a.Data) > 0 {
				sites = append(sites, func(r *editReader) { a.Data[r.uint16()%len(a.Data)] = r.byte() })
			}
		case *mlir.ArrayAttr:
			for _, e := range a.Elems {
				addAttr(e)
			}
			sites = append(sites, func(r *editReader) { a.Elems = a.Elems[:int(r.byte())%(len(a.Elems)+1)] })
		case *mlir.DictAttr:
			for _, e := range a.Entries {
				addAttr(e.Value)
			}
		case *mlir.TypeAttr:
			addType(a.Type)
			if ft, ok := a.Type.(*mlir.FunctionType); ok {
				for _, t := range append(append([]mlir.Type{}, ft.Inputs...), ft.Results...) {
					addType(t)
				}
			}
		}
	}
	m.Walk(func(op *mlir.Operation) bool {
		// An operand edit picks a value of op's block defined before op,
		// which the translation has in scope, so that the edit reaches the
		// op's own checks of its operands' types.
		var pool []*mlir.Value
		if op.Block != nil {
			pool = append(pool, op.Block.Args...)
			for _, o := range op.Block.Ops {
				if o == op {
					break
				}
				pool = append(pool, o.Results...)
			}
		}
		for j := range op.Operands {
			if len(pool) > 0 {
				sites = append(sites, func(r *editReader) { op.Operands[j] = pool[r.uint16()%len(pool)] })
			}
		}
		for _, a := range op.Attrs {
			addAttr(a.Value)
		}
		for _, v := range op.Results {
			addType(v.Type)
		}
		for _, rg := range op.Regions {
			for _, b := range rg.Blocks {
				for _, v := range b.Args {
					addType(v.Type)
				}
			}
		}
		return true
	})
	return sites
}
