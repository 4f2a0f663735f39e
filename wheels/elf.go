package wheels

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// TensorFlowLibrary is the shared object every plugin links and no wheel of
// ours carries: the tensorflow (or tensorflow-cpu) wheel installs it, and it
// is loaded before any plugin is.
const TensorFlowLibrary = "libtensorflow_framework.so.2"

// manylinuxLibraries are the libraries a manylinux wheel may link without
// carrying them (PEP 599/600: the system's glibc family), for the check
// below. auditwheel's own policy is the judge; this list only has to cover
// what a cgo shared object links.
var manylinuxLibraries = map[string]bool{
	"libc.so.6": true, "libm.so.6": true, "libdl.so.2": true, "libpthread.so.0": true,
	"librt.so.1": true, "libgcc_s.so.1": true, "libstdc++.so.6": true, "ld-linux-x86-64.so.2": true,
	"libresolv.so.2": true, "libutil.so.1": true, "ld-linux-aarch64.so.1": true,
}

// ELFNeeds is what a shared object needs from the system.
type ELFNeeds struct {
	// Needed are the DT_NEEDED libraries.
	Needed []string
	// GLIBC is the newest GLIBC_x.y symbol version required, as "2.34"; ""
	// when none is.
	GLIBC string
	// Runpath is DT_RUNPATH (or DT_RPATH).
	Runpath []string
}

// ReadELFNeeds reads the dynamic section and the version needs of lib.
func ReadELFNeeds(lib string) (*ELFNeeds, error) {
	f, err := elf.Open(lib)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n := &ELFNeeds{}
	if n.Needed, err = f.DynString(elf.DT_NEEDED); err != nil {
		return nil, fmt.Errorf("%s: %w", lib, err)
	}
	rp, _ := f.DynString(elf.DT_RUNPATH)
	if len(rp) == 0 {
		rp, _ = f.DynString(elf.DT_RPATH)
	}
	for _, s := range rp {
		n.Runpath = append(n.Runpath, strings.Split(s, ":")...)
	}
	needs, err := f.DynamicVersionNeeds()
	if err != nil && len(needs) == 0 {
		// An object with no .gnu.version_r has no versioned needs at all.
		if f.Section(".gnu.version_r") != nil {
			return nil, fmt.Errorf("%s: reading version needs: %w", lib, err)
		}
	}
	for _, need := range needs {
		for _, aux := range need.Needs {
			if v, ok := strings.CutPrefix(aux.Dep, "GLIBC_"); ok && glibcLess(n.GLIBC, v) {
				n.GLIBC = v
			}
		}
	}
	return n, nil
}

// glibcLess orders glibc versions ("" before any).
func glibcLess(a, b string) bool {
	pa, pb := glibcParts(a), glibcParts(b)
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func glibcParts(v string) []int {
	if v == "" {
		return nil
	}
	var out []int
	for _, p := range strings.Split(v, ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return []int{-1}
		}
		out = append(out, n)
	}
	return out
}

// ManylinuxTag is the manylinux platform tag for a glibc floor and a
// machine: manylinux_2_34_x86_64. glibc versions before 2.17 map to 2.17,
// the oldest manylinux pip still installs.
func ManylinuxTag(glibc, arch string) string {
	if glibcLess(glibc, "2.17") {
		glibc = "2.17"
	}
	p := glibcParts(glibc)
	return fmt.Sprintf("manylinux_%d_%d_%s", p[0], p[1], arch)
}

