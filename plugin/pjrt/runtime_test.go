package pjrt

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/metalplug/metalplug/backend/driver/host"
	backing "github.com/metalplug/metalplug/plugin/device"
)

// The tests run on the host reference driver: the process's driver is
// chosen at the first client, from the C environment (os.Setenv reaches it
// in a cgo program).
func TestMain(m *testing.M) {
	os.Setenv("METALPLUG_HOST_DEVICE", "1")
	os.Exit(m.Run())
}

func testClient(t *testing.T) *hClient {
	t.Helper()
	h, err := hNewClient()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Destroy(); err != nil {
			t.Error(err)
		}
	})
	return h
}

// delayedClient is a client of its own host driver whose every stream
// operation waits delay first, so that work completes long after the call
// that enqueued it returned.
func delayedClient(t *testing.T, delay time.Duration) *hClient {
	t.Helper()
	c, err := newClientOn(host.New(host.Options{StreamDelay: delay}), deviceKind(backing.Host))
	if err != nil {
		t.Fatal(err)
	}
	h := wrapClient(c)
	t.Cleanup(func() { h.Destroy() })
	return h
}

func TestClientDescribesItself(t *testing.T) {
	h := testClient(t)
	name, version, err := h.Platform()
	if err != nil {
		t.Fatal(err)
	}
	if name != "metalplug" || !strings.Contains(version, "PJRT C API 0.114") || !strings.Contains(version, "host driver") {
		t.Errorf("platform %q, version %q", name, version)
	}
	kind, err := h.DeviceKind()
	if err != nil || kind != "host (reference driver)" {
		t.Errorf("device kind %q, %v", kind, err)
	}
}

func TestPluginAttributes(t *testing.T) {
	attrs, err := pluginAttributeList()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(attrs["stablehlo_current_version"], []int64{1, 22, 0}) || !slices.Equal(attrs["stablehlo_minimum_version"], []int64{0, 9, 0}) {
		t.Errorf("attributes %v", attrs)
	}
	if _, err := parseVersion("1.2"); err == nil {
		t.Error("a two-part version must be refused")
	}
}

// elementTypes are the types jax round-trips, with their widths.
var elementTypes = map[string]bufType{
	"f32": 11, "f16": 10, "bf16": 13, "f64": 12, "s8": 2, "s16": 3, "s32": 4, "s64": 5,
	"u8": 6, "u32": 8, "pred": 1, "c64": 14,
}

// TestRoundTrip puts random arrays of every type on the device under every
// host-buffer semantics and reads them back, dense.
func TestRoundTrip(t *testing.T) {
	h := testClient(t)
	r := rand.New(rand.NewPCG(3, 4))
	dims := []int64{3, 5}
	for name, typ := range elementTypes {
		elem, _ := typ.storable()
		for sem := 0; sem < 4; sem++ {
			data := make([]byte, 15*elem)
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			host := newHostArray(data)
			b, done, err := h.Put(host, 0, int(typ), dims, nil, sem)
			if err != nil {
				t.Fatalf("%s, semantics %d: %v", name, sem, err)
			}
			if err := done.Await(); err != nil {
				t.Fatal(err)
			}
			done.Destroy()
			host.Free() // the caller may now: the device has its own copy
			got, err := b.Get(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Errorf("%s, semantics %d: read back differs", name, sem)
			}
			gotDims, gotType, err := b.Dims()
			if err != nil || !slices.Equal(gotDims, dims) || bufType(gotType) != typ {
				t.Errorf("%s: dims %v type %v, %v", name, gotDims, gotType, err)
			}
			b.Destroy()
		}
	}
}

