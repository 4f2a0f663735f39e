package release

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"regexp"
	"strings"

	"github.com/metalplug/metalplug/wheels"
)

// indexClient uploads files through the legacy upload API that PyPI,
// TestPyPI, pypiserver, devpi and most private indexes speak (what twine
// uses): a multipart POST with :action=file_upload, the core metadata as
// form fields, and the file as "content".
type indexClient struct {
	url, user, token string
	http             *http.Client
	logf             func(string, ...any)
}

// wheelName takes the version and the Python tag from a wheel's file name.
var wheelName = regexp.MustCompile(`^[A-Za-z0-9_.]+-([^-]+)(?:-\d[^-]*)?-([^-]+)-[^-]+-[^-]+\.whl$`)

func (x *indexClient) upload(ctx context.Context, a Asset) error {
	meta, err := wheels.CoreMetadata(a.Path)
	if err != nil {
		return err
	}
	fields := parseMetadata(meta)
	filetype, pyversion := "sdist", "source"
	if strings.HasSuffix(a.Name, ".whl") {
		m := wheelName.FindStringSubmatch(a.Name)
		if m == nil {
			return fmt.Errorf("%s is not a wheel file name", a.Name)
		}
		filetype, pyversion = "bdist_wheel", m[2]
	}
	body, ctype, err := form(a, fields, filetype, pyversion)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", x.url, body)
	if err != nil {
		return fmt.Errorf("index URL %q: %w", x.url, err)
	}
	req.Header.Set("Content-Type", ctype)
	// Ask before sending the body: an index that refuses the credentials
	// answers at once, and the refusal arrives instead of a broken pipe
	// (servers such as pypiserver reply and close without reading a body
	// they will not take).
	req.Header.Set("Expect", "100-continue")
	req.SetBasicAuth(x.user, x.token)
	resp, err := x.http.Do(req)
	if err != nil {
		return fmt.Errorf("uploading %s to %s failed: the connection broke (%v). Check the network and %s", a.Name, x.url, err, EnvIndexURL)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	reason := strings.TrimSpace(resp.Status + " " + firstLine(string(text)))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		x.logf("index: uploaded %s", a.Name)
		return nil
	case (resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusConflict) &&
		(strings.Contains(strings.ToLower(reason), "already exist") || strings.Contains(strings.ToLower(string(text)), "already exist")):
		// PyPI: 400 "File already exists"; pypiserver: 409 "... already exists".
		x.logf("index: %s is already there (%s); counted as uploaded", a.Name, resp.Status)
		return nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("the index %s refused the upload of %s (%s): the token in %s is wrong, expired, or not allowed to upload %s. Make an API token for the project, export it as %s and re-run",
			x.url, a.Name, reason, EnvIndexToken, wheels.Name, EnvIndexToken)
	}
	return fmt.Errorf("the index %s refused %s: %s", x.url, a.Name, reason)
}

var (
	htmlTitle = regexp.MustCompile(`(?is)<title>(.*?)</title>`)
	htmlTag   = regexp.MustCompile(`(?s)<[^>]*>`)
	htmlCode  = regexp.MustCompile(`(?is)<(style|script|head)[^>]*>.*?</(style|script|head)>`)
	spaces    = regexp.MustCompile(`\s+`)
)

// firstLine is the gist of an error body: its first line, or for an HTML
// page its text (the title first), shortened.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "<") {
		title := ""
		if m := htmlTitle.FindStringSubmatch(s); m != nil {
			title = strings.TrimSpace(html.UnescapeString(htmlTag.ReplaceAllString(m[1], "")))
		}
		text := htmlTag.ReplaceAllString(htmlCode.ReplaceAllString(s, " "), " ")
		text = strings.TrimSpace(spaces.ReplaceAllString(html.UnescapeString(text), " "))
		if title != "" {
			text = strings.TrimSpace(strings.TrimPrefix(text, title))
			text = title + ": " + text
		}
		s = text
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// metaFields maps core metadata headers onto the upload API's form fields.
var metaFields = map[string]string{
	"Metadata-Version": "metadata_version", "Name": "name", "Version": "version",
	"Summary": "summary", "License": "license", "Requires-Python": "requires_python",
	"Requires-Dist": "requires_dist", "Home-page": "home_page", "Author": "author",
	"Classifier": "classifiers", "Description-Content-Type": "description_content_type",
}

type field struct{ k, v string }

// parseMetadata reads the RFC 822 headers of core metadata (the body, a
// long description, is not used: ours has none).
func parseMetadata(meta []byte) []field {
	var out []field
	sc := bufio.NewScanner(bytes.NewReader(meta))
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if f, ok := metaFields[k]; ok {
			out = append(out, field{f, strings.TrimSpace(v)})
		}
	}
	return out
}

// form builds the multipart body in memory (the files are a few MB).
func form(a Asset, meta []field, filetype, pyversion string) (io.Reader, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	fields := append([]field{
		{":action", "file_upload"},
		{"protocol_version", "1"},
		{"filetype", filetype},
		{"pyversion", pyversion},
		{"sha256_digest", a.SHA256},
	}, meta...)
	for _, f := range fields {
		if err := w.WriteField(f.k, f.v); err != nil {
			return nil, "", err
		}
	}
	part, err := w.CreateFormFile("content", a.Name)
	if err != nil {
		return nil, "", err
	}
	f, err := os.Open(a.Path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	if _, err := io.Copy(part, f); err != nil {
		return nil, "", err
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return &buf, w.FormDataContentType(), nil
}
