package mlir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fixtures(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, pattern := range []string{"testdata/*.mlir.bc", "testdata/stablehlo/*.mlir.bc"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		t.Fatal("no fixtures")
	}
	return out
}

// checkRead reads data and holds Read to its promise: a module, or an
// *Error with an offset inside the data. Read recovers panics into an
// error at offset -1; seeing one means a bounds check is missing.
func checkRead(t testing.TB, data []byte) (*Module, error) {
	t.Helper()
	m, err := Read(data)
	if err == nil {
		if m == nil || m.Body == nil {
			t.Fatal("Read returned neither a module nor an error")
		}
		// Touch what a translator touches.
		m.Walk(func(op *Operation) bool {
			_ = op.Loc.String()
			for _, a := range op.Attrs {
				if d, ok := a.Value.(*DenseAttr); ok {
					_, _ = d.Int64s()
					_, _ = d.Float64s()
				}
			}
			return true
		})
		return m, nil
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error is not an *Error: %v", err)
	}
	if e.Offset < 0 || e.Offset > len(data) {
		t.Fatalf("error offset %d outside the %d bytes of data: %v", e.Offset, len(data), err)
	}
	if !strings.Contains(err.Error(), "offset") {
		t.Fatalf("error does not name the offset: %v", err)
	}
	return nil, err
}

func FuzzRead(f *testing.F) {
	for _, b := range fixtures(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRead(t, data)
	})
}

// TestTruncated cuts every fixture at every offset and expects an error
// every time: every section has a length, so no proper prefix is a file.
func TestTruncated(t *testing.T) {
	total := 0
	for _, data := range fixtures(t) {
		for n := 0; n < len(data); n++ {
			total++
			if _, err := checkRead(t, data[:n]); err == nil {
				t.Fatalf("reading the first %d of %d bytes succeeded", n, len(data))
			}
		}
	}
	t.Logf("%d truncated inputs, all rejected", total)
}

// TestTruncatedSections cuts every section of a fixture short by one
// byte, keeping the file's own framing, so that the error comes from
// inside the section rather than from the section table.
func TestTruncatedSections(t *testing.T) {
	for _, data := range fixtures(t) {
		d := newDecoder(data, 0)
		d.pos = len(magic)
		if _, err := d.varint("version"); err != nil {
			t.Fatal(err)
		}
		if _, err := d.cstring("producer"); err != nil {
			t.Fatal(err)
		}
		for !d.empty() {
			hdr := d.pos
			s, err := d.section("section")
			if err != nil {
				t.Fatal(err)
			}
			if len(s.data) == 0 || (data[hdr]&0x80) != 0 {
				continue // empty, or aligned (its length varint may not shrink cleanly)
			}
			// Rewrite the section with one byte less.
			var out []byte
			out = append(out, data[:hdr]...)
			out = append(out, data[hdr])
			out = putVarint(out, uint64(len(s.data)-1))
			out = append(out, s.data[:len(s.data)-1]...)
			out = append(out, data[s.base+len(s.data):]...)
			checkRead(t, out)
		}
	}
}

// TestCorrupted flips bytes of every fixture: the read may succeed (a
// flipped bit of a float is still a float) but must not panic, and an
// error must name an offset in the data.
func TestCorrupted(t *testing.T) {
	failed, total := 0, 0
	for _, data := range fixtures(t) {
		// About 150 positions per file keeps this quick under -race.
		step := max(1, len(data)/150)
		bad := make([]byte, len(data))
		for i := 0; i < len(data); i += step {
			for _, flip := range []func(byte) byte{
				func(b byte) byte { return ^b },
				func(b byte) byte { return b + 1 },
				func(b byte) byte { return b ^ 0x80 },
			} {
				copy(bad, data)
				bad[i] = flip(bad[i])
				total++
				if _, err := checkRead(t, bad); err != nil {
					failed++
				}
			}
		}
	}
	t.Logf("%d corrupted inputs, %d rejected with an error", total, failed)
}
