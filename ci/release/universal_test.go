package release

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/setup/venv"
	"github.com/metalplug/metalplug/wheels"
)

// universal is the universal wheel `go tool mage disttest` built
// (METALPLUG_TEST_UNIVERSAL).
func universal(t *testing.T) string {
	t.Helper()
	p := os.Getenv("METALPLUG_TEST_UNIVERSAL")
	if p == "" {
		if os.Getenv("METALPLUG_REQUIRE_INTEGRATION") == "1" {
			t.Fatal("METALPLUG_TEST_UNIVERSAL must be set")
		}
		t.Skip("METALPLUG_TEST_UNIVERSAL is not set: run `go tool mage disttest`")
	}
	return p
}

// A user's venv, as the test meets it: what it holds, on which Python, and
// what importing its framework should show once metalplug is installed.
type userVenv struct {
	name     string   // the venv's name under the venv directory
	python   int      // the oldest Python 3 minor it needs; 0 for python3
	holds    []string // its requirements
	check    string   // "tensorflow", "jax" or "declines"
	built    string   // the TensorFlow the loader should pick a build of ("built against TensorFlow X,")
	describe string
}

var userVenvs = []userVenv{
	{name: "user-tensorflow-cpu-2.19.1", holds: []string{"tensorflow-cpu==2.19.1"}, check: "tensorflow", built: "2.19.1", describe: "tensorflow-cpu 2.19.1"},
	{name: "user-tensorflow-2.21.0", holds: []string{"tensorflow==2.21.0"}, check: "tensorflow", built: "2.21.0", describe: "the full tensorflow 2.21.0 wheel"},
	{name: "user-jax-0.12", python: wheels.JaxMinPython, holds: []string{"jax==0.12.*"}, check: "jax", describe: "jax 0.12, no TensorFlow"},
	{name: "user-tf-nightly", holds: []string{"tf-nightly"}, check: "declines", describe: "tf-nightly, which no build serves"},
}

