package drivertest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/metalplug/metalplug/backend/driver"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/ir/eval"
	"github.com/metalplug/metalplug/backend/ir/irtest"
)

// tensor is a host-side value. Elements are held as float64, which is exact
// for every dtype at the small magnitudes the tests use. A complex64 tensor
// keeps its real parts in V and its imaginary parts in Im; a nil Im means
// imagOf(V), so that data movement tests, which copy V element by element,
// run on complex64 unchanged and still catch real and imaginary parts moved
// apart or swapped.
type tensor struct {
	T  ir.TensorType
	V  []float64
	Im []float64
	// Raw, when set, is the tensor's bytes as they are, for bit patterns
	// float64 cannot hold (int64 keys past 2^53).
	Raw []byte
}

// imagOf is the imaginary part a complex64 tensor without Im has.
func imagOf(re float64) float64 { return 0.5 - re }

// imag is t's imaginary parts (complex64 only).
func (t tensor) imag() []float64 {
	if t.Im != nil {
		return t.Im
	}
	return mapf(t.V, imagOf)
}

func tt(d ir.DType, shape ...int) ir.TensorType {
	return ir.TensorType{DType: d, Shape: ir.Shape(shape)}
}

// harness runs programs through a driver's own memory and streams: inputs
// are copied in with Memcpy, results copied out, exactly as a frontend does.
type harness struct {
	d   driver.Driver
	s   driver.Stream
	rnd *rand.Rand
}

func newHarness(t *testing.T, d driver.Driver) *harness {
	s, err := d.NewStream()
	if err != nil {
		t.Fatalf("NewStream: %v", err)
	}
	h := &harness{d: d, s: s, rnd: rand.New(rand.NewPCG(1, 2))}
	t.Cleanup(func() { h.s.Close() })
	return h
}

// run executes p on args and returns its results.
func (h *harness) run(t *testing.T, p *ir.Program, args ...tensor) []tensor {
	t.Helper()
	raw := h.runBytes(t, p, args...)
	out := make([]tensor, len(raw))
	for i, rt := range p.ResultTypes() {
		out[i] = decodeTensor(rt, raw[i])
	}
	return out
}

// RunBytes compiles p on d, runs it on args (each the bytes of the
// parameter's type) on a stream of its own, with the tensors placed as a
// frontend's allocator places them, and returns its results' bytes: for
// tests outside this suite that compare a driver's bytes with another's.
func RunBytes(t *testing.T, d driver.Driver, p *ir.Program, args ...[]byte) [][]byte {
	t.Helper()
	if len(args) != len(p.Params) {
		t.Fatalf("%d arguments for %d parameters", len(args), len(p.Params))
	}
	ts := make([]tensor, len(args))
	for i, a := range args {
		if len(a) != p.Params[i].Bytes() {
			t.Fatalf("argument %d has %d bytes for %v", i, len(a), p.Params[i])
		}
		ts[i] = tensor{T: p.Params[i], Raw: a}
	}
	return newHarness(t, d).runBytes(t, p, ts...)
}

