package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/setup/build"
	"github.com/metalplug/metalplug/setup/probe"
)

// TestJaxVersionMismatchDeclines builds the JAX-only library stamped with
// another jaxlib minor and registers it through the jax_plugins module: the
// module declines with one line naming both versions, and jax goes on, on
// its CPU, whether or not JAX_PLATFORMS asks for metalplug first.
func TestJaxVersionMismatchDeclines(t *testing.T) {
	v := need(t, "METALPLUG_TEST_JAX_PYTHON")
	r, err := probe.Run(v[0])
	if err != nil {
		t.Fatal(err)
	}
	if !r.HasJax() {
		t.Fatalf("%s has no jax", v[0])
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	dir := t.TempDir()
	lib := filepath.Join(dir, "jax_plugins", "metalplug", build.LibraryName(r.GOOS))
	const stamped = "0.1.0"
	if _, err := build.Build(build.Options{Report: r, Root: root, Out: lib, StampJaxlib: stamped, Log: t.Logf}); err != nil {
		t.Fatal(err)
	}
	module, err := os.ReadFile(filepath.Join(root, "plugin", "pjrt", "python", "jax_plugins", "metalplug", "__init__.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(lib), "__init__.py"), module, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, platforms := range []string{"", "cpu"} {
		cmd := exec.Command(v[0], "-c", "import jax, jax.numpy as jnp; print('devices', [d.platform for d in jax.devices()], float(jnp.ones(3).sum()))")
		cmd.Env = append(os.Environ(), "PYTHONPATH="+dir, ask, "JAX_PLATFORMS="+platforms)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("JAX_PLATFORMS=%q: jax did not survive the mismatched plugin: %v\n%s", platforms, err, out)
		}
		text := string(out)
		if !strings.Contains(text, "devices ['cpu'] 3.0") {
			t.Errorf("JAX_PLATFORMS=%q: jax is not on its CPU:\n%s", platforms, text)
		}
		want := "built for jaxlib " + stamped + " but jaxlib " + r.Jax.JaxlibVersion + " is running: not registering"
		if platforms == "" && (strings.Count(text, want) != 1) {
			t.Errorf("the decline does not say, once, %q:\n%s", want, text)
		}
	}
}