// TestUniversalWheelFromAnIndex installs metalplug as a user meets a release:
// a real package index (pypiserver) holds the universal wheel and the
// sdist, with PyPI behind it for everything else (pip's
// --extra-index-url), and `pip install metalplug` runs in venvs that already
// hold a framework. In each, pip installs our wheel and nothing else (pip
// freeze is otherwise unchanged: no TensorFlow, jax or protobuf moves), and
// the framework works: the device computes as the CPU does with
// tensorflow-cpu 2.19.1, the full tensorflow 2.21.0 wheel and jax 0.12;
// with tf-nightly the install succeeds and the import says, in one line,
// that this TensorFlow needs the sdist, and TensorFlow runs on its CPU; the
// command that line names then builds the sdist from the same index against
// that nightly, and the device works. The
// venvs are kept between runs, and metalplug is uninstalled from each after.
func TestUniversalWheelFromAnIndex(t *testing.T) {
	whl := universal(t)
	sdist, _ := heavy(t)
	if runtime.GOOS != "linux" {
		t.Skip("the venvs hold Linux wheels of TensorFlow")
	}
	packages := t.TempDir()
	for _, f := range []string{sdist, whl} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(packages, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := pypiserver(t, packages, "uploader", "unused-password-0000")
	project := strings.SplitN(filepath.Base(whl), "-", 3)[1]
	script := func(name string) string {
		p, _ := filepath.Abs(filepath.Join("..", "..", "tests", "integration", "py", name))
		return p
	}
	for _, u := range userVenvs {
		t.Run(u.describe, func(t *testing.T) {
			basePython := ""
			if u.python > 0 {
				var err error
				if basePython, err = venv.FindPython(u.python); err != nil {
					t.Fatal(err)
				}
			}
			dir, err := venv.Ensure(u.name, basePython, u.holds, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			py := venv.Python(dir)
			exec.Command(py, "-m", "pip", "uninstall", "-q", "-y", wheels.Name).Run() // a run cut short may have left it
			before := freeze(t, py)
			out := pipRun(t, py, "install", "--extra-index-url", base+"simple/", wheels.Name)
			defer exec.Command(py, "-m", "pip", "uninstall", "-q", "-y", wheels.Name).Run()
			if !strings.Contains(out, "Successfully installed "+wheels.Name+"-"+project) || !strings.Contains(out, base+"packages/"+filepath.Base(whl)) {
				t.Fatalf("pip did not install %s from the index:\n%s", filepath.Base(whl), out)
			}
			if strings.Contains(out, "Building wheel") {
				t.Errorf("pip built the sdist instead of taking the wheel:\n%s", out)
			}
			after := freeze(t, py)
			if added, removed := diff(before, after); len(removed) > 0 || len(added) != 1 || added[0] != wheels.Name+"=="+project {
				t.Errorf("pip freeze changed by %v added and %v removed: want %s==%s added, nothing else", added, removed, wheels.Name, project)
			}

			env := append(pipEnv(), "TF_CPP_MIN_LOG_LEVEL=2", "METALPLUG_TEST_LIB=", "METALPLUG_HOST_DEVICE=1", "JAX_PLATFORMS=metalplug,cpu")
			switch u.check {
			case "tensorflow", "declines":
				var r struct {
					Devices     []string `json:"devices"`
					MatmulError *float64 `json:"matmul_error"`
				}
				stderr := runScript(t, py, script("devices.py"), env, &r)
				if u.check == "tensorflow" {
					if len(r.Devices) != 1 || r.MatmulError == nil || *r.MatmulError > 1e-5 || !strings.Contains(stderr, "built against TensorFlow "+u.built+",") {
						t.Errorf("devices %v, MatMul error %v; want one device built against TensorFlow %s:\n%s", r.Devices, r.MatmulError, u.built, stderr)
					}
					return
				}
				line := ""
				for _, l := range strings.Split(stderr, "\n") {
					if strings.Contains(l, "this metalplug carries builds for TensorFlow") {
						line = l
					}
				}
				if len(r.Devices) != 0 || !strings.Contains(line, "--no-binary metalplug") || !strings.Contains(line, "offering no device") {
					t.Errorf("devices %v and the line %q: want no device, and one line naming the sdist:\n%s", r.Devices, line, stderr)
				}
				t.Logf("%s", line)
				// The fix the line names, from the same index: the sdist,
				// compiled at install against this TensorFlow.
				fix := strings.Fields(line[strings.Index(line, "pip install"):])
				out := pipRun(t, py, append(fix[1:], "--extra-index-url", base+"simple/")...)
				if !strings.Contains(out, "Successfully installed "+wheels.Name+"-"+project) {
					t.Fatalf("%s did not install metalplug:\n%s", strings.Join(fix, " "), out)
				}
				if added, removed := diff(before, freeze(t, py)); len(removed) > 0 || len(added) != 1 {
					t.Errorf("after the sdist, pip freeze changed by %v added and %v removed", added, removed)
				}
				stderr = runScript(t, py, script("devices.py"), env, &r)
				if len(r.Devices) != 1 || r.MatmulError == nil || *r.MatmulError > 1e-5 {
					t.Errorf("after installing the sdist: devices %v, MatMul error %v\n%s", r.Devices, r.MatmulError, stderr)
				}
			case "jax":
				var r struct {
					Cases    int      `json:"cases"`
					Failures []string `json:"failures"`
				}
				stderr := runScript(t, py, script("jax_ops.py"), env, &r)
				if r.Cases == 0 || len(r.Failures) > 0 {
					t.Errorf("jax on the device: %d cases, failures %v\n%s", r.Cases, r.Failures, stderr)
				}
			}
		})
	}
}

// freeze is `pip freeze` as a sorted list.
func freeze(t *testing.T, py string) []string {
	t.Helper()
	lines := strings.Fields(pipRun(t, py, "freeze", "--all"))
	sort.Strings(lines)
	return lines
}

// diff lists what b has and a lacks, and the reverse.
func diff(a, b []string) (added, removed []string) {
	in := func(list []string, s string) bool {
		i := sort.SearchStrings(list, s)
		return i < len(list) && list[i] == s
	}
	for _, s := range b {
		if !in(a, s) {
			added = append(added, s)
		}
	}
	for _, s := range a {
		if !in(b, s) {
			removed = append(removed, s)
		}
	}
	return added, removed
}

// runScript runs a test script and decodes its RESULT line into result,
// returning its stderr.
func runScript(t *testing.T, py, script string, env []string, result any) string {
	t.Helper()
	cmd := exec.Command(py, script)
	cmd.Dir = filepath.Dir(script)
	cmd.Env = env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	for _, l := range strings.Split(stdout.String(), "\n") {
		if rest, ok := strings.CutPrefix(l, "RESULT "); ok {
			if err := json.Unmarshal([]byte(rest), result); err != nil {
				t.Fatalf("%s: %v in %q", filepath.Base(script), err, rest)
			}
			return stderr.String()
		}
	}
	t.Fatalf("%s printed no result:\n%s\n%s", filepath.Base(script), stdout.String(), stderr.String())
	return ""
}