// runBytes executes p on args and returns its results' bytes, for tests
// that compare bits (int64 beyond 2^53, random numbers).
func (h *harness) runBytes(t *testing.T, p *ir.Program, args ...tensor) [][]byte {
	t.Helper()
	exe, err := h.d.Compile(p)
	if err != nil {
		if d, ok := declined(h.d, p); ok {
			t.Fatalf("test bug: a case of %v, which the driver declines, was not left out by h.keep (%v)", d, err)
		}
		t.Fatalf("Compile: %v\n%s", err, p)
	}
	var ptrs []unsafe.Pointer
	defer func() {
		h.s.Synchronize() // never free memory queued work may still touch
		for _, q := range ptrs {
			if err := h.d.Free(q); err != nil {
				t.Errorf("Free: %v", err)
			}
		}
	}()
	alloc := func(n int) unsafe.Pointer {
		q, err := h.d.Allocate(n)
		if err != nil {
			t.Fatalf("Allocate(%d): %v", n, err)
		}
		ptrs = append(ptrs, q)
		return q
	}
	// The first argument sits at the start of an allocation of its own;
	// every other argument and result is carved out of one shared
	// allocation at interior offsets that are multiples of 8 but mostly not
	// of 16, the way a frontend's allocator carves tensors, so a driver's
	// binding of tensors inside an allocation is exercised by every case.
	var layout []int
	sizes := make([]int, 0, len(args)+len(p.ResultTypes()))
	for _, a := range args {
		sizes = append(sizes, a.T.Bytes())
	}
	for _, rt := range p.ResultTypes() {
		sizes = append(sizes, rt.Bytes())
	}
	total := 8
	for i, n := range sizes {
		if i == 0 {
			layout = append(layout, -1)
			continue
		}
		layout = append(layout, total)
		total += (n+7)/8*8 + 8
	}
	shared := alloc(total)
	place := func(i int) unsafe.Pointer {
		if layout[i] < 0 {
			return alloc(sizes[i])
		}
		return unsafe.Add(shared, layout[i])
	}
	if len(args) != len(p.Params) {
		t.Fatalf("test bug: %d arguments for %d parameters", len(args), len(p.Params))
	}
	argPtrs := make([]unsafe.Pointer, len(args))
	hostIn := make([][]byte, len(args)) // kept alive until Synchronize
	for i, a := range args {
		if a.T.DType != p.Params[i].DType || !a.T.Shape.Equal(p.Params[i].Shape) {
			t.Fatalf("test bug: argument %d is %v, parameter is %v", i, a.T, p.Params[i])
		}
		hostIn[i] = encodeTensor(a)
		argPtrs[i] = place(i)
		if len(hostIn[i]) > 0 {
			h.s.Memcpy(argPtrs[i], unsafe.Pointer(&hostIn[i][0]), len(hostIn[i]))
		}
	}
	rtypes := p.ResultTypes()
	resPtrs := make([]unsafe.Pointer, len(rtypes))
	hostOut := make([][]byte, len(rtypes))
	for i, rt := range rtypes {
		hostOut[i] = make([]byte, rt.Bytes())
		resPtrs[i] = place(len(args) + i)
		// Poison results so that an element a kernel forgets to write shows.
		h.s.Memset(resPtrs[i], 0xa5, rt.Bytes())
	}
	h.s.Execute(exe, argPtrs, resPtrs)
	for i, b := range hostOut {
		if len(b) > 0 {
			h.s.Memcpy(unsafe.Pointer(&b[0]), resPtrs[i], len(b))
		}
	}
	if err := h.s.Synchronize(); err != nil {
		// A failed stream stays failed: give later tests a fresh one.
		h.s.Close()
		if h.s, err = h.d.NewStream(); err != nil {
			t.Fatalf("NewStream: %v", err)
		}
		t.Fatalf("execute: %v\n%s", err, p)
	}
	return hostOut
}

// Decliner is what a driver implements to say that it refuses a dtype
// outright (Metal has no float64): cases of that type are left out on it
// (harness.keep) rather than failed.
type Decliner interface {
	Declines(d ir.DType) bool
}

// keep is ds without the dtypes the driver declines: every loop over
// dtypes goes through it, so that a declined type skips its own cases and
// no others.
func (h *harness) keep(ds []ir.DType) []ir.DType {
	dec, ok := h.d.(Decliner)
	if !ok {
		return ds
	}
	var out []ir.DType
	for _, d := range ds {
		if !dec.Declines(d) {
			out = append(out, d)
		}
	}
	return out
}

// declined reports the first dtype of p that d declines.
func declined(d driver.Driver, p *ir.Program) (ir.DType, bool) {
	dec, ok := d.(Decliner)
	if !ok {
		return 0, false
	}
	for _, t := range p.Params {
		if dec.Declines(t.DType) {
			return t.DType, true
		}
	}
	for _, in := range p.Instrs {
		if dec.Declines(in.Type.DType) {
			return in.Type.DType, true
		}
	}
	return 0, false
}

// programOver builds a program whose parameters have args' types and
// whose results are what build makes of them.
func programOver(t *testing.T, name string, args []tensor, build func(b *ir.Builder, xs []ir.Value) []ir.Value) *ir.Program {
	t.Helper()
	b := ir.NewBuilder()
	xs := make([]ir.Value, len(args))
	for i, a := range args {
		xs[i] = b.Parameter(a.T)
	}
	p, err := b.Build(build(b, xs)...)
	if err != nil {
		t.Fatalf("%s: build: %v", name, err)
	}
	return p
}

