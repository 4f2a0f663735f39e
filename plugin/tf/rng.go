package tf

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"unsafe"

	"github.com/metalplug/metalplug/backend/ir"
)

// rngState is the Philox key and counter of one stateful random kernel
// (RandomUniform and kin). Like TensorFlow's own kernels, a kernel seeded
// with seed=seed2=0 draws a fresh random seed, and each call advances the
// counter past the numbers the previous calls drew.
type rngState struct {
	once    sync.Once
	mu      sync.Mutex
	key     uint64
	counter [2]uint64
}

// nextRngState returns a fresh 24-byte device allocation holding the key
// (int64[1]) then the counter (int64[2]) for one call, and advances the
// counter. The caller frees it once the program that reads it has run.
func (inst *instance) nextRngState(outs []ir.TensorType) (unsafe.Pointer, error) {
	r := &inst.rng
	r.once.Do(func() {
		seed, seed2 := inst.attrs.Ints["seed"], inst.attrs.Ints["seed2"]
		if len(seed) == 1 && len(seed2) == 1 && (seed[0] != 0 || seed2[0] != 0) {
			r.key, r.counter[1] = uint64(seed[0]), uint64(seed2[0])
			return
		}
		var b [16]byte
		rand.Read(b[:])
		r.key, r.counter[1] = binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])
	})
	n := 0
	for _, t := range outs {
		n += t.Shape.Size()
	}
	r.mu.Lock()
	key, ctr := r.key, r.counter
	// One Philox block yields four 32-bit words; rejection sampling (the
	// truncated normal) may use a few blocks per number. Four blocks per
	// element and a margin keep successive calls from ever overlapping.
	r.counter[0] += uint64(4*n + 16)
	if r.counter[0] < ctr[0] {
		r.counter[1]++
	}
	r.mu.Unlock()
	p, err := state.drv.Allocate(24)
	if err != nil {
		return nil, err
	}
	b := unsafe.Slice((*byte)(p), 24)
	binary.LittleEndian.PutUint64(b[0:], key)
	binary.LittleEndian.PutUint64(b[8:], ctr[0])
	binary.LittleEndian.PutUint64(b[16:], ctr[1])
	return p, nil
}
