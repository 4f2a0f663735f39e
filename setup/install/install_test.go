package install

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	jaxplugin "github.com/metalplug/metalplug/plugin/pjrt/python"
	"github.com/metalplug/metalplug/plugin/python"
	"github.com/metalplug/metalplug/setup/probe"
)

func fakeLib(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "libmetalplug.so")
	if err := os.WriteFile(p, []byte("\x7fELF a library"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// tree lists the files under root, relative with forward slashes.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

// TestInstallWritesTheMetalplugModuleEverywhere: whichever frameworks an
// install serves, each site-packages it writes to gets the metalplug module
// (metalplug.stats()), as it is, next to what the frameworks load: the
// library in tensorflow-plugins for TensorFlow, the jax_plugins module
// (with the library beside it when there is no TensorFlow) for jax.
func TestInstallWritesTheMetalplugModuleEverywhere(t *testing.T) {
	tf := func(r *probe.Report, site string) {
		r.TensorFlow.Version, r.TensorFlow.PackageDir = "2.21.0", filepath.Join(site, "tensorflow")
	}
	jax := func(r *probe.Report, site string) {
		r.Jax = &probe.Jax{JaxlibVersion: "0.12.0", JaxlibDir: filepath.Join(site, "jaxlib")}
	}
	for _, c := range []struct {
		name     string
		tf, jax  bool
		apart    bool // jaxlib in a site-packages of its own (the user site, say)
		want     []string
		wantJaxs []string // files in jaxlib's site-packages, when apart
	}{
		{name: "TensorFlow only", tf: true,
			want: []string{"metalplug/__init__.py", "tensorflow-plugins/libmetalplug.so"}},
		{name: "jax only", jax: true,
			want: []string{"jax_plugins/metalplug/__init__.py", "jax_plugins/metalplug/libmetalplug.so", "metalplug/__init__.py"}},
		{name: "both", tf: true, jax: true,
			want: []string{"jax_plugins/metalplug/__init__.py", "metalplug/__init__.py", "tensorflow-plugins/libmetalplug.so"}},
		{name: "both, apart", tf: true, jax: true, apart: true,
			want:     []string{"metalplug/__init__.py", "tensorflow-plugins/libmetalplug.so"},
			wantJaxs: []string{"jax_plugins/metalplug/__init__.py", "metalplug/__init__.py"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			site, other := t.TempDir(), t.TempDir()
			r := &probe.Report{GOOS: "linux", GOARCH: "amd64"}
			if c.tf {
				tf(r, site)
			}
			if c.jax {
				jaxSite := site
				if c.apart {
					jaxSite = other
				}
				jax(r, jaxSite)
			}
			wrote, err := Install(fakeLib(t), r)
			if err != nil {
				t.Fatal(err)
			}
			if got := tree(t, site); !slices.Equal(got, c.want) {
				t.Errorf("site-packages holds %q, want %q", got, c.want)
			}
			if got := tree(t, other); !slices.Equal(got, c.wantJaxs) {
				t.Errorf("jaxlib's site-packages holds %q, want %q", got, c.wantJaxs)
			}
			if n := len(c.want) + len(c.wantJaxs); len(wrote) != n {
				t.Errorf("Install says it wrote %q, %d files", wrote, n)
			}
			for _, dir := range SitePackages(r) {
				b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(python.ModulePath)))
				if err != nil || !bytes.Equal(b, python.Module) {
					t.Errorf("%s: the metalplug module is not Module as it is (%v)", dir, err)
				}
			}
			if c.jax {
				b, err := os.ReadFile(filepath.Join(JaxModuleDir(r), filepath.Base(jaxplugin.ModulePath)))
				if err != nil || !bytes.Equal(b, jaxplugin.Module) {
					t.Errorf("the jax_plugins module is not jaxplugin.Module as it is (%v)", err)
				}
			}
		})
	}
}
