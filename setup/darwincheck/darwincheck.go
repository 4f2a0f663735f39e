// Package darwincheck type-checks the repository's darwin-only packages (the
// Metal driver above all) on a machine that is not a Mac.
//
// Nothing here can compile those packages: they use cgo with Objective-C and
// Apple's frameworks, and there is no macOS SDK off a Mac. `go vet` and
// `go build` on Linux skip their files entirely, and `go list -compiled`
// cannot help either, because it runs cgo, which needs the SDK. What can be
// checked is the Go side: every file that a darwin/arm64 build with cgo
// enabled would compile, type-checked with go/types against the real source
// of everything it imports (the standard library from GOROOT and third-party
// modules such as darwinkit from the module cache, downloaded there first
// when no Linux build has fetched them), selected for
// darwin/arm64 by go/build. cgo's pseudo-package C is treated as opaque
// (types.Config.FakeImportC): its identifiers have no type, so the checker
// stays silent about expressions that involve them and checks everything else.
//
// The check is exact for our own packages (every package of the main module
// that the selected packages reach is checked in full, function bodies
// included) and declaration-only for dependencies: standard-library and
// third-party packages are checked with IgnoreFuncBodies, which is all that
// importing them needs and keeps a run to a few seconds. Errors inside
// dependencies are reported separately as tolerated (see Report.Tolerated);
// with darwinkit v0.5.0 there are none.
package darwincheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Target is the platform the check type-checks for.
const (
	TargetGOOS   = "darwin"
	TargetGOARCH = "arm64"
)

// Report is what a check found.
type Report struct {
	// Packages are the import paths that were selected and checked in
	// full, in order.
	Packages []string
	// Errors are type errors in the main module's packages, each prefixed
	// with file:line:col. Any entry means the darwin build is broken.
	Errors []error
	// Tolerated are errors inside standard-library or third-party packages,
	// which the check cannot fix and which do not stop our packages from
	// being checked. FakeImportC is the only expected source; there are none
	// with the module versions this repository pins.
	Tolerated []error
	// Loaded counts every package type-checked, dependencies included.
	Loaded int
	// Elapsed is the wall time of the check.
	Elapsed time.Duration
}

// Check type-checks, for darwin/arm64 with cgo, every package under root
// (the directory holding the main module's go.mod) that has files only a
// darwin build compiles, plus everything they import. Patterns narrow the
// selection: "./dir" names one package (checked even if it is not
// darwin-only) and "./dir/..." every darwin-only package below dir. It
// returns the type errors in our packages; err reports a check that could not
// run (an unresolvable import, an unreadable go.mod).
func Check(root string, patterns ...string) ([]error, error) {
	r, err := Run(root, patterns...)
	if err != nil {
		return nil, err
	}
	return r.Errors, nil
}

