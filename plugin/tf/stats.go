package tf

/*
#include <stdlib.h>
*/
import "C"

import (
	"encoding/json"
	"sync"
	"sync/atomic"
)

// opCounts counts kernel executions per op on the device, so tests (and
// users) can see what really ran here rather than fell back to the CPU.
var opCounts sync.Map // op name -> *atomic.Int64

// opCounter is op's execution counter; kernels look it up once, when
// TensorFlow constructs them, not on every run.
func opCounter(op string) *atomic.Int64 {
	c, ok := opCounts.Load(op)
	if !ok {
		c, _ = opCounts.LoadOrStore(op, new(atomic.Int64))
	}
	return c.(*atomic.Int64)
}

//export metalplug_op_counts
func metalplug_op_counts() *C.char {
	return exportValue("metalplug_op_counts", failure{}, nil, opCountsJSON)
}

func opCountsJSON() (*C.char, error) {
	m := map[string]int64{}
	opCounts.Range(func(k, v any) bool {
		m[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	b, _ := json.Marshal(m)
	return C.CString(string(b)), nil
}
