package docs

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEveryGPUOpIsAccounted holds the committed snapshot, our registry and
// the exclusion table together: every op with a GPU kernel has exactly one
// status, an excluded one a reason from the fixed list, and every entry of
// the table is what classifies its op.
func TestEveryGPUOpIsAccounted(t *testing.T) {
	reg, err := ReadRegistry(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Classify(reg, OurOps(), Exclusions)
	if err != nil {
		t.Fatal(err)
	}
	if reg.Distribution != "tensorflow" {
		t.Errorf("the snapshot is of %s; it must be of the full tensorflow wheel, the one with CUDA kernels", reg.Distribution)
	}
	gpu := reg.GPUOps()
	if len(c.Ops) != len(gpu) {
		t.Fatalf("%d ops classified, the snapshot has %d with GPU kernels", len(c.Ops), len(gpu))
	}
	sum := 0
	for _, s := range Statuses {
		sum += c.Count(s, "")
	}
	if sum != len(gpu) {
		t.Errorf("the statuses count %d ops, the snapshot has %d", sum, len(gpu))
	}
	ours := map[string]bool{}
	for _, o := range OurOps() {
		ours[o.Op] = true
	}
	for i, o := range c.Ops {
		if o.Op != gpu[i] {
			t.Fatalf("op %d is %s, want %s (every GPU op once, in order)", i, o.Op, gpu[i])
		}
		if !slices.Contains(Statuses, o.Status) {
			t.Errorf("%s: unaccounted (status %q)", o.Op, o.Status)
		}
		if (o.Status == Excluded) != (o.Reason != "") {
			t.Errorf("%s: status %s with reason %q", o.Op, o.Status, o.Reason)
		}
		if ours[o.Op] != (o.Status == Ours) {
			t.Errorf("%s: status %s, registered by the device: %v", o.Op, o.Status, ours[o.Op])
		}
		if r, listed := Exclusions[o.Op]; listed && (o.Status != Excluded || o.Reason != r) {
			t.Errorf("%s: excluded by the table as %s, classified %s %s", o.Op, r, o.Status, o.Reason)
		}
		switch o.Reason {
		case Removed:
			if !reg.Removed(o.Op) {
				t.Errorf("%s: excluded as removed, but its deprecation is %d and TensorFlow builds GraphDef %d", o.Op, reg.Ops[o.Op].Deprecated, reg.GraphDefVersion)
			}
		case RefVariable:
			if !reg.Ops[o.Op].Ref {
				t.Errorf("%s: excluded as a reference-variable op, but it has no reference argument", o.Op)
			}
		}
	}
	// A few ops whose status is known: a guard against a rule that
	// classifies everything one way.
	for op, want := range map[string]Status{"MatMul": Ours, "Identity": Ours, "Switch": Inherited, "TensorListGetItem": Inherited,
		"Lgamma": Ours, "Betainc": Missing, "Assign": Excluded, "TopK": Excluded, "IteratorGetNext": Excluded, "XlaLaunch": Excluded} {
		i := slices.IndexFunc(c.Ops, func(o OpCoverage) bool { return o.Op == op })
		if i < 0 {
			t.Errorf("%s: not in the snapshot's GPU ops", op)
		} else if c.Ops[i].Status != want {
			t.Errorf("%s: %s, want %s", op, c.Ops[i].Status, want)
		}
	}
}

// synthetic is a small registry with one op of each kind.
func synthetic() *Registry {
	f := func(ts ...string) []Registration { return []Registration{{"T": ts}} }
	return &Registry{
		RegistrySource: RegistrySource{Distribution: "tensorflow", Version: "9.9.0", Platform: "linux-x86_64", GraphDefVersion: 100},
		Ops: map[string]RegistryOp{
			"Abs":          {GPU: f("float16", "float32", "float64", "int8"), Default: f("int32")},
			"Add":          {GPU: f("float32", "int64"), Default: f("int32")}, // int32 host-memory kernel only
			"Mod":          {GPU: f("int32"), Default: f("int32")},            // no float32: covered whole
			"Switch":       {GPU: f("bool", "float32", "string"), Default: f("float32", "string")},
			"Assign":       {GPU: f("float32"), OpFacts: OpFacts{Ref: true}},
			"TopK":         {GPU: f("float32"), OpFacts: OpFacts{Deprecated: 7}},
			"Later":        {GPU: f("float32"), OpFacts: OpFacts{Deprecated: 200}}, // deprecated after the GraphDef TensorFlow builds
			"MakeIterator": {GPU: []Registration{{}}},
			"DefaultOnly":  {Default: []Registration{{}}},
			"VarOp":        {GPU: []Registration{{"dtype": {"float32", "int8"}}}, Default: []Registration{{"dtype": {"float32"}}}},
		},
	}
}

var syntheticOurs = []OurOp{
	{Op: "Abs", DTypes: DTypes{"T": {"float16", "float32"}}},
	{Op: "VarOp", DTypes: DTypes{"dtype": {"float32"}}, Variable: true},
	{Op: "Extra", DTypes: DTypes{}},
}

func TestClassifySynthetic(t *testing.T) {
	c, err := Classify(synthetic(), syntheticOurs, map[string]Reason{"MakeIterator": HostSide})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		op        string
		status    Status
		reason    Reason
		otherwise Status
	}
	var got []row
	for _, o := range c.Ops {
		got = append(got, row{o.Op, o.Status, o.Reason, o.Otherwise})
	}
	want := []row{
		{"Abs", Ours, "", ""},
		{"Add", Missing, "", ""},
		{"Assign", Excluded, RefVariable, ""},
		{"Later", Missing, "", ""},
		{"MakeIterator", Excluded, HostSide, ""},
		{"Mod", Inherited, "", ""},
		{"Switch", Inherited, "", ""},
		{"TopK", Excluded, Removed, ""},
		{"VarOp", Ours, "", Inherited},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("classified\n%v\nwant\n%v", got, want)
	}
	if !reflect.DeepEqual(c.Beyond, []string{"Extra"}) || c.DefaultOnly != 1 {
		t.Errorf("beyond %v, default-only %d; want [Extra], 1", c.Beyond, c.DefaultOnly)
	}
	abs := c.Ops[0]
	// float64 is never the device's, so it is not lacking; int8 is.
	if !reflect.DeepEqual(abs.Lacking, DTypes{"T": {"int8"}}) {
		t.Errorf("Abs lacks %v, want T: int8", abs.Lacking)
	}
	if sw := c.Ops[6]; !reflect.DeepEqual(sw.Lacking, DTypes{"T": {"bool"}}) {
		t.Errorf("Switch lacks %v, want T: bool", sw.Lacking)
	}
}