func f32s(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// TestStridedHostArrays: numpy views (transposed, every other element,
// flipped with negative strides, element [0,0] inside the array) arrive
// as the arrays they show.
func TestStridedHostArrays(t *testing.T) {
	h := testClient(t)
	// The base array: 3x4 float32, a[i][j] = 10i + j.
	var base []float32
	for i := range 3 {
		for j := range 4 {
			base = append(base, float32(10*i+j))
		}
	}
	host := newHostArray(f32s(base...))
	defer host.Free()
	for _, c := range []struct {
		name    string
		at      int // byte offset of element [0, 0]
		dims    []int64
		strides []int64
		want    []float32
	}{
		{"a.T", 0, []int64{4, 3}, []int64{4, 16}, []float32{0, 10, 20, 1, 11, 21, 2, 12, 22, 3, 13, 23}},
		{"a[:, ::2]", 0, []int64{3, 2}, []int64{16, 8}, []float32{0, 2, 10, 12, 20, 22}},
		{"a[::-1, ::-1]", 44, []int64{3, 4}, []int64{-16, -4}, []float32{23, 22, 21, 20, 13, 12, 11, 10, 3, 2, 1, 0}},
		{"a[::-1]", 32, []int64{3, 4}, []int64{-16, 4}, []float32{20, 21, 22, 23, 10, 11, 12, 13, 0, 1, 2, 3}},
		{"a[1]", 16, []int64{4}, []int64{4}, []float32{10, 11, 12, 13}},
	} {
		for _, sem := range []int{0, 1} {
			b, done, err := h.Put(host, c.at, 11, c.dims, c.strides, sem)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if ok, _ := done.Ready(); !ok {
				t.Errorf("%s: a strided array is staged during the call, so done must be ready at once", c.name)
			}
			done.Destroy()
			got, err := b.Get(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, f32s(c.want...)) {
				t.Errorf("%s (semantics %d): got %v", c.name, sem, got)
			}
			b.Destroy()
		}
	}
}

// TestToHostLayouts: ToHostBuffer honours a host layout given as strides.
func TestToHostLayouts(t *testing.T) {
	h := testClient(t)
	host := newHostArray(f32s(0, 1, 2, 10, 11, 12))
	defer host.Free()
	b, done, err := h.Put(host, 0, 11, []int64{2, 3}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	done.Await()
	done.Destroy()
	defer b.Destroy()
	got, err := b.Get([]int64{4, 8}) // column-major
	if err != nil {
		t.Fatal(err)
	}
	if want := f32s(0, 10, 1, 11, 2, 12); !bytes.Equal(got, want) {
		t.Errorf("column-major read: %v", got)
	}
}

func TestDeleteAndMemoryStats(t *testing.T) {
	h := testClient(t)
	before, _, _, err := h.MemoryStats()
	if err != nil {
		t.Fatal(err)
	}
	host := newHostArray(make([]byte, 4096))
	defer host.Free()
	b, done, err := h.Put(host, 0, 11, []int64{1024}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	done.Await()
	done.Destroy()
	inUse, peak, allocs, _ := h.MemoryStats()
	if inUse != before+4096 || peak < inUse || allocs < 1 {
		t.Errorf("after a 4 KiB buffer: in use %d (was %d), peak %d, %d allocations", inUse, before, peak, allocs)
	}
	if err := b.Delete(); err != nil {
		t.Fatal(err)
	}
	if del, _ := b.IsDeleted(); !del {
		t.Error("IsDeleted is false after Delete")
	}
	if _, err := b.Get(nil); err == nil || !strings.Contains(err.Error(), "has been deleted") {
		t.Errorf("reading a deleted buffer: %v", err)
	}
	ev, _ := b.ReadyEvent()
	if err := ev.Await(); err == nil {
		t.Error("a deleted buffer's ready event must carry an error")
	}
	ev.Destroy()
	if inUse, _, _, _ := h.MemoryStats(); inUse != before {
		t.Errorf("after Delete, %d bytes in use, want %d", inUse, before)
	}
	if err := b.Destroy(); err != nil {
		t.Fatal(err)
	}
}

// TestEventsFollowTheStream: on a stream whose every operation waits, a
// copy's events are pending when the call returns, OnReady runs once the
// stream reaches the copy (not before), and a read enqueued after the
// write sees the written data.
func TestEventsFollowTheStream(t *testing.T) {
	h := delayedClient(t, 50*time.Millisecond)
	host := newHostArray(f32s(1, 2, 3, 4))
	defer host.Free()
	b, done, err := h.Put(host, 0, 11, []int64{4}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Destroy()
	if ok, _ := done.Ready(); ok {
		t.Fatal("the copy's event is ready before the stream reached it")
	}
	if err := done.Status(); errorCode(err) != int(codeFailedPrecondition) {
		t.Errorf("PJRT_Event_Error before ready: %v", err)
	}
	const slot = 7
	if err := done.OnReady(slot); err != nil {
		t.Fatal(err)
	}
	if n, _ := fired(slot); n != 0 {
		t.Fatal("OnReady ran before the stream reached the copy")
	}
	got, err := b.Get(nil) // enqueued behind the copy
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, f32s(1, 2, 3, 4)) {
		t.Errorf("read back %v", got)
	}
	waitFired(t, slot, 1)
	if ok, _ := done.Ready(); !ok {
		t.Error("not ready after the read behind it finished")
	}
	done.Destroy()
	// OnReady on a ready event runs at once.
	ev, _ := b.ReadyEvent()
	ev.OnReady(slot + 1)
	if n, code := fired(slot + 1); n != 1 || code != 0 {
		t.Errorf("OnReady on a ready event: fired %d, code %d", n, code)
	}
	ev.Destroy()
}

func waitFired(t *testing.T, slot, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if got, _ := fired(slot); got >= n {
			return
		}
	}
	t.Fatalf("callback %d never ran", slot)
}

func TestCreatedEvents(t *testing.T) {
	ev, err := hNewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Destroy()
	const slot = 20
	ev.OnReady(slot)
	if ok, _ := ev.Ready(); ok {
		t.Fatal("a created event is ready before Set")
	}
	if err := ev.Set(int(codeResourceExhausted), "out of the caller's patience"); err != nil {
		t.Fatal(err)
	}
	if n, code := fired(slot); n != 1 || code != int(codeResourceExhausted) {
		t.Errorf("callback fired %d times with code %d", n, code)
	}
	err = ev.Await()
	if errorCode(err) != int(codeResourceExhausted) || !strings.Contains(err.Error(), "out of the caller's patience") {
		t.Errorf("Await: %v", err)
	}
	if err := ev.Set(0, ""); errorCode(err) != int(codeFailedPrecondition) {
		t.Errorf("setting twice: %v", err)
	}
}

func TestRefusals(t *testing.T) {
	h := testClient(t)
	host := newHostArray(make([]byte, 64))
	defer host.Free()
	for _, c := range []struct {
		name    string
		typ     bufType
		dims    []int64
		strides []int64
		sem     int
		want    string
		code    code
	}{
		{"1-bit", 30, []int64{4}, nil, 0, "s1 is not supported", codeUnimplemented},
		{"not a type", 99, []int64{4}, nil, 0, "not a PJRT_Buffer_Type", codeInvalidArgument},
		{"negative dim", 11, []int64{-2}, nil, 0, "negative", codeInvalidArgument},
		{"strides count", 11, []int64{2, 2}, []int64{4}, 0, "1 byte strides for 2 dimensions", codeInvalidArgument},
		{"semantics", 11, []int64{2}, nil, 9, "host_buffer_semantics 9", codeInvalidArgument},
	} {
		_, _, err := h.Put(host, 0, int(c.typ), c.dims, c.strides, c.sem)
		if errorCode(err) != int(c.code) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "PJRT_Client_BufferFromHostBuffer") {
			t.Errorf("%s: %v; want code %d and %q", c.name, err, c.code, c.want)
		}
	}
}

// TestErrorObjects: an error we return reads the same through PJRT_Api's
// error functions and through its own vtable (what jaxlib 0.12 uses), and
// lives until destroyed.
func TestErrorObjects(t *testing.T) {
	for _, c := range []struct {
		code code
		msg  string
	}{
		{codeInvalidArgument, "metalplug: PJRT_X: something was wrong"},
		{codeUnimplemented, ""},
		{codeInternal, strings.Repeat("long ", 1000)},
	} {
		if failed := errorPaths(c.code, c.msg); failed != 0 {
			t.Errorf("code %d, message of %d bytes: check %d of the harness's mp_harness_error_paths failed", c.code, len(c.msg), failed)
		}
	}
}

// TestMemoryUserData: the memory vtable keeps the caller's data by key,
// destroys replaced data at once and the rest with the memory (freed when
// its client is destroyed).
func TestMemoryUserData(t *testing.T) {
	before, after, err := userDataDtors()
	if err != nil {
		t.Fatal(err)
	}
	if before != 1 || after != 3 {
		t.Errorf("destructors: %d on replacing, %d after freeing; want 1 and 3 (-1: a lookup failed)", before, after)
	}
}

// TestNoDeviceWhenDisabled: METALPLUG_DISABLE=1 offers no device, and the
// error says so.
func TestNoDeviceWhenDisabled(t *testing.T) {
	t.Setenv("METALPLUG_HOST_DEVICE", "1")
	t.Setenv("METALPLUG_DISABLE", "1")
	if _, err := hNewClient(); errorCode(err) != int(codeFailedPrecondition) || !strings.Contains(err.Error(), "METALPLUG_DISABLE=1") {
		t.Errorf("disabled: %v", err)
	}
}

// TestAllocationWaitsForPendingFrees: on a small device whose stream lags,
// memory a deleted buffer held is freed only once the stream passes the
// work that used it; an allocation that needs that memory waits for the
// free instead of failing.
func TestAllocationWaitsForPendingFrees(t *testing.T) {
	c, err := newClientOn(host.New(host.Options{MemoryBytes: 64 << 10, StreamDelay: 20 * time.Millisecond}), deviceKind(backing.Host))
	if err != nil {
		t.Fatal(err)
	}
	h := wrapClient(c)
	t.Cleanup(func() { h.Destroy() })
	data := newHostArray(make([]byte, 48<<10))
	defer data.Free()
	first, _, err := h.Put(data, 0, 11, []int64{12 << 10}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Delete(); err != nil { // its free waits for its copy
		t.Fatal(err)
	}
	second, done, err := h.Put(data, 0, 11, []int64{12 << 10}, nil, 1)
	if err != nil {
		t.Fatalf("a buffer the deleted one's memory makes room for: %v", err)
	}
	done.Await()
	done.Destroy()
	second.Destroy()
	first.Destroy()
}
