package wheels

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// regexp_release is a plain PEP 440 release: X.Y.Z with an optional
// pre-release, nothing after it.
var regexp_release = regexp.MustCompile(`^\d+(\.\d+)*((a|b|rc)\d+)?$`)

// The wheelhouse layout (a PEP 503 simple repository on disk):
//
//	<dir>/metalplug-<version>-py3-none-<platform>.whl    the wheels, flat (so --find-links <dir> works too)
//	<dir>/metalplug-<...>.whl.metadata                    each wheel's METADATA (PEP 658), so pip reads no wheel it will not install
//	<dir>/simple/index.html                               the project list
//	<dir>/simple/metalplug/index.html                     one link per wheel, ../../<file>#sha256=<hex>
const (
	SimpleDir = "simple"
)

// WriteIndex writes the simple index over every metalplug wheel in dir.
func WriteIndex(dir string) error {
	wheels, err := filepath.Glob(filepath.Join(dir, Name+"-*.whl"))
	if err != nil {
		return err
	}
	sort.Strings(wheels)
	var links strings.Builder
	for _, p := range wheels {
		sum, _, err := fileSHA256(p)
		if err != nil {
			return err
		}
		meta, err := wheelMetadata(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if err := writeAtomic(p+".metadata", meta); err != nil {
			return err
		}
		ms := sha256.Sum256(meta)
		attr := html.EscapeString("sha256=" + hex.EncodeToString(ms[:]))
		name := filepath.Base(p)
		fmt.Fprintf(&links, "    <a href=\"../../%s#sha256=%s\" data-requires-python=\"%s\" data-dist-info-metadata=\"%s\" data-core-metadata=\"%s\">%s</a><br>\n",
			html.EscapeString(name), sum, html.EscapeString(">=3.9"), attr, attr, html.EscapeString(name))
	}
	page := func(title, body string) []byte {
		return []byte("<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" content=\"1.0\">\n    <title>" + title + "</title>\n  </head>\n  <body>\n    <h1>" + title + "</h1>\n" + body + "  </body>\n</html>\n")
	}
	if err := writeAtomic(filepath.Join(dir, SimpleDir, "index.html"), page("Simple index", "    <a href=\""+Name+"/\">"+Name+"</a><br>\n")); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, SimpleDir, Name, "index.html"), page("Links for "+Name, links.String()))
}

// CoreMetadata reads the core metadata of a wheel (dist-info/METADATA) or
// an sdist (PKG-INFO).
func CoreMetadata(path string) ([]byte, error) {
	if strings.HasSuffix(path, ".tar.gz") {
		return sdistPKGInfo(path)
	}
	return wheelMetadata(path)
}

// sdistPKGInfo reads <name>-<version>/PKG-INFO from an sdist.
func sdistPKGInfo(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s has no PKG-INFO", path)
		}
		if err != nil {
			return nil, err
		}
		if strings.Count(h.Name, "/") == 1 && strings.HasSuffix(h.Name, "/PKG-INFO") {
			return io.ReadAll(tr)
		}
	}
}

// wheelMetadata reads a wheel's dist-info/METADATA.
func wheelMetadata(path string) ([]byte, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".dist-info/METADATA") && strings.Count(f.Name, "/") == 1 {
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			return io.ReadAll(rc)
		}
	}
	return nil, fmt.Errorf("no dist-info/METADATA")
}

// fileSHA256 is the hex sha256 and the size of a file.
func fileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