// Run is Check with the whole report.
func Run(root string, patterns ...string) (*Report, error) {
	start := time.Now()
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	mod, err := readModule(root)
	if err != nil {
		return nil, err
	}
	env, err := goEnv()
	if err != nil {
		return nil, err
	}
	c := &checker{
		root:      root,
		mod:       mod,
		goroot:    env.GOROOT,
		modDirs:   moduleDirs(root, mod, env.GOMODCACHE),
		ctxt:      targetContext(env.GOROOT, TargetGOOS, TargetGOARCH),
		host:      targetContext(env.GOROOT, "linux", "amd64"),
		fset:      depFset,
		pkgs:      map[string]*pkgEntry{},
		downloads: map[string]*fetched{},
		sem:       make(chan struct{}, runtime.GOMAXPROCS(0)),
	}
	dirs, err := c.selectDirs(patterns)
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("darwincheck: no darwin-only package under %s matches %q", root, patterns)
	}
	var roots []*pkgEntry
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		ip := path.Join(mod.path, filepath.ToSlash(rel))
		e := c.entry(ip, dir, true, false)
		e.tests = true
		roots = append(roots, e)
		// An external test package (package x_test) is a package of its
		// own that imports x.
		bp, err := c.ctxt.ImportDir(dir, 0)
		if err == nil && len(bp.XTestGoFiles) > 0 {
			roots = append(roots, c.entry(ip+"_test", dir, true, true))
		}
	}
	var wg sync.WaitGroup
	for _, e := range roots {
		wg.Add(1)
		go func() { defer wg.Done(); c.load(e) }()
	}
	wg.Wait()

	rep := &Report{Elapsed: time.Since(start)}
	for _, e := range roots {
		rep.Packages = append(rep.Packages, e.path)
	}
	var fatal []error
	c.mu.Lock()
	entries := make([]*pkgEntry, 0, len(c.pkgs))
	for _, e := range c.pkgs {
		entries = append(entries, e)
	}
	c.mu.Unlock()
	sort.Slice(entries, func(i, j int) bool { return entries[i].key < entries[j].key })
	for _, e := range entries {
		select {
		case <-e.done:
		default:
			continue // never reached: an import error stopped its importer first
		}
		rep.Loaded++
		if e.fatal != nil {
			fatal = append(fatal, e.fatal)
		}
		if e.ours {
			rep.Errors = append(rep.Errors, e.errs...)
		} else {
			rep.Tolerated = append(rep.Tolerated, e.errs...)
		}
	}
	if len(fatal) > 0 {
		return rep, errors.Join(fatal...)
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// targetContext is the go/build context of a cgo build for goos/goarch with
// this toolchain's release and experiment tags. The toolchain's own
// microarchitecture tag (amd64.v1 on this machine) is swapped for the
// target's baseline.
func targetContext(goroot, goos, goarch string) *build.Context {
	ctxt := build.Default
	ctxt.GOROOT = goroot
	ctxt.GOOS = goos
	ctxt.GOARCH = goarch
	ctxt.CgoEnabled = true
	ctxt.Dir = ""
	var tags []string
	for _, t := range build.Default.ToolTags {
		if !strings.HasPrefix(t, build.Default.GOARCH+".") {
			tags = append(tags, t)
		}
	}
	switch goarch {
	case "arm64":
		tags = append(tags, "arm64.v8.0")
	case "amd64":
		tags = append(tags, "amd64.v1")
	}
	ctxt.ToolTags = tags
	return &ctxt
}

// module is what the check needs from a go.mod.
type module struct {
	path     string
	requires map[string]string    // module path -> version
	replaces map[string]modTarget // module path (any version) -> target
}

type modTarget struct{ path, version string } // version "" means a directory

// readModule parses root/go.mod by hand: the require and replace directives
// are all the check needs, and golang.org/x/mod is not a dependency here.
func readModule(root string) (*module, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("darwincheck: %w", err)
	}
	m := &module{requires: map[string]string{}, replaces: map[string]modTarget{}}
	block := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if block != "" {
			if f[0] == ")" {
				block = ""
				continue
			}
			f = append([]string{block}, f...)
		} else if len(f) == 2 && f[1] == "(" {
			block = f[0]
			continue
		}
		switch f[0] {
		case "module":
			if len(f) >= 2 {
				m.path = unquote(f[1])
			}
		case "require":
			if len(f) >= 3 {
				m.requires[unquote(f[1])] = unquote(f[2])
			}
		case "replace":
			// replace old [v] => new [v]
			arrow := slices.Index(f, "=>")
			if arrow < 2 || arrow+1 >= len(f) {
				continue
			}
			t := modTarget{path: unquote(f[arrow+1])}
			if arrow+2 < len(f) {
				t.version = unquote(f[arrow+2])
			}
			m.replaces[unquote(f[1])] = t
		}
	}
	if m.path == "" {
		return nil, fmt.Errorf("darwincheck: %s/go.mod has no module line", root)
	}
	return m, nil
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

type goEnvVars struct{ GOROOT, GOMODCACHE string }

// goEnv asks the go command where the standard library and the module cache
// are, so that GOROOT, GOPATH and GOMODCACHE settings are honoured.
func goEnv() (goEnvVars, error) {
	var v goEnvVars
	out, err := exec.Command("go", "env", "-json", "GOROOT", "GOMODCACHE").Output()
	if err != nil {
		return v, fmt.Errorf("darwincheck: go env: %w", err)
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return v, fmt.Errorf("darwincheck: go env: %w", err)
	}
	if v.GOROOT == "" || v.GOMODCACHE == "" {
		return v, fmt.Errorf("darwincheck: go env reports GOROOT=%q GOMODCACHE=%q", v.GOROOT, v.GOMODCACHE)
	}
	return v, nil
}

// moduleDirs maps every module the main module requires (and the main
// module itself) to its directory: the module cache's path@version, with
// upper-case letters escaped as the cache does, or a replacement's.
func moduleDirs(root string, m *module, cache string) map[string]string {
	dirs := map[string]string{m.path: root}
	for p, v := range m.requires {
		t, ok := m.replaces[p]
		switch {
		case ok && t.version == "":
			d := t.path
			if !filepath.IsAbs(d) {
				d = filepath.Join(root, d)
			}
			dirs[p] = d
		case ok:
			dirs[p] = filepath.Join(cache, escapePath(t.path)+"@"+t.version)
		default:
			dirs[p] = filepath.Join(cache, escapePath(p)+"@"+v)
		}
	}
	return dirs
}

