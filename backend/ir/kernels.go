package ir

// Kernels maps ops to what one package runs for them: the reference
// interpreter's semantics, a driver's kernels or lowerings. Each fills its
// own from the init functions of the files that define an op family.
type Kernels[K any] map[Op]K

// Register adds k for ops. An op registered twice is a bug of owner's,
// found when the program starts.
func (m Kernels[K]) Register(owner string, k K, ops ...Op) {
	for _, op := range ops {
		if _, dup := m[op]; dup {
			panic(owner + ": " + op.String() + " registered twice")
		}
		m[op] = k
	}
}
