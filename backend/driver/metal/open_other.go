//go:build !darwin

package metal

// Open finds no Metal device off macOS; OpenModel runs the same lowering
// against the model of MPSGraph.
func Open(opts Options) (*Driver, error) { return nil, ErrNoDevice }