// escapePath is the module cache's case encoding: "A" becomes "!a".
func escapePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return filepath.FromSlash(b.String())
}

type checker struct {
	root    string
	mod     *module
	goroot  string
	modDirs map[string]string
	ctxt    *build.Context // the target: darwin/arm64, cgo
	host    *build.Context // what CI builds: linux/amd64, cgo
	fset    *token.FileSet // shared with the dependency cache, whose positions it holds
	sem     chan struct{}  // bounds CPU work (parsing, checking) to GOMAXPROCS

	mu        sync.Mutex
	pkgs      map[string]*pkgEntry // every package this check uses, ours and cached
	downloads map[string]*fetched  // module path -> its download, for modules not yet in the cache
}

// Dependencies (the standard library and modules outside the main module)
// are immutable for a given GOROOT and module cache, so a process that runs
// several checks (the tests do) loads each one once. The cache lives in
// memory only. Our own packages are loaded afresh by every check.
var (
	depFset  = token.NewFileSet()
	depMu    sync.Mutex
	depCache = map[string]*pkgEntry{} // keyed by directory
)

// pkgEntry is one package, loaded at most once; done closes when pkg (or
// fatal) is set.
type pkgEntry struct {
	key   string // path, plus " [xtest]" for an external test package
	path  string
	dir   string
	ours  bool // in the main module: checked in full, errors reported
	tests bool // a selected package: its _test.go files are checked too
	xtest bool
	once  sync.Once
	done  chan struct{}
	pkg   *types.Package
	errs  []error
	fatal error
}

