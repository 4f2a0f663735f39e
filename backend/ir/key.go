package ir

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Key is a program's identity: two programs with the same key compute the
// same thing from the same inputs. Every cache of programs or of what was
// compiled from them (the drivers', the frontends') is keyed by it.
type Key [sha256.Size]byte

// Key hashes the program's text and its declared parameters (a program may
// declare inputs it never reads, and those change what Execute takes).
func (p *Program) Key() Key {
	h := sha256.New()
	fmt.Fprintf(h, "params %v\n%s", p.Params, p.String())
	var k Key
	h.Sum(k[:0])
	return k
}

// String is the key in hex, for logs.
func (k Key) String() string { return hex.EncodeToString(k[:8]) }
