package mlir

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The golden tests compare Read's tree, op by op, with what jaxlib's own
// MLIR prints for the same bytes: op names in order, operands (by the value
// they refer to), result and operand types, every property and attribute
// by name and value, regions, blocks and their arguments, and locations.
// testdata/generate.py writes the fixtures; see testdata/README.md.

func readGz(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readFixture(t *testing.T, path string) *Module {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Read(data)
	if err != nil {
		t.Fatalf("Read(%s): %v", path, err)
	}
	return m
}

// comparison walks our tree and jaxlib's side by side.
type comparison struct {
	t        *testing.T
	tm       *tModule
	values   map[string]*Value // jaxlib's value names to ours
	deferred []struct {
		name string
		v    *Value
		path string
	}
	ops, attrs, errors int
}

func (c *comparison) errorf(path, format string, args ...any) {
	c.t.Helper()
	c.errors++
	if c.errors <= 20 {
		c.t.Errorf("%s: %s", path, fmt.Sprintf(format, args...))
	}
}

func sameValue(expected, ours string) bool {
	if expected == ours {
		return true
	}
	if strings.Contains(expected, "opaque") {
		return expected == normOurs(ours)
	}
	return false
}

func (c *comparison) op(path string, ours *Operation, exp *tOp) {
	c.t.Helper()
	c.ops++
	path = path + "/" + exp.name
	if ours.Name != exp.name {
		c.errorf(path, "op name: got %s, jaxlib has %s", ours.Name, exp.name)
		return
	}
	if len(ours.Results) != len(exp.outTypes) {
		c.errorf(path, "%d results, jaxlib has %d", len(ours.Results), len(exp.outTypes))
		return
	}
	for i, r := range ours.Results {
		if i < len(exp.defs) {
			c.values[exp.defs[i]] = r
		}
		if want := norm(exp.outTypes[i]); r.Type.String() != want {
			c.errorf(path, "result %d type: got %s, jaxlib has %s", i, r.Type, want)
		}
	}
	if len(ours.Operands) != len(exp.operands) {
		c.errorf(path, "%d operands, jaxlib has %d", len(ours.Operands), len(exp.operands))
		return
	}
	for i, v := range ours.Operands {
		c.deferred = append(c.deferred, struct {
			name string
			v    *Value
			path string
		}{exp.operands[i], v, fmt.Sprintf("%s operand %d", path, i)})
		if want := norm(exp.inTypes[i]); v.Type.String() != want {
			c.errorf(path, "operand %d type: got %s, jaxlib has %s", i, v.Type, want)
		}
	}
	if len(ours.Successors) != len(exp.successors) {
		c.errorf(path, "%d successors, jaxlib has %d", len(ours.Successors), len(exp.successors))
	}
	props, attrs := ours.Attrs[:ours.NumProperties], ours.Attrs[ours.NumProperties:]
	c.named(path+" properties", props, exp.props)
	c.named(path+" attributes", attrs, exp.attrs)
	if exp.loc != "" {
		want := "loc(" + c.tm.resolveLoc(exp.loc, 0) + ")"
		if got := ours.Loc.Attr.String(); got != want {
			c.errorf(path, "location: got %s, jaxlib has %s", got, want)
		}
	}
	if len(ours.Regions) != len(exp.regions) {
		c.errorf(path, "%d regions, jaxlib has %d", len(ours.Regions), len(exp.regions))
		return
	}
	for ri, r := range ours.Regions {
		er := exp.regions[ri]
		if len(r.Blocks) != len(er.blocks) {
			c.errorf(path, "region %d: %d blocks, jaxlib has %d", ri, len(r.Blocks), len(er.blocks))
			continue
		}
		for bi, b := range r.Blocks {
			eb := er.blocks[bi]
			if len(b.Args) != len(eb.args) {
				c.errorf(path, "region %d block %d: %d arguments, jaxlib has %d", ri, bi, len(b.Args), len(eb.args))
				continue
			}
			for ai, a := range b.Args {
				c.values[eb.args[ai].name] = a
				if want := norm(eb.args[ai].typ); a.Type.String() != want {
					c.errorf(path, "block argument %d type: got %s, jaxlib has %s", ai, a.Type, want)
				}
				if eb.args[ai].loc != "" {
					want := "loc(" + c.tm.resolveLoc(eb.args[ai].loc, 0) + ")"
					if got := a.Loc.Attr.String(); got != want {
						c.errorf(path, "block argument %d location: got %s, jaxlib has %s", ai, got, want)
					}
				}
			}
			if len(b.Ops) != len(eb.ops) {
				c.errorf(path, "region %d block %d: %d ops, jaxlib has %d", ri, bi, len(b.Ops), len(eb.ops))
				continue
			}
			for oi, o := range b.Ops {
				c.op(fmt.Sprintf("%s[%d.%d.%d]", path, ri, bi, oi), o, eb.ops[oi])
			}
		}
	}
}

func (c *comparison) named(path string, ours []NamedAttr, exp []tNamed) {
	c.t.Helper()
	var on, en []string
	for _, a := range ours {
		on = append(on, a.Name)
	}
	for _, a := range exp {
		en = append(en, a.name)
	}
	if strings.Join(on, ",") != strings.Join(en, ",") {
		c.errorf(path, "names: got [%s], jaxlib has [%s]", strings.Join(on, ", "), strings.Join(en, ", "))
		return
	}
	for i, a := range ours {
		c.attrs++
		want := norm(exp[i].value)
		if got := attrString(a.Value); !sameValue(want, got) {
			c.errorf(path, "%s: got %s, jaxlib has %s", a.Name, got, want)
		}
	}
}

func (c *comparison) finish() {
	c.t.Helper()
	for _, d := range c.deferred {
		v, ok := c.values[d.name]
		if !ok {
			c.errorf(d.path, "jaxlib's operand %s is not defined anywhere", d.name)
			continue
		}
		if v != d.v {
			c.errorf(d.path, "refers to a different value than jaxlib's %s", d.name)
		}
	}
	if c.errors > 20 {
		c.t.Errorf("... %d mismatches in all", c.errors)
	}
}

func compareWithText(t *testing.T, bcPath, textPath string) (ops, attrs int) {
	t.Helper()
	m := readFixture(t, bcPath)
	tm, err := parseText(readGz(t, textPath))
	if err != nil {
		t.Fatalf("parsing %s: %v", textPath, err)
	}
	c := &comparison{t: t, tm: tm, values: map[string]*Value{}}
	c.op("", m.Body, tm.top)
	c.finish()
	return c.ops, c.attrs
}

func TestGoldenJax(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.mlir.bc")
	if len(files) == 0 {
		t.Fatal("no fixtures in testdata (run testdata/generate.py)")
	}
	var ops, attrs int
	for _, f := range files {
		stem := strings.TrimSuffix(filepath.Base(f), ".mlir.bc")
		t.Run(stem, func(t *testing.T) {
			o, a := compareWithText(t, f, strings.TrimSuffix(f, ".mlir.bc")+".vhlo.txt.gz")
			ops += o
			attrs += a
		})
	}
	t.Logf("%d fixtures, %d ops and %d attributes agree with jaxlib", len(files), ops, attrs)
}

func TestGoldenStableHLO(t *testing.T) {
	files, _ := filepath.Glob("testdata/stablehlo/*.mlir.bc")
	if len(files) == 0 {
		t.Fatal("no golden files in testdata/stablehlo (run testdata/generate.py --stablehlo)")
	}
	var ops, attrs int
	for _, f := range files {
		stem := strings.TrimSuffix(f, ".mlir.bc")
		t.Run(filepath.Base(stem), func(t *testing.T) {
			o, a := compareWithText(t, f, stem+".vhlo.txt.gz")
			ops += o
			attrs += a
			checkSourceOps(t, readFixture(t, f), stem+".ops.txt")
		})
	}
	t.Logf("%d golden files, %d ops and %d attributes agree with jaxlib", len(files), ops, attrs)
}

var versionSuffix = regexp.MustCompile(`_v\d+$`)

// baseName maps an op name of a .mlir source (stablehlo.add, func.func) and
// a VHLO op name (vhlo.add_v1, vhlo.func_v1) to the same thing.
func baseName(name string) string {
	name = versionSuffix.ReplaceAllString(name, "")
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// checkSourceOps compares the ops of a golden file with the op names of the
// .mlir source it was made from. Terminators are left out: the pretty
// syntax of the source leaves many implicit.
func checkSourceOps(t *testing.T, m *Module, listPath string) {
	t.Helper()
	f, err := os.ReadFile(listPath)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	sc := bufio.NewScanner(bytes.NewReader(f))
	for sc.Scan() {
		if n := baseName(strings.TrimSpace(sc.Text())); n != "" && n != "return" {
			want = append(want, n)
		}
	}
	var got []string
	m.Walk(func(op *Operation) bool {
		if n := baseName(op.Name); op != m.Body && n != "return" {
			got = append(got, n)
		}
		return true
	})
	if len(got) != len(want) {
		t.Errorf("%d ops (without terminators), the source has %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("op %d is %s, the source has %s", i, got[i], want[i])
			break
		}
	}
}
