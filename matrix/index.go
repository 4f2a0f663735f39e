package matrix

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// DefaultIndex is PyPI's Simple API, which the matrix asks for the newest
// versions. pip installs from the same index, so what is resolved here is
// what the venv gets.
const DefaultIndex = "https://pypi.org/simple/"

// simpleJSON is PEP 691's JSON form of the Simple API, version 1. API 1.1
// (PEP 700) adds the versions list the resolution reads.
const simpleJSON = "application/vnd.pypi.simple.v1+json"

// Index reads projects from a PEP 691 index, each once per Index.
type Index struct {
	// URL is the index's base ending in /simple/; DefaultIndex when empty.
	URL string
	// Client makes the requests; one with a 2-minute timeout when nil (a
	// project page for tf-nightly is over a megabyte).
	Client   *http.Client
	projects map[string]*Project
}

// Project is a project page of the Simple JSON API.
type Project struct {
	Name string `json:"name"`
	Meta struct {
		APIVersion string `json:"api-version"`
	} `json:"meta"`
	// Versions is every version the project has (API 1.1), in no useful
	// order: PyPI sorts it as strings.
	Versions []string `json:"versions"`
	Files    []File   `json:"files"`
}

// File is one distribution file of a project.
type File struct {
	Filename       string `json:"filename"`
	URL            string `json:"url"`
	RequiresPython string `json:"requires-python"`
	Yanked         Yanked `json:"yanked"`
	Size           int64  `json:"size"`
}

// Yanked is PEP 691's yanked key: false, true, or a reason string (which
// means yanked).
type Yanked struct {
	Yanked bool
	Reason string
}

// UnmarshalJSON reads either form.
func (y *Yanked) UnmarshalJSON(b []byte) error {
	var flag bool
	if err := json.Unmarshal(b, &flag); err == nil {
		*y = Yanked{Yanked: flag}
		return nil
	}
	var reason string
	if err := json.Unmarshal(b, &reason); err != nil {
		return fmt.Errorf("yanked is %s, neither a boolean nor a string", b)
	}
	*y = Yanked{Yanked: true, Reason: reason}
	return nil
}

// MarshalJSON writes the reason when there is one, else the flag.
func (y Yanked) MarshalJSON() ([]byte, error) {
	if y.Yanked && y.Reason != "" {
		return json.Marshal(y.Reason)
	}
	return json.Marshal(y.Yanked)
}

// NotFoundError says the index has no such project.
type NotFoundError struct{ Name, URL string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s: the index has no project %s", e.URL, e.Name)
}

var nonAlnum = regexp.MustCompile(`[-_.]+`)

// normalize is PEP 503's project-name normalization, which the Simple API's
// URLs use.
func normalize(name string) string { return strings.ToLower(nonAlnum.ReplaceAllString(name, "-")) }

// Project fetches a project's page.
func (ix *Index) Project(name string) (*Project, error) {
	key := normalize(name)
	if p, ok := ix.projects[key]; ok {
		return p, nil
	}
	base := ix.URL
	if base == "" {
		base = DefaultIndex
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	url := base + key + "/"
	client := ix.Client
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Minute}
	}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	// Ask for JSON only: an index that cannot serve it must say so (406)
	// rather than hand back HTML this code would misread.
	req.Header.Set("Accept", simpleJSON)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("asking the package index for %s: %w", name, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, &NotFoundError{Name: name, URL: url}
	case resp.StatusCode != http.StatusOK:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return nil, fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != simpleJSON {
		return nil, fmt.Errorf("%s answered %q, not %s: is it a PEP 691 index?", url, ct, simpleJSON)
	}
	var p Project
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	// PEP 691: a client must refuse a major version it does not know.
	if major, _, _ := strings.Cut(p.Meta.APIVersion, "."); major != "1" {
		return nil, fmt.Errorf("%s speaks Simple API %q; this reads version 1", url, p.Meta.APIVersion)
	}
	if ix.projects == nil {
		ix.projects = map[string]*Project{}
	}
	ix.projects[key] = &p
	return &p, nil
}

// errNoWheel is wrapped by resolution errors that mean "nothing installable
// here", as opposed to the index failing.
var errNoWheel = errors.New("no installable wheel")