func TestExclusionTableErrors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		exclusions map[string]Reason
		want       string
	}{
		{"not in the snapshot", map[string]Reason{"NoSuchOp": HostSide}, "NoSuchOp: excluded as host-side, but tensorflow 9.9.0 registers no GPU kernel for it"},
		{"no GPU kernel", map[string]Reason{"DefaultOnly": HostSide}, "DefaultOnly: excluded as host-side, but tensorflow 9.9.0 registers no GPU kernel"},
		{"ours and excluded", map[string]Reason{"Abs": Collective}, "Abs: excluded as collective, but the device registers it"},
		{"inherited and excluded", map[string]Reason{"Switch": HostSide}, "Switch: excluded as host-side, but TensorFlow's DEVICE_DEFAULT kernels give it"},
		{"excluded by its definition already", map[string]Reason{"Assign": HostSide}, "Assign: excluded as host-side, but its definition already excludes it"},
		{"a reason from definitions", map[string]Reason{"Add": RefVariable}, `Add: excluded as "reference-variable", which is not a reason the table may give`},
		{"an unknown reason", map[string]Reason{"Add": "slow"}, `Add: excluded as "slow", which is not a reason`},
		{"internal without an internal name", map[string]Reason{"Add": Internal}, "Add: excluded as internal, but it has no internal name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Classify(synthetic(), syntheticOurs, tc.exclusions)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestRenderCoverageSynthetic(t *testing.T) {
	c, err := Classify(synthetic(), syntheticOurs, map[string]Reason{"MakeIterator": HostSide})
	if err != nil {
		t.Fatal(err)
	}
	md := RenderCoverage(c)
	for _, line := range []string{
		"the GPU and DEVICE_DEFAULT kernels of `tensorflow` 9.9.0 (linux-x86_64)",
		"| ours | 2 (1 of them only where TensorFlow exports the resource-variable C API, see [kernels.md](kernels.md); elsewhere 1 of those are inherited and 0 missing) |",
		"| inherited | 2 |",
		"| excluded | 3 |",
		"| excluded: host-side | 1 |",
		"| excluded: collective | 0 |",
		"| excluded: reference-variable | 1 |",
		"| excluded: removed | 1 |",
		"| missing | 2 |",
		"| **TensorFlow's GPU ops** | **9** |",
		"The device registers 1 op TensorFlow has no GPU kernel for: Extra.",
		"DEVICE_DEFAULT kernels of 1 ops TensorFlow registers no GPU kernel for",
		"| Abs | ours | T: float16, float32, float64, int8 | T: float16, float32 | T: int8 |\n",
		"| Add | missing | T: float32, int64 | DEVICE_DEFAULT: T: int32 |  |\n",
		"| Assign | excluded: reference-variable | T: float32 | - |  |\n",
		"| MakeIterator | excluded: host-side | unconstrained | - |  |\n",
		"| Mod | inherited | T: int32 | DEVICE_DEFAULT: T: int32 | - |\n",
		"| Switch | inherited | T: bool, float32, string | DEVICE_DEFAULT: T: float32, string | T: bool |\n",
		"| VarOp | ours where TensorFlow exports the resource-variable C API, else inherited | dtype: float32, int8 | dtype: float32 | dtype: int8 |\n",
	} {
		if !strings.Contains(md, line) {
			t.Errorf("the document lacks %q:\n%s", line, md)
		}
	}
	if strings.Contains(md, "| DefaultOnly |") || strings.Contains(md, "| Extra |") {
		t.Errorf("the table lists an op TensorFlow has no GPU kernel for:\n%s", md)
	}
	if n := strings.Count(md, "\n| ") - strings.Count(md, "\n| ---"); n != (1+len(Statuses)+len(Reasons)+1)+(1+len(Reasons))+(1+9) {
		t.Errorf("%d table rows; want the summary, the reasons and the 9 GPU ops with their headers", n)
	}
}

// TestReadmeCoverageCounts holds the README's summary of docs/coverage.md
// to the counts it renders.
func TestReadmeCoverageCounts(t *testing.T) {
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(b)), " ")
	m := regexp.MustCompile(`of the (\d+) ops TensorFlow registers GPU kernels for, (\d+) are ours \((\d+) of them [^)]*\), (\d+) run on the device through TensorFlow's DEVICE_DEFAULT kernels, (\d+) are excluded [^)]*\) and (\d+) are missing`).FindStringSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no summary of docs/coverage.md (\"of the N ops TensorFlow registers GPU kernels for, N are ours (N of them ...), N run on the device through TensorFlow's DEVICE_DEFAULT kernels, N are excluded (...) and N are missing\")")
	}
	reg, err := ReadRegistry(root)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Classify(reg, OurOps(), Exclusions)
	if err != nil {
		t.Fatal(err)
	}
	variable := 0
	for _, o := range c.Ops {
		if o.Variable {
			variable++
		}
	}
	want := []int{len(c.Ops), c.Count(Ours, ""), variable, c.Count(Inherited, ""), c.Count(Excluded, ""), c.Count(Missing, "")}
	for i, w := range want {
		if got, _ := strconv.Atoi(m[i+1]); got != w {
			t.Errorf("README.md says %q; the counts of %s are %v (all, ours, variable, inherited, excluded, missing)", m[0], CoveragePath, want)
			break
		}
	}
}
