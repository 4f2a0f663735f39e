package model

import (
	"errors"
	"slices"
	"testing"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// TestGraphThatDoesNotFitFails: a run takes its intermediates from the
// working set, beside the buffers allocated, as MPSGraph's do; one that
// does not fit fails its command buffer with Metal's out-of-memory error
// (gpu.ErrOutOfMemory, saying what it needs and what is free) and writes
// nothing; with room it runs, and gives the memory back.
func TestGraphThatDoesNotFitFails(t *testing.T) {
	const n = 1 << 16 // float32: 256 KiB a tensor
	dev := New(Options{WorkingSet: 1 << 20})
	build := func() (*gpu.Graph, gpu.Tensor) {
		g := graphOn(dev)
		x := g.Fill(1, []int{n}, gpu.Float32) // x and y are live at once: 512 KiB
		y := g.Addition(x, x)
		return g, g.Multiplication(y, x)
	}
	// 600 KiB held, and the 256 KiB result: 168 KiB free.
	held, err := dev.NewScratch(600 << 10)
	fatalIf(t, err)
	g, z := build()
	_, err = tryRun(t, dev, g, z)
	if !errors.Is(err, gpu.ErrOutOfMemory) {
		t.Fatalf("a graph whose intermediates do not fit: %v, want gpu.ErrOutOfMemory", err)
	}
	wantErr(t, "out of memory", err, "Insufficient Memory")
	wantErr(t, "out of memory", err, "need 524288 bytes at once, with 172032 of the device's 1048576 bytes free")
	if got := dev.AllocatedBytes(); got != 600<<10 {
		t.Errorf("%d bytes allocated after the failed run, want the 600 KiB held", got)
	}
	held.Release()
	g, z = build()
	res := run(t, dev, g, z)
	if got := from[float32](res[0]); len(got) != n || got[n-1] != 2 {
		t.Errorf("(1+1)*1 = %v..., want 2", got[:2])
	}
	if got := dev.AllocatedBytes(); got != 0 {
		t.Errorf("%d bytes allocated after the runs, want 0", got)
	}
}

// TestDataBeyondMPSGraphLimits: tensor data of more than 16 dimensions, or
// of 2^31 elements or more at an offset, is refused at encode time, as the
// darwin adapter refuses it (MPSGraph would raise).
func TestDataBeyondMPSGraphLimits(t *testing.T) {
	d := New(Options{}).(*device)
	buf, err := d.NewScratch(4096)
	fatalIf(t, err)
	defer buf.Release()
	rank17 := slices.Repeat([]int{1}, 17)
	_, err = d.bind(slot{"encode: input", 0}, gpu.Data{Buffer: buf, Shape: rank17, DType: gpu.Float32}, gpu.Tensor{Shape: rank17, DType: gpu.Float32})
	wantErr(t, "rank 17", err, "17 dimensions: MPSGraph's tensor data take at most 16")
	big := []int{1 << 31}
	_, err = d.bind(slot{"encode: input", 0}, gpu.Data{Buffer: buf, Offset: 4, Shape: big, DType: gpu.UInt8}, gpu.Tensor{Shape: big, DType: gpu.UInt8})
	wantErr(t, "2^31 at an offset", err, "2147483648 elements at an offset")
}
