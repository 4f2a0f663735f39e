package model

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metalplug/metalplug/backend/driver/metal/gpu"
)

// Helpers of the tests: graphs are built through gpu.Graph, so the contract
// checks run, and run on a queue of the device as the driver would.

var (
	nan  = float32(math.NaN())
	inf  = float32(math.Inf(1))
	negz = float32(math.Copysign(0, -1))
)

func graphOn(dev gpu.Device) *gpu.Graph { return gpu.NewGraph(dev.NewGraph(), dev.MacOS()) }

// le is vals as little-endian bytes.
func le[T any](vals ...T) []byte {
	var b bytes.Buffer
	if err := binary.Write(&b, binary.LittleEndian, vals); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// from decodes little-endian bytes as a slice of T.
func from[T any](b []byte) []T {
	var zero T
	out := make([]T, len(b)/binary.Size(zero))
	if err := binary.Read(bytes.NewReader(b), binary.LittleEndian, out); err != nil {
		panic(err)
	}
	return out
}

// konst is a constant of the given type and shape holding vals.
func konst[T any](g *gpu.Graph, dt gpu.DataType, shape []int, vals ...T) gpu.Tensor {
	return g.Constant(le(vals...), shape, dt)
}

func f32(g *gpu.Graph, shape []int, v ...float32) gpu.Tensor {
	return konst(g, gpu.Float32, shape, v...)
}
func f16(g *gpu.Graph, shape []int, v ...uint16) gpu.Tensor {
	return konst(g, gpu.Float16, shape, v...)
}
func i32(g *gpu.Graph, shape []int, v ...int32) gpu.Tensor { return konst(g, gpu.Int32, shape, v...) }

func commitWait(t *testing.T, cb gpu.CommandBuffer) error {
	t.Helper()
	ch := make(chan error, 1)
	cb.Commit(func(err error) { ch <- err })
	select {
	case err := <-ch:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the command buffer never completed")
	}
	return nil
}

// tryRun computes targets of a graph without feeds into packed buffers and
// returns their bytes, or the run's error.
func tryRun(t *testing.T, dev gpu.Device, g *gpu.Graph, targets ...gpu.Tensor) ([][]byte, error) {
	t.Helper()
	if err := g.Err(); err != nil {
		t.Fatalf("graph: %v", err)
	}
	exe, err := g.Compile(nil, targets)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	defer exe.Release()
	q, err := dev.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Release()
	cb, err := q.NewCommandBuffer()
	if err != nil {
		t.Fatal(err)
	}
	outs := make([]gpu.Data, len(targets))
	for i, x := range targets {
		buf, err := dev.NewScratch(x.Size() * x.DType.Size())
		if err != nil {
			t.Fatal(err)
		}
		defer buf.Release()
		outs[i] = gpu.Data{Buffer: buf, Shape: x.Shape, DType: x.DType}
	}
	if err := cb.Encode(exe, nil, outs); err != nil {
		t.Fatalf("encode: %v", err)
	}
	if err := commitWait(t, cb); err != nil {
		return nil, err
	}
	res := make([][]byte, len(outs))
	for i, d := range outs {
		res[i] = slices.Clone(d.Buffer.Bytes())
	}
	return res, nil
}

func run(t *testing.T, dev gpu.Device, g *gpu.Graph, targets ...gpu.Tensor) [][]byte {
	t.Helper()
	res, err := tryRun(t, dev, g, targets...)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}

// runErr expects the run to fail with an error containing want.
func runErr(t *testing.T, dev gpu.Device, g *gpu.Graph, want string, targets ...gpu.Tensor) {
	t.Helper()
	_, err := tryRun(t, dev, g, targets...)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("run error %v, want one containing %q", err, want)
	}
}

func check[T comparable](t *testing.T, name string, got []byte, want ...T) {
	t.Helper()
	if g := from[T](got); !slices.Equal(g, want) {
		t.Errorf("%s = %v, want %v", name, g, want)
	}
}

// checkF32 compares float32 results bit for bit (so -0 is not +0), except
// that any NaN matches any NaN.
func checkF32(t *testing.T, name string, got []byte, want ...float32) {
	t.Helper()
	g := from[float32](got)
	ok := len(g) == len(want)
	for i := 0; ok && i < len(g); i++ {
		ok = math.Float32bits(g[i]) == math.Float32bits(want[i]) || (g[i] != g[i] && want[i] != want[i])
	}
	if !ok {
		t.Errorf("%s = %v, want %v", name, g, want)
	}
}

// checkF16 compares float16 results as bits.
func checkF16(t *testing.T, name string, got []byte, want ...uint16) {
	t.Helper()
	if g := from[uint16](got); !slices.Equal(g, want) {
		t.Errorf("%s = %#04x, want %#04x", name, g, want)
	}
}

func fatalIf(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: error %v, want one containing %q", what, err, want)
	}
}