func (c *checker) entry(importPath, dir string, ours, xtest bool) *pkgEntry {
	key := importPath
	if xtest {
		key += " [xtest]"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.pkgs[key]; ok {
		return e
	}
	var e *pkgEntry
	if !ours {
		depMu.Lock()
		e = depCache[dir]
		if e == nil {
			e = &pkgEntry{key: key, path: importPath, dir: dir, done: make(chan struct{})}
			depCache[dir] = e
		}
		depMu.Unlock()
	} else {
		e = &pkgEntry{key: key, path: importPath, dir: dir, ours: true, xtest: xtest, done: make(chan struct{})}
	}
	c.pkgs[key] = e
	return e
}

// selectDirs finds the directories to check.
func (c *checker) selectDirs(patterns []string) ([]string, error) {
	type pat struct {
		dir  string
		tree bool
	}
	var pats []pat
	for _, p := range patterns {
		tree := false
		if p == "..." || strings.HasSuffix(p, "/...") {
			tree = true
			p = strings.TrimSuffix(strings.TrimSuffix(p, "..."), "/")
		}
		d := filepath.Join(c.root, filepath.FromSlash(p))
		if _, err := os.Stat(d); err != nil {
			return nil, fmt.Errorf("darwincheck: pattern %q: %w", p, err)
		}
		pats = append(pats, pat{d, tree})
	}
	var out []string
	for _, p := range pats {
		if !p.tree {
			out = append(out, p.dir)
		}
	}
	var walkRoots []string
	if len(patterns) == 0 {
		walkRoots = []string{c.root}
	}
	for _, p := range pats {
		if p.tree {
			walkRoots = append(walkRoots, p.dir)
		}
	}
	for _, wr := range walkRoots {
		err := filepath.WalkDir(wr, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			name := d.Name()
			if p != wr && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			if p != c.root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			if c.darwinOnly(p) {
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// darwinOnly reports whether dir holds a Go file that a darwin/arm64 build
// compiles and a linux/amd64 build (what CI's go vet and go test see) does
// not: exactly the code nothing else type-checks.
func (c *checker) darwinOnly(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") {
			continue
		}
		onTarget, err1 := c.ctxt.MatchFile(dir, n)
		onHost, err2 := c.host.MatchFile(dir, n)
		if err1 == nil && err2 == nil && onTarget && !onHost {
			return true
		}
	}
	return false
}

// resolve maps an import path, as written in a file of package from (in
// directory fromDir), to the imported package's canonical path and
// directory. Standard-library packages see GOROOT/src/vendor.
func (c *checker) resolve(ip string, from *pkgEntry) (canon, dir string, ours bool, err error) {
	first, _, _ := strings.Cut(ip, "/")
	std := !strings.Contains(first, ".")
	fromStd := strings.HasPrefix(from.dir, filepath.Join(c.goroot, "src")+string(filepath.Separator))
	if fromStd && !std {
		d := filepath.Join(c.goroot, "src", "vendor", filepath.FromSlash(ip))
		if isDir(d) {
			return "vendor/" + ip, d, false, nil
		}
	}
	if std {
		d := filepath.Join(c.goroot, "src", filepath.FromSlash(ip))
		if isDir(d) {
			return ip, d, false, nil
		}
		return "", "", false, fmt.Errorf("standard-library package %q not found in %s", ip, c.goroot)
	}
	best := ""
	for mp := range c.modDirs {
		if (ip == mp || strings.HasPrefix(ip, mp+"/")) && len(mp) > len(best) {
			best = mp
		}
	}
	if best == "" {
		return "", "", false, fmt.Errorf("no required module provides package %q (add it to go.mod)", ip)
	}
	modDir := c.modDirs[best]
	if best != c.mod.path && !isDir(modDir) {
		// Nothing a Linux build compiles imports this module, so no go
		// build or go vet has fetched it: download it now, as the go
		// command would for a build that needed it.
		if modDir, err = c.download(best); err != nil {
			return "", "", false, err
		}
	}
	d := filepath.Join(modDir, filepath.FromSlash(strings.TrimPrefix(ip, best)))
	if !isDir(d) {
		return "", "", false, fmt.Errorf("package %q: module %s has no directory %s", ip, best, strings.TrimPrefix(ip, best+"/"))
	}
	return ip, d, best == c.mod.path, nil
}

// fetched is one module download, made at most once per check.
type fetched struct {
	once sync.Once
	dir  string
	err  error
}

// download fetches module mp at the version go.mod requires (verified
// against go.sum by the go command) into the module cache and returns its
// directory.
func (c *checker) download(mp string) (string, error) {
	c.mu.Lock()
	f := c.downloads[mp]
	if f == nil {
		f = &fetched{}
		c.downloads[mp] = f
	}
	c.mu.Unlock()
	f.once.Do(func() {
		target := mp + "@" + c.mod.requires[mp]
		if t, ok := c.mod.replaces[mp]; ok && t.version != "" {
			target = t.path + "@" + t.version
		}
		cmd := exec.Command("go", "mod", "download", "-json", target)
		cmd.Dir = c.root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var info struct{ Dir, Error string }
		if jerr := json.Unmarshal(out, &info); jerr == nil && info.Error != "" {
			f.err = fmt.Errorf("downloading module %s: %s", target, info.Error)
			return
		}
		if err != nil {
			f.err = fmt.Errorf("downloading module %s: go mod download: %v\n%s", target, err, stderr.String())
			return
		}
		if info.Dir == "" {
			f.err = fmt.Errorf("downloading module %s: go mod download reported no directory", target)
			return
		}
		f.dir = info.Dir
	})
	return f.dir, f.err
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func (c *checker) acquire() { c.sem <- struct{}{} }
func (c *checker) release() { <-c.sem }

// load parses and type-checks e after its imports, each loaded once and
// concurrently; only parsing and checking hold a CPU slot, never a wait.
func (c *checker) load(e *pkgEntry) {
	e.once.Do(func() {
		defer close(e.done)
		if err := c.loadOnce(e); err != nil {
			e.fatal = fmt.Errorf("darwincheck: %s: %w", e.path, err)
		}
	})
	<-e.done
}

func (c *checker) loadOnce(e *pkgEntry) error {
	if e.path == "unsafe" {
		e.pkg = types.Unsafe
		return nil
	}
	bp, err := c.ctxt.ImportDir(e.dir, 0)
	if err != nil {
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return fmt.Errorf("no Go files for %s/%s in %s", TargetGOOS, TargetGOARCH, e.dir)
		}
		return err
	}
	var names []string
	switch {
	case e.xtest:
		names = bp.XTestGoFiles
	case e.tests:
		names = slices.Concat(bp.GoFiles, bp.CgoFiles, bp.TestGoFiles)
	default:
		names = slices.Concat(bp.GoFiles, bp.CgoFiles)
	}
	c.acquire()
	files, perrs := c.parse(e.dir, names)
	c.release()
	if len(perrs) > 0 {
		e.errs = append(e.errs, perrs...)
		if len(files) == 0 {
			return nil
		}
	}
	// Resolve and load the imports first.
	imports := map[string]*pkgEntry{}
	for _, f := range files {
		for _, is := range f.Imports {
			ip, _ := strconv.Unquote(is.Path.Value)
			if ip == "C" || imports[ip] != nil {
				continue
			}
			if e.xtest && ip == strings.TrimSuffix(e.path, "_test") {
				imports[ip] = c.entry(ip, e.dir, e.ours, false)
				continue
			}
			canon, dir, ours, err := c.resolve(ip, e)
			if err != nil {
				return fmt.Errorf("%s: %w", c.fset.Position(is.Pos()), err)
			}
			imports[ip] = c.entry(canon, dir, ours, false)
		}
	}
	var wg sync.WaitGroup
	for _, dep := range imports {
		wg.Add(1)
		go func() { defer wg.Done(); c.load(dep) }()
	}
	wg.Wait()
	for ip, dep := range imports {
		if dep.pkg == nil {
			return fmt.Errorf("import %q could not be loaded", ip)
		}
	}
	conf := types.Config{
		Importer:         importerFunc(func(ip string) (*types.Package, error) { return lookupImport(imports, ip) }),
		FakeImportC:      true,
		IgnoreFuncBodies: !e.ours,
		Sizes:            types.SizesFor("gc", TargetGOARCH),
		Error:            func(err error) { e.errs = append(e.errs, err) },
	}
	if e.ours {
		e.errs = append(e.errs, undeclaredC(c.fset, files)...)
	}
	c.acquire()
	pkg, _ := conf.Check(e.path, c.fset, files, nil)
	c.release()
	e.pkg = pkg
	return nil
}

// ownCPrefix starts the names of the C functions our packages write in
// their cgo preambles.
const ownCPrefix = "metalplug"

// undeclaredC reports every C.metalplug… a file uses that its own cgo
// preamble does not declare (cgo compiles each file's preamble on its own,
// so a static function of another file's is not there). FakeImportC gives
// C's identifiers no type, so a misspelt, removed or misplaced helper would
// otherwise pass here and fail only in a build on a Mac.
func undeclaredC(fset *token.FileSet, files []*ast.File) []error {
	var errs []error
	for _, f := range files {
		text := preamble(f)
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "C" || !strings.HasPrefix(sel.Sel.Name, ownCPrefix) {
				return true
			}
			if !declaresC(text, sel.Sel.Name) {
				errs = append(errs, fmt.Errorf("%s: C.%s is not declared in this file's cgo preamble", fset.Position(sel.Pos()), sel.Sel.Name))
			}
			return true
		})
	}
	return errs
}

// preamble is the text of f's cgo preamble: the comment right before
// import "C", on the declaration or, in a group, on the spec.
func preamble(f *ast.File) string {
	var b strings.Builder
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		for _, spec := range g.Specs {
			if is := spec.(*ast.ImportSpec); is.Path.Value == `"C"` {
				for _, doc := range []*ast.CommentGroup{g.Doc, is.Doc} {
					if doc != nil {
						b.WriteString(doc.Text())
						b.WriteByte('\n')
					}
				}
			}
		}
	}
	return b.String()
}

// declaresC reports whether a preamble's text declares or defines the C
// function (or type, or macro) name: the name followed by "(", or as a
// typedef's or #define's name.
func declaresC(text, name string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		before := j == 0 || !isCIdent(text[j-1])
		rest := strings.TrimLeft(text[end:], " \t")
		if before && (end == len(text) || !isCIdent(text[end])) &&
			(strings.HasPrefix(rest, "(") || strings.HasPrefix(rest, ";") || strings.HasSuffix(strings.TrimRight(text[:j], " \t"), "#define")) {
			return true
		}
		i = end
	}
}

func isCIdent(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func (c *checker) parse(dir string, names []string) ([]*ast.File, []error) {
	var files []*ast.File
	var errs []error
	for _, n := range names {
		f, err := parser.ParseFile(c.fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			errs = append(errs, err)
		}
		if f != nil {
			files = append(files, f)
		}
	}
	return files, errs
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

func lookupImport(imports map[string]*pkgEntry, ip string) (*types.Package, error) {
	if ip == "unsafe" {
		return types.Unsafe, nil
	}
	if e, ok := imports[ip]; ok && e.pkg != nil {
		return e.pkg, nil
	}
	return nil, fmt.Errorf("package %q was not loaded", ip)
}
