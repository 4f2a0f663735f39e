package tf

import (
	"unsafe"
)

// The tests get what they need of C from internal/tfharness (a test file
// cannot use cgo), as unsafe.Pointer values.

// paramsOf converts p, registration tables the harness made, to the type
// of init's first parameter: a test file cannot name cgo's types, but type
// inference can read one off the init function it is for.
func paramsOf[P any](p unsafe.Pointer, init func(*P, statusT)) *P { return (*P)(p) }
