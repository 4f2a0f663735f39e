package probe

import (
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ExportedSymbols lists the functions and data a shared library exports,
// from its dynamic symbol table (ELF) or its export table (Mach-O).
func ExportedSymbols(path string) ([]string, error) { return symbols(path, true) }

// UndefinedSymbols lists the symbols a shared library needs from others.
func UndefinedSymbols(path string) ([]string, error) { return symbols(path, false) }

func symbols(path string, defined bool) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var magic [4]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil {
		return nil, fmt.Errorf("%s: reading the header: %w", path, err)
	}
	switch {
	case string(magic[:]) == elf.ELFMAG:
		return elfSymbols(path, defined)
	case isMachO(magic):
		return machoSymbols(path, defined)
	}
	return nil, fmt.Errorf("%s is neither an ELF nor a Mach-O shared library", path)
}

func isMachO(m [4]byte) bool {
	le := uint32(m[0]) | uint32(m[1])<<8 | uint32(m[2])<<16 | uint32(m[3])<<24
	return le == macho.Magic64 || le == macho.Magic32 || le == macho.MagicFat
}

func elfSymbols(path string, defined bool) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, fmt.Errorf("%s: reading the dynamic symbol table: %w", path, err)
	}
	var out []string
	for _, s := range syms {
		bind := elf.ST_BIND(s.Info)
		if bind != elf.STB_GLOBAL && bind != elf.STB_WEAK {
			continue
		}
		if (s.Section != elf.SHN_UNDEF) == defined {
			out = append(out, s.Name)
		}
	}
	return out, nil
}

func machoSymbols(path string, defined bool) ([]string, error) {
	f, err := macho.Open(path)
	if err != nil {
		if ff, ferr := macho.OpenFat(path); ferr == nil {
			defer ff.Close()
			for _, a := range ff.Arches {
				if a.Cpu == macho.CpuArm64 {
					return machoFileSymbols(a.File, path, defined)
				}
			}
			return nil, fmt.Errorf("%s: a universal binary without an arm64 slice", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	return machoFileSymbols(f, path, defined)
}

func machoFileSymbols(f *macho.File, path string, defined bool) ([]string, error) {
	if f.Symtab == nil {
		return nil, fmt.Errorf("%s: no symbol table", path)
	}
	const nExt, nTypeMask, nUndf = 0x01, 0x0e, 0x0
	var out []string
	for _, s := range f.Symtab.Syms {
		if s.Type&nExt == 0 {
			continue
		}
		undefined := s.Type&nTypeMask == nUndf
		if undefined != defined {
			// Mach-O prefixes C names with an underscore.
			out = append(out, strings.TrimPrefix(s.Name, "_"))
		}
	}
	return out, nil
}

// cachedCAPIExports is the TF_ subset of ExportedSymbols(lib), cached in the
// user cache directory by path, size and modification time: libtensorflow_cc
// holds over 400,000 symbols and reading them takes most of a second, which a
// no-op build should not pay.
func cachedCAPIExports(lib string) ([]string, error) {
	st, err := os.Stat(lib)
	if err != nil {
		return nil, err
	}
	var cacheFile string
	if dir, err := os.UserCacheDir(); err == nil {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d", lib, st.Size(), st.ModTime().UnixNano())))
		cacheFile = filepath.Join(dir, "metalplug", "symbols", hex.EncodeToString(sum[:12])+".txt")
		if b, err := os.ReadFile(cacheFile); err == nil {
			return strings.Fields(string(b)), nil
		}
	}
	all, err := ExportedSymbols(lib)
	if err != nil {
		return nil, err
	}
	var tf []string
	for _, s := range all {
		if strings.HasPrefix(s, "TF_") {
			tf = append(tf, s)
		}
	}
	if cacheFile != "" {
		// A cache that cannot be written only costs time next run.
		if os.MkdirAll(filepath.Dir(cacheFile), 0o755) == nil {
			os.WriteFile(cacheFile, []byte(strings.Join(tf, "\n")), 0o644)
		}
	}
	return tf, nil
}
