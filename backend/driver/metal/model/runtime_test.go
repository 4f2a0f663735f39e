package model

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// identityExe compiles y = identity(x) for a placeholder x.
func identityExe(t *testing.T, dev gpu.Device, shape []int, dt gpu.DataType) gpu.Executable {
	t.Helper()
	g := graphOn(dev)
	x := g.Placeholder(shape, dt)
	exe, err := g.Compile([]gpu.Tensor{x}, []gpu.Tensor{g.Identity(x)})
	fatalIf(t, err)
	return exe
}

// encodeRun runs exe once on a queue of its own: the encode error, or else
// the run's.
func encodeRun(t *testing.T, dev gpu.Device, exe gpu.Executable, in, out []gpu.Data) error {
	t.Helper()
	q, err := dev.NewQueue()
	fatalIf(t, err)
	defer q.Release()
	cb, err := q.NewCommandBuffer()
	fatalIf(t, err)
	if err := cb.Encode(exe, in, out); err != nil {
		return err
	}
	return commitWait(t, cb)
}

func scratch(t *testing.T, dev gpu.Device, n int) gpu.Buffer {
	t.Helper()
	b, err := dev.NewScratch(n)
	fatalIf(t, err)
	return b
}

// A [3, 3] float32 at an interior offset: read as packed only with
// PackedRows; without it the model's rows are 16 bytes apart, so a driver
// that forgets PackedRows reads the wrong elements.
func TestBindingPackedRows(t *testing.T) {
	shape := []int{3, 3}
	exe := identityExe(t, dev15, shape, gpu.Float32)
	nine := le[float32](1, 2, 3, 4, 5, 6, 7, 8, 9)
	in := scratch(t, dev15, 256)
	copy(in.Bytes()[16:], nine)

	for _, tc := range []struct {
		packed bool
		want   []float32
	}{
		{true, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{false, []float32{1, 2, 3, 5, 6, 7, 9, 0, 0}}, // rows at 16, 32, 48
	} {
		out := scratch(t, dev15, 36)
		err := encodeRun(t, dev15, exe,
			[]gpu.Data{{Buffer: in, Offset: 16, Shape: shape, DType: gpu.Float32, PackedRows: tc.packed}},
			[]gpu.Data{{Buffer: out, Shape: shape, DType: gpu.Float32}})
		fatalIf(t, err)
		checkF32(t, "read at offset 16", out.Bytes(), tc.want...)
	}

	// At offset 0 the data is packed whatever PackedRows says.
	at0 := scratch(t, dev15, 36)
	copy(at0.Bytes(), nine)
	out := scratch(t, dev15, 36)
	fatalIf(t, encodeRun(t, dev15, exe, []gpu.Data{{Buffer: at0, Shape: shape, DType: gpu.Float32}},
		[]gpu.Data{{Buffer: out, Shape: shape, DType: gpu.Float32}}))
	checkF32(t, "read at offset 0", out.Bytes(), 1, 2, 3, 4, 5, 6, 7, 8, 9)

	// Written at an interior offset without PackedRows, the padding of each
	// row is left alone.
	padded := scratch(t, dev15, 128)
	for i := range padded.Bytes() {
		padded.Bytes()[i] = 0xff
	}
	fatalIf(t, encodeRun(t, dev15, exe, []gpu.Data{{Buffer: at0, Shape: shape, DType: gpu.Float32}},
		[]gpu.Data{{Buffer: padded, Offset: 64, Shape: shape, DType: gpu.Float32}}))
	want := bytes.Repeat([]byte{0xff}, 128)
	for i := range 3 {
		copy(want[64+16*i:], nine[12*i:12*i+12])
	}
	if !bytes.Equal(padded.Bytes(), want) {
		t.Errorf("written with padded rows:\n% x\nwant\n% x", padded.Bytes(), want)
	}

	// Rank 3: every row of the last dimension is padded, here 3 bytes to 16.
	exe8 := identityExe(t, dev15, []int{2, 2, 3}, gpu.Int8)
	src := scratch(t, dev15, 12)
	copy(src.Bytes(), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	dst := scratch(t, dev15, 80)
	fatalIf(t, encodeRun(t, dev15, exe8, []gpu.Data{{Buffer: src, Shape: []int{2, 2, 3}, DType: gpu.Int8}},
		[]gpu.Data{{Buffer: dst, Offset: 16, Shape: []int{2, 2, 3}, DType: gpu.Int8}}))
	want = make([]byte, 80)
	for r := range 4 {
		copy(want[16+16*r:], []byte{byte(3*r + 1), byte(3*r + 2), byte(3*r + 3)})
	}
	if !bytes.Equal(dst.Bytes(), want) {
		t.Errorf("rank-3 padded rows:\n% x\nwant\n% x", dst.Bytes(), want)
	}
}

// Data at an interior offset is an MPSNDArray at an offset: macOS 15.
func TestBindingOffsetNeedsMacOS15(t *testing.T) {
	dev := New(Options{MacOS: gpu.Version{Major: 14, Minor: 6}})
	exe := identityExe(t, dev, []int{2}, gpu.Int32)
	buf := scratch(t, dev, 64)
	copy(buf.Bytes(), le[int32](5, 6))
	out := scratch(t, dev, 8)
	err := encodeRun(t, dev, exe, []gpu.Data{{Buffer: buf, Offset: 16, Shape: []int{2}, DType: gpu.Int32, PackedRows: true}},
		[]gpu.Data{{Buffer: out, Shape: []int{2}, DType: gpu.Int32}})
	wantErr(t, "offset 16 on macOS 14.6", err, "offset 16 needs an MPSNDArray at an offset (initWithBuffer:offset:descriptor:), from macOS 15.0")
	fatalIf(t, encodeRun(t, dev, exe, []gpu.Data{{Buffer: buf, Shape: []int{2}, DType: gpu.Int32}},
		[]gpu.Data{{Buffer: out, Shape: []int{2}, DType: gpu.Int32}}))
	check(t, "offset 0 on macOS 14.6", out.Bytes(), int32(5), 6)
}

// Bindings are checked when encoded, against the tensor and the buffer.
func TestBindingChecks(t *testing.T) {
	shape := []int{3, 3}
	exe := identityExe(t, dev15, shape, gpu.Float32)
	out := gpu.Data{Buffer: scratch(t, dev15, 36), Shape: shape, DType: gpu.Float32}
	in := func(n, off int, packed bool) []gpu.Data {
		return []gpu.Data{{Buffer: scratch(t, dev15, n), Offset: off, Shape: shape, DType: gpu.Float32, PackedRows: packed}}
	}
	// Unpacked rows at offset 4 end at 4 + 2*16 + 12 = 48; packed at 40.
	fatalIf(t, encodeRun(t, dev15, exe, in(48, 4, false), []gpu.Data{out}))
	fatalIf(t, encodeRun(t, dev15, exe, in(44, 4, true), []gpu.Data{out}))
	wantErr(t, "unpacked rows past the end", encodeRun(t, dev15, exe, in(44, 4, false), []gpu.Data{out}), "ends at byte 48 of a 44-byte buffer")
	wantErr(t, "packed past the end", encodeRun(t, dev15, exe, in(36, 4, true), []gpu.Data{out}), "ends at byte 40 of a 36-byte buffer")
	wantErr(t, "misaligned", encodeRun(t, dev15, exe, in(64, 2, true), []gpu.Data{out}), "not a multiple of the float32 element size")
	wantErr(t, "negative offset", encodeRun(t, dev15, exe, in(64, -4, true), []gpu.Data{out}), "negative offset")

	ok := in(36, 0, false)[0]
	bad := ok
	bad.Shape = []int{9}
	wantErr(t, "shape", encodeRun(t, dev15, exe, []gpu.Data{bad}, []gpu.Data{out}), "input 0: data of float32[9] for the tensor float32[3 3]")
	bad = ok
	bad.DType = gpu.Int32
	wantErr(t, "type", encodeRun(t, dev15, exe, []gpu.Data{bad}, []gpu.Data{out}), "data of int32[3 3]")
	wantErr(t, "counts", encodeRun(t, dev15, exe, nil, []gpu.Data{out}), "0 inputs and 1 outputs for an executable of 1 feeds and 1 targets")
	bad = ok
	bad.Buffer = nil
	wantErr(t, "no buffer", encodeRun(t, dev15, exe, []gpu.Data{bad}, []gpu.Data{out}), "no buffer")
	bad.Buffer = scratch(t, New(Options{}), 36)
	wantErr(t, "another device", encodeRun(t, dev15, exe, []gpu.Data{bad}, []gpu.Data{out}), "a buffer of another device")
	bad.Buffer = scratch(t, dev15, 36)
	bad.Buffer.Release()
	wantErr(t, "released buffer", encodeRun(t, dev15, exe, []gpu.Data{bad}, []gpu.Data{out}), "a released buffer")
	exe.Release()
	wantErr(t, "released executable", encodeRun(t, dev15, exe, []gpu.Data{ok}, []gpu.Data{out}), "the executable was released")
}

// Command buffers run in commit order, each done exactly once, and encoding
// only records: buffers are read when the queue reaches the work.
func TestCommitOrder(t *testing.T) {
	q, err := dev15.NewQueue()
	fatalIf(t, err)
	defer q.Release()
	dst := scratch(t, dev15, 4)
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	const n = 50
	for k := range n {
		src := scratch(t, dev15, 4)
		copy(src.Bytes(), le(uint32(k)))
		cb, err := q.NewCommandBuffer()
		fatalIf(t, err)
		fatalIf(t, cb.Copy(src, 0, dst, 0, 4))
		wg.Add(1)
		cb.Commit(func(err error) {
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			order = append(order, k)
			mu.Unlock()
			wg.Done()
		})
	}
	wg.Wait()
	want := make([]int, n)
	for k := range want {
		want[k] = k
	}
	if !slices.Equal(order, want) {
		t.Errorf("completion order %v", order)
	}
	check(t, "the last copy's value", dst.Bytes(), uint32(n-1))

	// The first buffer runs exe on in before the second copies over in;
	// both were encoded before either ran, and in was changed by the CPU
	// after the encode.
	exe := identityExe(t, dev15, []int{2}, gpu.Int32)
	in, out, other := scratch(t, dev15, 8), scratch(t, dev15, 8), scratch(t, dev15, 8)
	copy(other.Bytes(), le[int32](7, 8))
	first, _ := q.NewCommandBuffer()
	second, _ := q.NewCommandBuffer()
	fatalIf(t, first.Encode(exe, []gpu.Data{{Buffer: in, Shape: []int{2}, DType: gpu.Int32}}, []gpu.Data{{Buffer: out, Shape: []int{2}, DType: gpu.Int32}}))
	fatalIf(t, second.Copy(other, 0, in, 0, 8))
	copy(in.Bytes(), le[int32](1, 2))
	errs := make(chan error, 2)
	first.Commit(func(err error) { errs <- err })
	second.Commit(func(err error) { errs <- err })
	fatalIf(t, <-errs)
	fatalIf(t, <-errs)
	check(t, "run before the copy", out.Bytes(), int32(1), 2)
	check(t, "the copy", in.Bytes(), int32(7), 8)

	// Within one buffer, work runs in encode order: copy, then run.
	cb, _ := q.NewCommandBuffer()
	copy(other.Bytes(), le[int32](3, 4))
	fatalIf(t, cb.Copy(other, 0, in, 0, 8))
	fatalIf(t, cb.Encode(exe, []gpu.Data{{Buffer: in, Shape: []int{2}, DType: gpu.Int32}}, []gpu.Data{{Buffer: out, Shape: []int{2}, DType: gpu.Int32}}))
	fatalIf(t, commitWait(t, cb))
	check(t, "copy then run", out.Bytes(), int32(3), 4)
}

func TestCommandBufferErrors(t *testing.T) {
	q, err := dev15.NewQueue()
	fatalIf(t, err)
	defer q.Release()
	a, b := scratch(t, dev15, 16), scratch(t, dev15, 16)

	cb, _ := q.NewCommandBuffer()
	wantErr(t, "misaligned copy", cb.Copy(a, 2, b, 0, 4), "multiples of 4")
	wantErr(t, "odd size", cb.Copy(a, 0, b, 0, 6), "multiples of 4")
	wantErr(t, "copy past the end", cb.Copy(a, 8, b, 0, 12), "out of bounds")
	wantErr(t, "overlap", cb.Copy(a, 0, a, 4, 8), "overlapping")
	fatalIf(t, cb.Copy(a, 0, a, 8, 8)) // one buffer, apart: fine
	calls := make(chan error, 2)
	cb.Commit(func(err error) { calls <- err })
	fatalIf(t, <-calls)
	cb.Commit(func(err error) { calls <- err })
	wantErr(t, "second commit", <-calls, "already committed")
	wantErr(t, "copy after commit", cb.Copy(a, 0, b, 0, 4), "already committed")
	exe := identityExe(t, dev15, []int{1}, gpu.Int32)
	d := []gpu.Data{{Buffer: a, Shape: []int{1}, DType: gpu.Int32}}
	wantErr(t, "encode after commit", cb.Encode(exe, d, d), "already committed")

	// A run that fails skips the rest of its buffer; the queue goes on.
	g := graphOn(dev15)
	bad, err := g.Compile(nil, []gpu.Tensor{g.Gather(i32(g, []int{2}, 1, 2), i32(g, []int{1}, 9), 0)})
	fatalIf(t, err)
	copy(a.Bytes(), le[int32](42))
	cb, _ = q.NewCommandBuffer()
	fatalIf(t, cb.Encode(bad, nil, []gpu.Data{{Buffer: b, Shape: []int{1}, DType: gpu.Int32}}))
	fatalIf(t, cb.Copy(a, 0, b, 4, 4))
	wantErr(t, "failing run", commitWait(t, cb), "MPSGraph model: gather: index 9 out of range [0, 2)")
	check(t, "the skipped copy", b.Bytes()[4:8], int32(0))
	cb, _ = q.NewCommandBuffer()
	fatalIf(t, cb.Copy(a, 0, b, 4, 4))
	fatalIf(t, commitWait(t, cb))
	check(t, "the next buffer", b.Bytes()[4:8], int32(42))
}

// A node gpu.Graph did not check makes the model panic inside; the panic
// becomes the run's error naming the primitive, and the process goes on.
func TestPanicBecomesError(t *testing.T) {
	b := dev15.NewGraph()
	c := gpu.Tensor{Shape: []int{2}, DType: gpu.Int32, ID: 1}
	b.Add(&gpu.Node{Op: gpu.OpConstant, Shape: []int{2}, Data: le[int32](0, 1), Out: c})
	bad := gpu.Tensor{Shape: []int{2}, DType: gpu.Int32, ID: 2}
	b.Add(&gpu.Node{Op: gpu.OpGather, Args: []gpu.Tensor{c, c}, Axis: 5, Out: bad})
	odd := gpu.Tensor{Shape: []int{2}, DType: gpu.Int32, ID: 3}
	b.Add(&gpu.Node{Op: gpu.Op(250), Args: []gpu.Tensor{c}, Out: odd})
	for _, tc := range []struct {
		target gpu.Tensor
		want   string
	}{{bad, "MPSGraph model: gather: gather(int32[2], int32[2]) -> int32[2]: runtime error"}, {odd, "MPSGraph model: Op(?): not modelled"}} {
		exe, err := b.Compile(nil, []gpu.Tensor{tc.target})
		fatalIf(t, err)
		out := scratch(t, dev15, 8)
		wantErr(t, "malformed node", encodeRun(t, dev15, exe, nil, []gpu.Data{{Buffer: out, Shape: []int{2}, DType: gpu.Int32}}), tc.want)
	}
}

func TestCompileChecks(t *testing.T) {
	g := graphOn(dev15)
	x := g.Placeholder([]int{2}, gpu.Float32)
	y := g.Placeholder([]int{2}, gpu.Float32)
	c := f32(g, []int{2}, 1, 2)
	sum := g.Addition(x, y)
	_, err := g.Compile([]gpu.Tensor{x, c}, []gpu.Tensor{sum})
	wantErr(t, "constant feed", err, "feed 1 is constant")
	_, err = g.Compile([]gpu.Tensor{x}, []gpu.Tensor{sum})
	wantErr(t, "unfed placeholder", err, "placeholder float32[2] (node 2) is needed but not fed")
	_, err = g.Compile([]gpu.Tensor{x, x, y}, []gpu.Tensor{sum})
	wantErr(t, "feed twice", err, "fed twice")
	h := graphOn(dev15)
	h.Placeholder([]int{3}, gpu.Int32)
	_, err = h.Compile(nil, []gpu.Tensor{sum})
	wantErr(t, "a tensor of another graph", err, "not a tensor of this graph")
	// An unused feed is fine; the executable outlives its graph.
	exe, err := g.Compile([]gpu.Tensor{x, y}, []gpu.Tensor{g.Negative(c)})
	fatalIf(t, err)
	g.Release()
	_, err = g.Compile([]gpu.Tensor{x, y}, []gpu.Tensor{sum})
	wantErr(t, "compile after release", err, "released")
	in := []gpu.Data{{Buffer: scratch(t, dev15, 8), Shape: []int{2}, DType: gpu.Float32}, {Buffer: scratch(t, dev15, 8), Shape: []int{2}, DType: gpu.Float32}}
	out := scratch(t, dev15, 8)
	fatalIf(t, encodeRun(t, dev15, exe, in, []gpu.Data{{Buffer: out, Shape: []int{2}, DType: gpu.Float32}}))
	checkF32(t, "after release", out.Bytes(), -1, -2)
}

func TestQueueRelease(t *testing.T) {
	q, err := dev15.NewQueue()
	fatalIf(t, err)
	a, b := scratch(t, dev15, 4), scratch(t, dev15, 4)
	copy(a.Bytes(), le[int32](9))
	late, _ := q.NewCommandBuffer()
	var wg sync.WaitGroup
	for range 5 {
		cb, _ := q.NewCommandBuffer()
		fatalIf(t, cb.Copy(a, 0, b, 0, 4))
		wg.Add(1)
		cb.Commit(func(err error) {
			if err != nil {
				t.Error(err)
			}
			wg.Done()
		})
	}
	q.Release() // the work already committed still runs
	wg.Wait()
	check(t, "pending work", b.Bytes(), int32(9))
	_, err = q.NewCommandBuffer()
	wantErr(t, "new buffer after release", err, "released")
	wantErr(t, "commit after release", commitWait(t, late), "the queue was released")
	q.Release()
}

// CommitAndWait returns once its buffer has run: at once on an idle queue,
// after the buffers committed before it otherwise; a buffer committed
// while it runs waits its turn; a failure is its error.
func TestCommitAndWait(t *testing.T) {
	q, err := dev15.NewQueue()
	fatalIf(t, err)
	defer q.Release()
	dst := scratch(t, dev15, 4)
	src := scratch(t, dev15, 4)
	copy(src.Bytes(), le(uint32(5)))
	cb, _ := q.NewCommandBuffer()
	fatalIf(t, cb.Copy(src, 0, dst, 0, 4))
	fatalIf(t, cb.CommitAndWait())
	check(t, "an idle queue's copy", dst.Bytes(), uint32(5))
	if err := cb.CommitAndWait(); err == nil || !strings.Contains(err.Error(), "already committed") {
		t.Errorf("a second commit = %v, want an error", err)
	}

	// Behind fifty queued copies, the waited one runs last.
	for k := range 50 {
		s := scratch(t, dev15, 4)
		copy(s.Bytes(), le(uint32(100+k)))
		c, _ := q.NewCommandBuffer()
		fatalIf(t, c.Copy(s, 0, dst, 0, 4))
		c.Commit(nil)
	}
	last := scratch(t, dev15, 4)
	copy(last.Bytes(), le(uint32(7)))
	cb, _ = q.NewCommandBuffer()
	fatalIf(t, cb.Copy(last, 0, dst, 0, 4))
	fatalIf(t, cb.CommitAndWait())
	check(t, "the waited copy behind fifty", dst.Bytes(), uint32(7))

	// A buffer of a released queue is refused, not run.
	cb, _ = q.NewCommandBuffer()
	fatalIf(t, cb.Copy(src, 0, dst, 0, 4))
	q.Release()
	if err := cb.CommitAndWait(); err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("a commit to a released queue = %v, want an error", err)
	}
}
