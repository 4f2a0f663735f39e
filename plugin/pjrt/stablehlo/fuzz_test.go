package stablehlo

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/metalplug/metalplug/backend/driver/fuzzrun"
	"github.com/metalplug/metalplug/backend/driver/host"
	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/backend/status"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// fuzzFixtures are every committed portable artifact: this package's
// numerical fixtures and the reader's, whose ops the translation refuses
// in part (the StableHLO test suite's), which still make good starting
// points for the reader and for the errors.
func fuzzFixtures(f *testing.F) [][]byte {
	f.Helper()
	var out [][]byte
	for _, pattern := range []string{"testdata/*.mlir.bc", "../mlir/testdata/*.mlir.bc", "../mlir/testdata/stablehlo/*.mlir.bc"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, b)
		}
	}
	if len(out) < 100 {
		f.Fatalf("%d fixtures: the globs no longer find the committed artifacts", len(out))
	}
	return out
}

// FuzzStableHLOProgram feeds mutated artifacts through everything jax's
// programs go through before they run: the reader, main's signature, the
// translation, ir.Verify and the host driver. The engine mutates the
// bytes, and edits (fuzzedit_test.go) change the module as read. Errors are what bad input
// should get; a panic anywhere, or one recovered into an error at a
// boundary (the reader's offset -1, the translation's Internal), is a
// missing check, and so is a hang (fuzzrun bounds what a program may ask
// for, so that a long run is the driver's fault).
func FuzzStableHLOProgram(f *testing.F) {
	for i, b := range fuzzFixtures(f) {
		f.Add(b, []byte(nil))
		// A few edits of each, so that the engine starts from some.
		edits := make([]byte, 24)
		for j := range edits {
			edits[j] = byte(i*31 + j*j*7)
		}
		f.Add(b, edits)
	}
	d := host.New(host.Options{MemoryBytes: 1 << 30})
	f.Fuzz(func(t *testing.T, code, edits []byte) {
		stop := fuzzrun.Watchdog(fuzzrun.Default.Timeout, "reading and translating an artifact")
		defer stop()
		m, err := mlir.Read(bytes.Clone(code)) // edits change what may alias it
		if err != nil {
			var e *mlir.Error
			if !errors.As(err, &e) || e.Offset < 0 {
				t.Fatalf("mlir.Read: %v", err)
			}
			return
		}
		applyEdits(m, edits)
		sig, sigErr := MainSignature(m)
		p, err := Translate(m)
		stop()
		if err != nil {
			// Only errors marked Internal are the translation's own
			// failures (an unclassified one is the PJRT layer's to
			// classify, and the translation leaves unsupported ones so).
			var se *status.Error
			if errors.As(err, &se) && se.Code == status.Internal {
				t.Fatalf("Translate: %v", err)
			}
			return
		}
		if sigErr != nil {
			return // Read refuses it (Translate does not read what it refuses: arg_attrs, say)
		}
		if len(sig.Args) != len(p.Params) {
			t.Fatalf("the signature has %d arguments, the program %d parameters", len(sig.Args), len(p.Params))
		}
		for i, a := range sig.Args {
			if a.Type.DType != p.Params[i].DType || !a.Type.Shape.Equal(p.Params[i].Shape) {
				t.Fatalf("argument %d is %v in the signature, %v in the program", i, a.Type, p.Params[i])
			}
		}
		if len(p.Results) == 0 {
			return // parameters alone: nothing runs
		}
		if err := ir.Verify(p); err != nil {
			t.Fatalf("Translate returned a program that does not verify: %v\n%s", err, p)
		}
		// Small arguments of the signature's types: the bytes 0 and 1
		// make zeros and tiny numbers in every dtype, and in-range indices.
		_ = fuzzrun.Run(t, d, p, []byte{0, 1, 0, 0}, fuzzrun.Default)
	})
}