// one makes a builder of one result a builder of results.
func one(build func(b *ir.Builder, xs []ir.Value) ir.Value) func(b *ir.Builder, xs []ir.Value) []ir.Value {
	return func(b *ir.Builder, xs []ir.Value) []ir.Value { return []ir.Value{build(b, xs)} }
}

// check builds a program over params with build, runs it on args and
// compares its one result with want, within the tolerance of want's dtype.
func (h *harness) check(t *testing.T, name string, args []tensor, build func(b *ir.Builder, xs []ir.Value) ir.Value, want tensor) {
	t.Helper()
	p := programOver(t, name, args, one(build))
	got := h.run(t, p, args...)[0]
	compare(t, name, got, want)
	h.checkReference(t, name, p, args, got)
}

// checkReference compares a driver's result with the IR's reference
// interpreter (backend/ir/eval) too, so that the suite's loops and the
// interpreter cannot drift apart unnoticed.
func (h *harness) checkReference(t *testing.T, name string, p *ir.Program, args []tensor, got tensor) {
	t.Helper()
	ref, err := eval.Run(p, evalArgs(args))
	if err != nil {
		t.Errorf("%s: the reference interpreter fails where the driver ran: %v", name, err)
		return
	}
	compare(t, name+" (against the reference interpreter)", got, fromEval(ref[0]))
}

// checkEval builds a program of one or more results over params of args'
// types with build, runs it on args, and compares every result with the
// reference interpreter's, within the tolerance of its dtype: the
// interpreter is the reference, with no loop of the suite's own.
func (h *harness) checkEval(t *testing.T, name string, args []tensor, build func(b *ir.Builder, xs []ir.Value) []ir.Value) {
	t.Helper()
	p := programOver(t, name, args, build)
	got := h.run(t, p, args...)
	ref, err := eval.Run(p, evalArgs(args))
	if err != nil {
		t.Fatalf("%s: the reference interpreter fails where the driver ran: %v", name, err)
	}
	for i, r := range ref {
		compare(t, fmt.Sprintf("%s, result %d", name, i), got[i], fromEval(r))
	}
}

// checkEvalBits is checkEval bit for bit: every element of every result
// must have the reference interpreter's bytes (signed zeros and integers
// past 2^53 included), except that any NaN matches any NaN (a NaN's sign
// and payload are the interpreter's own).
func (h *harness) checkEvalBits(t *testing.T, name string, args []tensor, build func(b *ir.Builder, xs []ir.Value) []ir.Value) {
	t.Helper()
	p := programOver(t, name, args, build)
	got := h.runBytes(t, p, args...)
	ref, err := eval.Run(p, evalArgs(args))
	if err != nil {
		t.Fatalf("%s: the reference interpreter fails where the driver ran: %v", name, err)
	}
	for i, r := range ref {
		compareBits(t, fmt.Sprintf("%s, result %d", name, i), r.Type, got[i], r.Bytes(), 0, "as the reference interpreter has it")
	}
}

// compareBits checks a result's bytes against want, element by element (a
// complex64's parts each on their own), bit for bit but for NaN, which
// matches any NaN, and a finite float within ulps of want (irtest.Diff);
// whose says where want came from.
func compareBits(t *testing.T, name string, typ ir.TensorType, got, want []byte, ulps int, whose string) {
	t.Helper()
	diffs := irtest.Diff(typ, got, want, ulps)
	for _, d := range diffs[:min(len(diffs), 5)] {
		t.Errorf("%s (of %v): %s, %s", name, typ, d, whose)
	}
	if len(diffs) > 5 {
		t.Errorf("%s: %d elements wrong in all", name, len(diffs))
	}
}

// evalArgs are the suite's tensors as the interpreter's.
func evalArgs(args []tensor) []eval.Tensor {
	in := make([]eval.Tensor, len(args))
	for i, a := range args {
		switch {
		case a.Raw != nil:
			in[i] = eval.FromBytes(a.T, a.Raw)
		case a.T.DType == ir.C64:
			in[i] = eval.New(a.T)
			for k, im := range a.imag() {
				in[i].C[k] = complex(a.V[k], im)
			}
		default:
			in[i] = eval.New(a.T)
			for k, v := range a.V {
				in[i].Set(k, v)
			}
		}
	}
	return in
}

