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
	"sort"
	"strings"
)

// sdistSkip are top-level paths that never go into an sdist: build output,
// caches, CI and version control.
var sdistSkip = map[string]bool{"build": true, "dist": true, "vendor": true, ".git": true, ".ci": true, "ci": true, "docs": true}

// sourceFiles lists what goes into the sdist, relative to root with forward
// slashes. In a git work tree that is what git sees (tracked files still on
// disk and untracked ones it does not ignore), so build output, test
// binaries and other ignored files never slip in and make the sdist depend
// on what happened to be lying around; elsewhere (an unpacked sdist) every
// file. Either way the sdistSkip directories, dot directories, tests and
// caches stay out.
func sourceFiles(root string) ([]string, error) {
	names, err := visibleFiles(root)
	if err != nil {
		return nil, err
	}
	var keep []string
	for _, rel := range names {
		if skipInSdist(rel) {
			continue
		}
		keep = append(keep, rel)
	}
	sort.Strings(keep)
	return keep, nil
}

// visibleFiles lists every regular file of the tree: git's view in a git
// work tree, all files elsewhere.
func visibleFiles(root string) ([]string, error) {
	var names []string
	if isGitTree(root) {
		cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git ls-files in %s: %w", root, err)
		}
		for _, rel := range strings.Split(string(out), "\x00") {
			if rel == "" {
				continue
			}
			if st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); err != nil || !st.Mode().IsRegular() {
				continue // deleted in the work tree, or a symlink or submodule
			}
			names = append(names, rel)
		}
		return names, nil
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	return names, err
}

// skipInSdist says whether a file stays out of the sdist.
func skipInSdist(rel string) bool {
	parts := strings.Split(rel, "/")
	if sdistSkip[parts[0]] || parts[0] == "tests" {
		return true
	}
	for _, dir := range parts[:len(parts)-1] {
		if strings.HasPrefix(dir, ".") || dir == "__pycache__" {
			return true
		}
	}
	base := parts[len(parts)-1]
	return strings.HasSuffix(base, "_test.go") || strings.HasSuffix(base, ".test") || strings.HasSuffix(base, ".pyc") ||
		base == "PKG-INFO" // written below
}

// isGitTree reports whether root is the top of a git work tree.
func isGitTree(root string) bool {
	cmd := exec.Command("git", "rev-parse", "--show-toplevel")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return false
	}
	top, err1 := filepath.EvalSymlinks(strings.TrimSpace(string(out)))
	abs, err2 := filepath.Abs(root)
	if err1 != nil || err2 != nil {
		return false
	}
	abs, _ = filepath.EvalSymlinks(abs)
	return top == abs
}

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
	names, err := sourceFiles(root)
	if err != nil {
		return "", err
	}
	for _, rel := range names {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return "", err
		}
		files[rel] = b
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
