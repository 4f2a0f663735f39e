package wheels

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// sdistSkip are top-level paths that never go into an sdist: build output,
// caches, CI, the tools module and version control.
var sdistSkip = map[string]bool{"build": true, "dist": true, "vendor": true, ".git": true, ".ci": true, "ci": true, "docs": true, "tools": true}

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
		if strings.HasPrefix(dir, ".") || dir == "__pycache__" || dir == "testdata" { // testdata serves tests only
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

// Sdist writes dir/metalplug-<version>.tar.gz: what building and
// installing the library needs and nothing else (the Go packages the PEP
// 517 backend and the library import, for every platform the library
// builds on, with go.mod, go.sum, pyproject.toml and the build backend),
// plus `go mod vendor` output for those packages alone, so an install needs
// no module proxy and vendors none of the tooling (Mage; go-github, the
// plotting and workflow-lint modules are the tools module's, which stays
// out). It returns the file name.
func Sdist(root, dir, goCmd string) (string, error) {
	ver, err := ProjectVersion(root)
	if err != nil {
		return "", err
	}
	if goCmd == "" {
		goCmd = "go"
	}
	prefix := fmt.Sprintf("%s-%s", Name, ver)
	files := map[string][]byte{}
	names, err := sourceFiles(root)
	if err != nil {
		return "", err
	}
	needed, err := buildPackages(root, goCmd)
	if err != nil {
		return "", err
	}
	for _, rel := range slimmed(names, needed) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return "", err
		}
		files[rel] = b
	}
	// Vendor from a scratch copy of exactly those files, whose go.mod names
	// no tools (the go command vendors tools too): the tree itself stays
	// without vendor/, so developers keep using the module cache.
	scratch, err := os.MkdirTemp("", "metalplug-vendor-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(scratch)
	for rel, b := range files {
		p := filepath.Join(scratch, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return "", err
		}
	}
	if err := dropTools(scratch, goCmd); err != nil {
		return "", err
	}
	if files["go.mod"], err = os.ReadFile(filepath.Join(scratch, "go.mod")); err != nil {
		return "", err
	}
	cmd := exec.Command(goCmd, "mod", "vendor")
	cmd.Dir = scratch
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

// BuildEntryPoints are the packages an install from the sdist builds: the
// PEP 517 backend's command and the library.
var BuildEntryPoints = []string{"./cmd/pep517", "./plugin/libmetalplug"}

// buildPlatforms are the platforms whose imports the sdist must carry: the
// library's own and the Linux build the tests install.
var buildPlatforms = [][2]string{{"darwin", "arm64"}, {"linux", "amd64"}, {"linux", "arm64"}}

// buildPackages lists the directories (relative to root, forward slashes)
// of the main module's packages that BuildEntryPoints import on any build
// platform.
func buildPackages(root, goCmd string) (map[string]bool, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	dirs := map[string]bool{}
	for _, pl := range buildPlatforms {
		args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{end}}"}, BuildEntryPoints...)
		cmd := exec.Command(goCmd, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS="+pl[0], "GOARCH="+pl[1], "CGO_ENABLED=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("go list %s for %s/%s: %v\n%s", strings.Join(BuildEntryPoints, " "), pl[0], pl[1], err, stderr.String())
		}
		for _, d := range strings.Fields(string(out)) {
			if rel, err := filepath.Rel(abs, d); err == nil && !strings.HasPrefix(rel, "..") {
				dirs[filepath.ToSlash(rel)] = true
			}
		}
	}
	return dirs, nil
}

// slimmed keeps the files a build needs: every file outside Go package
// directories (pyproject.toml, the Python backend, the pin), and the
// directories of the needed packages with what lies below them. A Go package
// the build does not import, and whatever lies below it, stays out.
func slimmed(names []string, needed map[string]bool) []string {
	pkgDirs := map[string]bool{}
	for _, rel := range names {
		if strings.HasSuffix(rel, ".go") {
			pkgDirs[path.Dir(rel)] = true
		}
	}
	var keep []string
	for _, rel := range names {
		if owner := ownerPackage(path.Dir(rel), pkgDirs); owner == "" || needed[owner] {
			if !(path.Dir(rel) == "." && strings.HasSuffix(rel, ".go")) { // the magefile
				keep = append(keep, rel)
			}
		}
	}
	return keep
}

// ownerPackage is the nearest package directory at or above dir, below the
// root, or "".
func ownerPackage(dir string, pkgDirs map[string]bool) string {
	for ; dir != "." && dir != "/" && dir != ""; dir = path.Dir(dir) {
		if pkgDirs[dir] {
			return dir
		}
	}
	return ""
}

// dropTools removes the tool directives from dir/go.mod.
func dropTools(dir, goCmd string) error {
	cmd := exec.Command(goCmd, "mod", "edit", "-json")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go mod edit -json: %w", err)
	}
	var mod struct{ Tool []struct{ Path string } }
	if err := json.Unmarshal(out, &mod); err != nil {
		return fmt.Errorf("go mod edit -json: %w", err)
	}
	if len(mod.Tool) == 0 {
		return nil
	}
	args := []string{"mod", "edit"}
	for _, t := range mod.Tool {
		args = append(args, "-droptool="+t.Path)
	}
	cmd = exec.Command(goCmd, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go mod edit: %v\n%s", err, out)
	}
	return nil
}