// fromEval is an interpreter's value as the suite's tensor.
func fromEval(r eval.Tensor) tensor {
	want := tensor{T: r.Type, V: r.Floats()}
	if r.C != nil {
		want.Im = make([]float64, len(r.C))
		for k, z := range r.C {
			want.Im[k] = imag(z)
		}
	}
	return want
}

// compare checks got against want elementwise. Floats allow a tolerance that
// depends on the dtype; half types get a looser one, as they round each
// result to 8 or 11 significant bits.
func compare(t *testing.T, name string, got, want tensor) {
	t.Helper()
	if got.T.DType != want.T.DType || !got.T.Shape.Equal(want.T.Shape) {
		t.Errorf("%s: result type %v, want %v", name, got.T, want.T)
		return
	}
	tol := tolerance(want.T.DType)
	bad := 0
	check := func(part string, gv, wv []float64) {
		for i := range wv {
			g, w := gv[i], wv[i]
			ok := g == w || (math.IsNaN(g) && math.IsNaN(w)) ||
				(!math.IsInf(w, 0) && math.Abs(g-w) <= tol*(1+math.Abs(w)))
			if !ok {
				if bad < 5 {
					t.Errorf("%s: element %d%s (of %v) = %v, want %v", name, i, part, want.T, g, w)
				}
				bad++
			}
		}
	}
	check("", got.V, want.V)
	if want.T.DType == ir.C64 {
		check(" (imaginary part)", got.imag(), want.imag())
	}
	if bad > 5 {
		t.Errorf("%s: %d elements wrong in all", name, bad)
	}
}

func tolerance(d ir.DType) float64 {
	switch d {
	case ir.F32, ir.C64:
		return 1e-5
	case ir.F64:
		return 1e-12
	case ir.F16:
		return 4e-3
	case ir.BF16:
		return 2e-2
	}
	return 0 // integers and bools are exact
}

// encodeTensor is encode, with complex64's imaginary parts.
func encodeTensor(t tensor) []byte {
	if t.Raw != nil {
		return t.Raw
	}
	if t.T.DType != ir.C64 {
		return encode(t.T.DType, t.V)
	}
	im := t.imag()
	parts := make([]float64, 0, 2*len(t.V))
	for i, re := range t.V {
		parts = append(parts, re, im[i])
	}
	return encode(ir.F32, parts)
}

// decodeTensor is decode, with complex64's imaginary parts.
func decodeTensor(tt ir.TensorType, b []byte) tensor {
	if tt.DType != ir.C64 {
		return tensor{T: tt, V: decode(tt.DType, b)}
	}
	parts := decode(ir.F32, b)
	t := tensor{T: tt, V: make([]float64, len(parts)/2), Im: make([]float64, len(parts)/2)}
	for i := range t.V {
		t.V[i], t.Im[i] = parts[2*i], parts[2*i+1]
	}
	return t
}

// encode writes values in d's little-endian layout (complex64 with imagOf
// parts). Integers wrap, as a
// two's-complement store does, so references may compute in float64 and let
// encode/decode apply the dtype's overflow.
func encode(d ir.DType, v []float64) []byte {
	if d == ir.C64 {
		return encodeTensor(tensor{T: ir.TensorType{DType: d}, V: v})
	}
	n := d.Size()
	b := make([]byte, len(v)*n)
	for i, x := range v {
		e := b[i*n : i*n+n]
		switch d {
		case ir.F32:
			binary.LittleEndian.PutUint32(e, math.Float32bits(float32(x)))
		case ir.F64:
			binary.LittleEndian.PutUint64(e, math.Float64bits(x))
		case ir.F16:
			binary.LittleEndian.PutUint16(e, ir.F32ToF16(float32(x)))
		case ir.BF16:
			binary.LittleEndian.PutUint16(e, ir.F32ToBF16(float32(x)))
		case ir.I8, ir.U8:
			e[0] = byte(int64(x))
		case ir.I16:
			binary.LittleEndian.PutUint16(e, uint16(int64(x)))
		case ir.I32, ir.U32:
			binary.LittleEndian.PutUint32(e, uint32(int64(x)))
		case ir.I64:
			// float64 cannot count past 2^63, so nothing to wrap: saturate
			// instead, which keeps max/min identities exact.
			v := int64(math.MaxInt64)
			if x < math.MaxInt64 {
				v = int64(max(x, math.MinInt64))
			}
			binary.LittleEndian.PutUint64(e, uint64(v))
		case ir.Bool:
			if x != 0 {
				e[0] = 1
			}
		default:
			panic(fmt.Sprintf("drivertest: cannot encode %v", d))
		}
	}
	return b
}

