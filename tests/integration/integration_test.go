// Package integration runs the plugin inside a real TensorFlow: each case is
// a Python script in a subprocess (TensorFlow holds a device for the whole
// process, and a declined load must be told apart from an aborted one).
// `go tool mage test` builds the libraries and sets the environment:
//
//	METALPLUG_TEST_PYTHON         an interpreter with the pinned TensorFlow
//	METALPLUG_TEST_LIB            the library built against it
//	METALPLUG_TEST_LIB_MISMATCH   the same library stamped with another version
//	METALPLUG_TEST_SDIST          the sdist, for the install test
package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func need(t *testing.T, names ...string) []string {
	t.Helper()
	var vals []string
	for _, n := range names {
		v := os.Getenv(n)
		if v == "" {
			if os.Getenv("METALPLUG_REQUIRE_INTEGRATION") == "1" {
				t.Fatalf("%s is not set", n)
			}
			t.Skipf("%s is not set: run `go tool mage test`", n)
		}
		vals = append(vals, v)
	}
	return vals
}

// script runs py/<name> with extra environment and returns its RESULT JSON,
// its stderr and its exit error.
func script(t *testing.T, python, name string, env []string, result any) (stderr string, err error) {
	t.Helper()
	cmd := exec.Command(python, filepath.Join("py", name))
	cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=2")
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	for _, line := range strings.Split(out.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "RESULT "); ok && result != nil {
			if jerr := json.Unmarshal([]byte(rest), result); jerr != nil {
				t.Fatalf("%s: bad result %q: %v", name, rest, jerr)
			}
			return errb.String(), err
		}
	}
	if err == nil {
		err = &exec.ExitError{}
	}
	t.Logf("%s printed no result; stdout:\n%s\nstderr:\n%s", name, out.String(), errb.String())
	return errb.String(), err
}

type devicesResult struct {
	Devices      []string `json:"devices"`
	MatmulDevice string   `json:"matmul_device"`
	MatmulError  *float64 `json:"matmul_error"`
}

func TestDeviceAppearsAndRunsMatMul(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	var r devicesResult
	if stderr, err := script(t, v[0], "devices.py", []string{"METALPLUG_HOST_DEVICE=1", "METALPLUG_TEST_LIB=" + v[1]}, &r); err != nil {
		t.Fatalf("devices.py: %v\n%s", err, stderr)
	}
	if len(r.Devices) != 1 || r.Devices[0] != "/physical_device:METALPLUG_HOST:0" {
		t.Fatalf("devices = %v, want [/physical_device:METALPLUG_HOST:0]", r.Devices)
	}
	if !strings.HasSuffix(r.MatmulDevice, "device:METALPLUG_HOST:0") || r.MatmulError == nil || *r.MatmulError > 1e-5 {
		t.Fatalf("MatMul ran on %q with error %v", r.MatmulDevice, r.MatmulError)
	}
}

func TestOpsMatchCPU(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	var r map[string]struct {
		Device string   `json:"device"`
		Error  string   `json:"error"`
		MaxAbs *float64 `json:"max_abs_error"`
		Shape  []int    `json:"shape"`
		DType  string   `json:"dtype"`
	}
	if stderr, err := script(t, v[0], "ops.py", []string{"METALPLUG_HOST_DEVICE=1", "METALPLUG_TEST_LIB=" + v[1]}, &r); err != nil {
		t.Fatalf("ops.py: %v\n%s", err, stderr)
	}
	if len(r) < 31 {
		t.Fatalf("ops.py reported %d cases, want 31", len(r))
	}
	for name, c := range r {
		switch {
		case c.Error != "":
			t.Errorf("%s: %s", name, c.Error)
		case !strings.HasSuffix(c.Device, "device:METALPLUG_HOST:0"):
			t.Errorf("%s ran on %q, not the plugin device", name, c.Device)
		case c.MaxAbs == nil || *c.MaxAbs > 1e-4:
			t.Errorf("%s (%s%v): max abs error %v against the CPU", name, c.DType, c.Shape, c.MaxAbs)
		}
	}
}

func TestOpWithoutKernelRaises(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB")
	var r map[string]string
	if stderr, err := script(t, v[0], "unsupported.py", []string{"METALPLUG_HOST_DEVICE=1", "METALPLUG_TEST_LIB=" + v[1]}, &r); err != nil {
		t.Fatalf("unsupported.py: %v\n%s", err, stderr)
	}
	for _, op := range []string{"MatrixDeterminant", "MatMul_float64"} {
		if !strings.HasPrefix(r[op], "raised") {
			t.Errorf("%s with soft placement off: %q, want it to raise", op, r[op])
		}
	}
	if !strings.HasSuffix(r["soft_float64_device"], "device:CPU:0") {
		t.Errorf("float64 MatMul with soft placement on ran on %q, want the CPU", r["soft_float64_device"])
	}
}

// TestDeclinePaths: each way the plugin declines keeps TensorFlow alive with
// no device and says why in one line; the override loads it anyway.
func TestDeclinePaths(t *testing.T) {
	v := need(t, "METALPLUG_TEST_PYTHON", "METALPLUG_TEST_LIB", "METALPLUG_TEST_LIB_MISMATCH")
	py, lib, mismatch := v[0], v[1], v[2]
	cases := []struct {
		name      string
		env       []string
		devices   int
		stderrHas []string
	}{
		{"version mismatch", []string{"METALPLUG_HOST_DEVICE=1", "METALPLUG_TEST_LIB=" + mismatch}, 0,
			[]string{"built for TensorFlow 2.20.0 but TensorFlow 2.21", "offering no device"}},
		{"disabled", []string{"METALPLUG_HOST_DEVICE=1", "METALPLUG_DISABLE=1", "METALPLUG_TEST_LIB=" + lib}, 0,
			[]string{"METALPLUG_DISABLE=1"}},
		{"no host device asked", []string{"METALPLUG_TEST_LIB=" + lib}, 0,
			[]string{"METALPLUG_HOST_DEVICE=1"}},
		{"skip version check", []string{"METALPLUG_HOST_DEVICE=1", "METALPLUG_SKIP_VERSION_CHECK=1", "METALPLUG_TEST_LIB=" + mismatch}, 1,
			[]string{"built against TensorFlow 2.20.0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r devicesResult
			stderr, err := script(t, py, "devices.py", c.env, &r)
			if err != nil {
				t.Fatalf("the process did not survive: %v\n%s", err, stderr)
			}
			if len(r.Devices) != c.devices {
				t.Fatalf("%d devices, want %d (stderr: %s)", len(r.Devices), c.devices, stderr)
			}
			for _, s := range c.stderrHas {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not say %q:\n%s", s, stderr)
				}
			}
			if c.devices == 1 && (r.MatmulError == nil || *r.MatmulError > 1e-5) {
				t.Errorf("MatMul error %v", r.MatmulError)
			}
		})
	}
}
