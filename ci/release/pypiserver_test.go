package release

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/metalplug/metalplug/setup/venv"
	"github.com/metalplug/metalplug/wheels"
)

// PypiserverRequirement is the index the heavy test uploads to, from PyPI,
// in a venv of its own (passlib reads the htpasswd file).
const pypiserverRequirement = "pypiserver[passlib]==2.4.2"

// The heavy test runs when `go tool mage test` sets:
//
//	METALPLUG_TEST_WHEELHOUSE  the wheelhouse it built (one wheel per matrix release)
//	METALPLUG_TEST_SDIST       the sdist it built
func heavy(t *testing.T) (sdist string, wheelFiles []string) {
	t.Helper()
	house, sd := os.Getenv("METALPLUG_TEST_WHEELHOUSE"), os.Getenv("METALPLUG_TEST_SDIST")
	if house == "" || sd == "" {
		if os.Getenv("METALPLUG_REQUIRE_INTEGRATION") == "1" {
			t.Fatal("METALPLUG_TEST_WHEELHOUSE and METALPLUG_TEST_SDIST must be set")
		}
		t.Skip("METALPLUG_TEST_WHEELHOUSE and METALPLUG_TEST_SDIST are not set: run `go tool mage test`")
	}
	abs := func(p string) string {
		if !filepath.IsAbs(p) {
			p = filepath.Join("..", "..", p) // relative to the repository root, where mage runs
		}
		a, _ := filepath.Abs(p)
		return a
	}
	sdist = abs(sd)
	wheelFiles, _ = filepath.Glob(filepath.Join(abs(house), wheels.Name+"-*.whl"))
	sort.Strings(wheelFiles)
	if len(wheelFiles) == 0 {
		t.Fatalf("no wheels in %s", house)
	}
	return sdist, wheelFiles
}

