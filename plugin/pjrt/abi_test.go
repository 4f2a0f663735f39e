package pjrt

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// abiFacts are the numbers of testdata/pjrt_abi_0.114.txt, taken from
// XLA's header (not from ours: see the file's head).
type abiFacts struct {
	sizes   map[string]uintptr // struct -> STRUCT_SIZE
	fields  map[string]uintptr // "struct.field" -> offset
	slots   []string           // PJRT_Api's slots, in order
	offsets map[string]uintptr // slot -> offset
	apiSize uintptr
}

func readFacts(t *testing.T) abiFacts {
	t.Helper()
	f, err := os.Open("testdata/pjrt_abi_0.114.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	facts := abiFacts{sizes: map[string]uintptr{}, fields: map[string]uintptr{}, offsets: map[string]uintptr{}}
	num := func(s string) uintptr {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("testdata: %q is not a number", s)
		}
		return uintptr(n)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		if len(w) == 0 || strings.HasPrefix(w[0], "#") {
			continue
		}
		switch w[0] {
		case "struct":
			facts.sizes[w[1]] = num(w[2])
			for _, fo := range w[3:] {
				field, off, _ := strings.Cut(fo, ":")
				facts.fields[w[1]+"."+field] = num(off)
			}
		case "slot":
			facts.slots = append(facts.slots, w[1])
			facts.offsets[w[1]] = num(w[2])
		case "size":
			facts.apiSize = num(w[2])
		default:
			t.Fatalf("testdata: unknown line %q", sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return facts
}

// TestABIMatchesXLA holds abi.h to XLA's layout: every struct metalplug
// relies on has XLA's STRUCT_SIZE and every field XLA's offset, and every
// slot of PJRT_Api sits where XLA's does. An entry on one side only fails.
func TestABIMatchesXLA(t *testing.T) {
	facts := readFacts(t)
	if len(facts.slots) != 138 || facts.apiSize != 1144 {
		t.Fatalf("testdata lists %d slots and a PJRT_Api of %d bytes; 0.114 has 138 and 1144", len(facts.slots), facts.apiSize)
	}
	sizes, _ := layoutTable("sizes")
	for name, want := range facts.sizes {
		got, ok := sizes[name]
		switch {
		case !ok:
			t.Errorf("%s: abi.h does not declare it (or internal/pjrtharness/abi_layout.c does not list it)", name)
		case got != want:
			t.Errorf("%s: STRUCT_SIZE %d, XLA's is %d", name, got, want)
		}
	}
	if got := sizes["PJRT_Api"]; got != facts.apiSize {
		t.Errorf("PJRT_Api: STRUCT_SIZE %d, XLA's is %d", got, facts.apiSize)
	}
	for name := range sizes {
		if _, ok := facts.sizes[name]; !ok && name != "PJRT_Api" {
			t.Errorf("%s: listed in internal/pjrtharness/abi_layout.c but not in the testdata", name)
		}
	}

	fields, _ := layoutTable("fields")
	for name, want := range facts.fields {
		got, ok := fields[name]
		switch {
		case !ok:
			t.Errorf("%s: not listed by internal/pjrtharness/abi_layout.c", name)
		case got != want:
			t.Errorf("%s: at offset %d, XLA's is at %d", name, got, want)
		}
	}
	if len(fields) != len(facts.fields) {
		t.Errorf("internal/pjrtharness/abi_layout.c lists %d fields, the testdata %d", len(fields), len(facts.fields))
	}

	slots, order := layoutTable("slots")
	for i, name := range facts.slots {
		got, ok := slots[name]
		switch {
		case !ok:
			t.Errorf("slot %d %s: not in abi.h's PJRT_Api", i, name)
		case got != facts.offsets[name]:
			t.Errorf("slot %d %s: at offset %d, XLA's is at %d", i, name, got, facts.offsets[name])
		}
		if want := uintptr(40 + 8*i); facts.offsets[name] != want {
			t.Errorf("testdata: slot %d %s at %d, not 40 + 8×%d", i, name, facts.offsets[name], i)
		}
	}
	if len(order) != len(facts.slots) {
		t.Errorf("internal/pjrtharness/abi_layout.c lists %d slots, XLA's table has %d", len(order), len(facts.slots))
	}
}

// TestTableIsFull: GetPjrtApi's table reports 0.114 and its size, and no
// slot is NULL (a stub answers for what metalplug does not implement).
func TestTableIsFull(t *testing.T) {
	if GetPjrtApi() == nil {
		t.Fatal("GetPjrtApi returned NULL")
	}
	major, minor, size, null := apiSlots()
	if major != 0 || minor != 114 {
		t.Errorf("reports PJRT %d.%d, want 0.114", major, minor)
	}
	if size != 1144 {
		t.Errorf("struct_size %d, want 1144", size)
	}
	_, order := layoutTable("slots")
	slots, _ := layoutTable("slots")
	for _, off := range null {
		for _, name := range order {
			if slots[name] == off {
				t.Errorf("slot %s is NULL", name)
			}
		}
	}
}

// TestNoTopologies: jax's ahead-of-time compilation asks for a topology
// and, on a backend without one, expects an error saying "topology not
// implemented" (jax's tests/aot_test.py checks those words).
func TestNoTopologies(t *testing.T) {
	err := callTopologyCreate()
	if err == nil || errorCode(err) != int(codeUnimplemented) || !strings.Contains(err.Error(), "topology not implemented") {
		t.Errorf("PJRT_TopologyDescription_Create: %v; want UNIMPLEMENTED saying topology not implemented", err)
	}
}