func decode(d ir.DType, b []byte) []float64 {
	if d == ir.C64 {
		return decodeTensor(ir.TensorType{DType: d}, b).V
	}
	n := d.Size()
	v := make([]float64, len(b)/n)
	for i := range v {
		e := b[i*n : i*n+n]
		switch d {
		case ir.F32:
			v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(e)))
		case ir.F64:
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(e))
		case ir.F16:
			v[i] = float64(ir.F16ToF32(binary.LittleEndian.Uint16(e)))
		case ir.BF16:
			v[i] = float64(ir.BF16ToF32(binary.LittleEndian.Uint16(e)))
		case ir.I8:
			v[i] = float64(int8(e[0]))
		case ir.U8, ir.Bool:
			v[i] = float64(e[0])
		case ir.I16:
			v[i] = float64(int16(binary.LittleEndian.Uint16(e)))
		case ir.I32:
			v[i] = float64(int32(binary.LittleEndian.Uint32(e)))
		case ir.U32:
			v[i] = float64(binary.LittleEndian.Uint32(e))
		case ir.I64:
			v[i] = float64(int64(binary.LittleEndian.Uint64(e)))
		}
	}
	return v
}

// quantize rounds (floats) or wraps (integers) v to what dtype d can hold.
func quantize(d ir.DType, v []float64) []float64 { return decode(d, encode(d, v)) }

// valueKind picks the domain of generated test inputs.
type valueKind int

const (
	anyValue valueKind = iota // floats in [-4, 4] by quarters; ints in [-8, 8]
	positive                  // floats in (0, 4]; ints in [1, 8]
	small                     // ints in [-3, 3], floats in [-2, 2] by quarters
)

// gen makes a tensor of type d[shape] with values exact in every dtype.
func (h *harness) gen(d ir.DType, kind valueKind, shape ...int) tensor {
	t := tt(d, shape...)
	v := make([]float64, t.Shape.Size())
	for i := range v {
		switch {
		case d == ir.Bool:
			v[i] = float64(h.rnd.IntN(2))
		case (d.IsFloat() || d == ir.C64) && kind == positive:
			v[i] = float64(h.rnd.IntN(16)+1) / 4
		case (d.IsFloat() || d == ir.C64) && kind == small:
			v[i] = float64(h.rnd.IntN(17)-8) / 4
		case d.IsFloat() || d == ir.C64:
			v[i] = float64(h.rnd.IntN(33)-16) / 4
		case kind == positive:
			v[i] = float64(h.rnd.IntN(8) + 1)
		case d.IsUnsigned() && kind == small:
			v[i] = float64(h.rnd.IntN(4))
		case d.IsUnsigned():
			v[i] = float64(h.rnd.IntN(17))
		case kind == small:
			v[i] = float64(h.rnd.IntN(7) - 3)
		default:
			v[i] = float64(h.rnd.IntN(17) - 8)
		}
	}
	return tensor{T: t, V: v}
}

// forEachIndex calls fn with every multi-index of shape in row-major order;
// a scalar has one (empty) index and a shape with a zero dimension none.
func forEachIndex(shape []int, fn func(idx []int)) {
	for _, n := range shape {
		if n == 0 {
			return
		}
	}
	idx := make([]int, len(shape))
	for {
		fn(idx)
		d := len(shape) - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// offset is the row-major position of idx in shape.
func offset(shape, idx []int) int {
	o := 0
	for i, n := range shape {
		o = o*n + idx[i]
	}
	return o
}

var (
	floatTypes = []ir.DType{ir.F32, ir.F64, ir.F16, ir.BF16}
	intTypes   = []ir.DType{ir.I8, ir.I16, ir.I32, ir.I64, ir.U8, ir.U32}
	allTypes   = []ir.DType{ir.F32, ir.F64, ir.F16, ir.BF16, ir.I8, ir.I16, ir.I32, ir.I64, ir.U8, ir.U32, ir.Bool}
)