// pypiserver runs a real pypiserver on a free loopback port, uploads
// authenticated by an htpasswd file (-P htpasswd -a update), serving dir.
// It returns the base URL (uploads go to it, the simple index is below it).
func pypiserver(t *testing.T, dir, user, password string) string {
	t.Helper()
	vdir, err := venv.Ensure("release-pypiserver", "", []string{pypiserverRequirement}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	py := venv.Python(vdir)
	htpasswd := filepath.Join(t.TempDir(), "htpasswd")
	mk := exec.Command(py, "-c", "import sys; from passlib.apache import HtpasswdFile as H; h = H(sys.argv[1], new=True); h.set_password(sys.argv[2], sys.stdin.read()); h.save()", htpasswd, user)
	mk.Stdin = strings.NewReader(password)
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("htpasswd: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var logb bytes.Buffer
	srv := exec.Command(filepath.Join(vdir, "bin", "pypi-server"), "run", "-p", fmt.Sprint(port), "-i", "127.0.0.1",
		"-P", htpasswd, "-a", "update", "--disable-fallback", dir)
	srv.Stdout, srv.Stderr = &logb, &logb
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Kill()
		srv.Wait()
		if t.Failed() {
			t.Logf("pypiserver log:\n%s", logb.String())
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d/", port)
	for deadline := time.Now().Add(60 * time.Second); ; {
		resp, err := http.Get(base + "health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pypiserver did not start on %s: %v\n%s", base, err, logb.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func pipEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "PIP_CONFIG_FILE", "PYTHONPATH":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PIP_CONFIG_FILE="+os.DevNull, "PIP_DISABLE_PIP_VERSION_CHECK=1")
}

func pipRun(t *testing.T, python string, args ...string) string {
	t.Helper()
	cmd := exec.Command(python, append([]string{"-m", "pip"}, args...)...)
	cmd.Env = pipEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestReleaseToPypiserverAndInstallFromIt publishes the real sdist and
// universal wheel (GitHub faked, the index a real pypiserver), publishes
// again (every file already there), and then installs metalplug from that
// index into a fresh venv that got tensorflow-cpu from the normal index.
func TestReleaseToPypiserverAndInstallFromIt(t *testing.T) {
	sdist, _ := heavy(t)
	whls := []string{universal(t)}
	const user, password = "uploader", "pypiserver-TEST-password-4242"
	packages := t.TempDir()
	base := pypiserver(t, packages, user, password)

	meta, err := wheels.CoreMetadata(sdist)
	if err != nil {
		t.Fatal(err)
	}
	ver := ""
	for _, l := range strings.Split(string(meta), "\n") {
		if v, ok := strings.CutPrefix(l, "Version: "); ok {
			ver = v
		}
	}
	w := newWorld(t)
	w.root = repo(t, ver)
	w.head = gitT(t, w.root, "rev-parse", "HEAD")
	w.gh.commits[w.head] = true
	files := append([]string{sdist}, whls...)
	copyBuild := func(ctx context.Context, root, out string, logf func(string, ...any)) ([]string, error) {
		var paths []string
		os.MkdirAll(out, 0o755)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			p := filepath.Join(out, filepath.Base(f))
			if err := os.WriteFile(p, b, 0o644); err != nil {
				return nil, err
			}
			paths = append(paths, p)
		}
		return paths, nil
	}
	config := func() Config {
		c := w.config("v"+ver, true)
		c.Build, c.IndexURL, c.IndexUser, c.IndexToken = copyBuild, base, user, password
		return c
	}

	// A wrong password: pypiserver refuses, the message names the variable
	// and never the password.
	c := config()
	c.IndexToken = "wrong-password-0000"
	err = w.run(t, c)
	if err == nil || !strings.Contains(err.Error(), "PYPI_TOKEN") {
		t.Fatalf("with a wrong password: %v", err)
	}
	t.Logf("wrong password: %v", firstLineOf(err.Error()))
	if strings.Contains(w.log.String()+err.Error(), "wrong-password-0000") {
		t.Fatal("the password leaked")
	}

	w.log.Reset()
	if err := w.run(t, config()); err != nil {
		t.Fatalf("%v\n%s", err, w.log.String())
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(packages, filepath.Base(f)))
		want, _ := os.ReadFile(f)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("pypiserver does not hold %s as built (%v)", filepath.Base(f), err)
		}
	}
	w.log.Reset()
	if err := w.run(t, config()); err != nil {
		t.Fatalf("re-run: %v\n%s", err, w.log.String())
	}
	if n := strings.Count(w.log.String(), "is already there"); n != len(files) {
		t.Errorf("the re-run skipped %d of %d index files:\n%s", n, len(files), w.log.String())
	}
	entries, _ := os.ReadDir(packages)
	if len(entries) != len(files) {
		t.Errorf("pypiserver holds %d files, want %d", len(entries), len(files))
	}

	// The index serves them to pip: a fresh venv, tensorflow-cpu from the
	// normal index, then metalplug from pypiserver with the installed
	// TensorFlow kept.
	if runtime.GOOS != "linux" {
		t.Skip("the install check uses tensorflow-cpu")
	}
	const tf = "2.19.1"
	vdir := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command("python3", "-m", "venv", vdir).CombinedOutput(); err != nil {
		t.Fatalf("venv: %v\n%s", err, out)
	}
	py := venv.Python(vdir)
	start := time.Now()
	pipRun(t, py, "install", "-q", "tensorflow-cpu=="+tf)
	t.Logf("tensorflow-cpu %s from the normal index in %s", tf, time.Since(start).Round(time.Second))
	out := pipRun(t, py, "install", "--extra-index-url", base+"simple/", "metalplug", "tensorflow-cpu=="+tf)
	wantVer := ver // the universal wheel
	if !strings.Contains(out, "Successfully installed metalplug-"+wantVer) || !strings.Contains(out, base+"packages/metalplug-"+wantVer) {
		t.Fatalf("pip did not install metalplug %s from pypiserver:\n%s", wantVer, out)
	}
	if strings.Contains(out, "Building wheel") || strings.Contains(out, "Uninstalling tensorflow") {
		t.Errorf("pip compiled or changed TensorFlow:\n%s", out)
	}
	script, _ := filepath.Abs(filepath.Join("..", "..", "tests", "integration", "py", "devices.py"))
	cmd := exec.Command(py, script)
	cmd.Env = append(os.Environ(), "TF_CPP_MIN_LOG_LEVEL=2", "METALPLUG_TEST_LIB=", "METALPLUG_HOST_DEVICE=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	var r struct {
		Devices     []string `json:"devices"`
		MatmulError *float64 `json:"matmul_error"`
	}
	for _, l := range strings.Split(stdout.String(), "\n") {
		if rest, ok := strings.CutPrefix(l, "RESULT "); ok {
			json.Unmarshal([]byte(rest), &r)
		}
	}
	if len(r.Devices) != 1 || r.MatmulError == nil || *r.MatmulError > 1e-5 || !strings.Contains(stderr.String(), "built against TensorFlow "+tf+",") {
		t.Fatalf("after installing from pypiserver: devices %v, MatMul error %v\n%s\n%s", r.Devices, r.MatmulError, stdout.String(), stderr.String())
	}
}

func firstLineOf(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