// CheckManylinux says whether a library may go into a manylinux wheel
// without the libraries it links: each is glibc's or TensorFlow's.
func (n *ELFNeeds) CheckManylinux() error {
	var bad []string
	for _, lib := range n.Needed {
		if !manylinuxLibraries[lib] && lib != TensorFlowLibrary {
			bad = append(bad, lib)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("the library links %s, which neither the system (manylinux) nor the tensorflow wheel provides", strings.Join(bad, ", "))
	}
	return nil
}

// PortableRunpath returns lib's bytes with every absolute entry dropped from
// its DT_RUNPATH, keeping the ones relative to $ORIGIN. The build adds the
// build machine's TensorFlow directory there so that a library it installs
// by hand finds TensorFlow anywhere; in a wheel that directory names a venv
// of the machine that built it, which is meaningless (or worse, somebody
// else's directory) on the user's machine, and it would make the wheel's
// bytes depend on where it was built. The string is shortened in place
// (NUL-padded), which leaves every offset in the file unchanged; it refuses
// when another dynamic string shares the bytes it would clear.
func PortableRunpath(lib string) ([]byte, error) {
	data, err := os.ReadFile(lib)
	if err != nil {
		return nil, err
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", lib, err)
	}
	defer f.Close()
	dyn := f.Section(".dynamic")
	dynstr := f.Section(".dynstr")
	if dyn == nil || dynstr == nil {
		return nil, fmt.Errorf("%s has no dynamic section", lib)
	}
	if f.Class != elf.ELFCLASS64 {
		return nil, fmt.Errorf("%s: only 64-bit ELF is handled", lib)
	}
	d, err := dyn.Data()
	if err != nil {
		return nil, err
	}
	// Every offset into .dynstr the dynamic section uses, and which of them
	// are run paths.
	var runpaths []uint64
	used := map[uint64]bool{}
	for i := 0; i+16 <= len(d); i += 16 {
		tag := elf.DynTag(f.ByteOrder.Uint64(d[i:]))
		val := f.ByteOrder.Uint64(d[i+8:])
		switch tag {
		case elf.DT_RUNPATH, elf.DT_RPATH:
			runpaths = append(runpaths, val)
		case elf.DT_NEEDED, elf.DT_SONAME:
			used[val] = true
		}
	}
	if len(runpaths) == 0 {
		return data, nil
	}
	// Symbol names and version names point into .dynstr too.
	if err := dynstrUsers(f, used); err != nil {
		return nil, fmt.Errorf("%s: %w", lib, err)
	}
	strs, err := dynstr.Data()
	if err != nil {
		return nil, err
	}
	for _, off := range runpaths {
		end := bytes.IndexByte(strs[off:], 0)
		if end < 0 {
			return nil, fmt.Errorf("%s: unterminated run path", lib)
		}
		old := string(strs[off : off+uint64(end)])
		var keep []string
		for _, e := range strings.Split(old, ":") {
			if strings.HasPrefix(e, "$ORIGIN") || strings.HasPrefix(e, "${ORIGIN}") {
				keep = append(keep, e)
			}
		}
		repl := strings.Join(keep, ":")
		if repl == old {
			continue
		}
		for u := range used {
			if u > off+uint64(len(repl)) && u < off+uint64(end) {
				return nil, fmt.Errorf("%s: the run path shares bytes with another dynamic string; cannot shorten it in place", lib)
			}
		}
		pos := dynstr.Offset + off
		copy(data[pos:], repl)
		for i := pos + uint64(len(repl)); i < pos+uint64(end); i++ {
			data[i] = 0
		}
	}
	return data, nil
}

// dynstrUsers adds to used the .dynstr offsets that dynamic symbols and
// symbol versions name.
func dynstrUsers(f *elf.File, used map[uint64]bool) error {
	bo := f.ByteOrder
	if s := f.Section(".dynsym"); s != nil {
		d, err := s.Data()
		if err != nil {
			return err
		}
		for i := 0; i+24 <= len(d); i += 24 { // Elf64_Sym
			used[uint64(bo.Uint32(d[i:]))] = true
		}
	}
	if s := f.Section(".gnu.version_r"); s != nil {
		d, err := s.Data()
		if err != nil {
			return err
		}
		for off, n := 0, 0; off+16 <= len(d) && n < 10000; n++ { // Elf64_Verneed
			used[uint64(bo.Uint32(d[off+4:]))] = true
			aux := off + int(bo.Uint32(d[off+8:]))
			for cnt := int(bo.Uint16(d[off+2:])); cnt > 0 && aux+16 <= len(d); cnt-- { // Elf64_Vernaux
				used[uint64(bo.Uint32(d[aux+8:]))] = true
				next := int(bo.Uint32(d[aux+12:]))
				if next == 0 {
					break
				}
				aux += next
			}
			next := int(bo.Uint32(d[off+12:]))
			if next == 0 {
				break
			}
			off += next
		}
	}
	if s := f.Section(".gnu.version_d"); s != nil {
		d, err := s.Data()
		if err != nil {
			return err
		}
		for off, n := 0, 0; off+20 <= len(d) && n < 10000; n++ { // Elf64_Verdef
			aux := off + int(bo.Uint32(d[off+12:]))
			for cnt := int(bo.Uint16(d[off+6:])); cnt > 0 && aux+8 <= len(d); cnt-- { // Elf64_Verdaux
				used[uint64(bo.Uint32(d[aux:]))] = true
				next := int(bo.Uint32(d[aux+4:]))
				if next == 0 {
					break
				}
				aux += next
			}
			next := int(bo.Uint32(d[off+16:]))
			if next == 0 {
				break
			}
			off += next
		}
	}
	return nil
}
