package wheels

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// sdistSkip are top-level paths that never go into an sdist: build output,
// caches, CI and version control.
var sdistSkip = map[string]bool{"build": true, "dist": true, "vendor": true, ".git": true, ".ci": true, "ci": true, "docs": true}

// Sdist writes dir/metalplug-<version>.tar.gz: the source tree (Go sources,
// go.mod, go.sum, pyproject.toml, the build backend) plus `go mod vendor`
// output, so an install needs no module proxy. It returns the file name.
func Sdist(root, dir, goCmd string) (string, error) {
	ver, err := ProjectVersion(root)
	if err != nil {
		return "", err
	}
	prefix := fmt.Sprintf("%s-%s", Name, ver)
	files := map[string][]byte{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (sdistSkip[rel] || strings.HasPrefix(d.Name(), ".") || d.Name() == "__pycache__") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, "_test.go") || strings.HasPrefix(rel, "tests/") {
			return nil // tests are not part of what an install builds
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[rel] = b
		return nil
	})
	if err != nil {
		return "", err
	}
	// Vendor into a scratch directory: the tree itself stays without vendor/,
	// so developers keep using the module cache.
	scratch, err := os.MkdirTemp("", "metalplug-vendor-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(scratch)
	if goCmd == "" {
		goCmd = "go"
	}
	cmd := exec.Command(goCmd, "mod", "vendor", "-o", filepath.Join(scratch, "vendor"))
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go mod vendor: %v\n%s", err, out)
	}
	err = filepath.WalkDir(filepath.Join(scratch, "vendor"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(scratch, p)
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		return "", err
	}
	files["PKG-INFO"] = []byte(strings.Join([]string{
		"Metadata-Version: 2.1",
		"Name: " + Name,
		"Version: " + ver,
		"Summary: A Metal GPU backend for TensorFlow, written in Go",
		"License: Apache-2.0",
		"Requires-Python: >=3.9",
		"", ""}, "\n"))

	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	gz.ModTime = Epoch()
	tw := tar.NewWriter(gz)
	for _, name := range sortedKeys(files) {
		data := files[name]
		h := &tar.Header{Name: prefix + "/" + name, Mode: 0o644, Size: int64(len(data)), ModTime: Epoch(),
			Typeflag: tar.TypeReg, Format: tar.FormatPAX, Uname: "root", Gname: "root"}
		if err := tw.WriteHeader(h); err != nil {
			return "", err
		}
		if _, err := tw.Write(data); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	if err := gz.Close(); err != nil {
		return "", err
	}
	name := prefix + ".tar.gz"
	return name, writeAtomic(filepath.Join(dir, name), buf.Bytes())
}
