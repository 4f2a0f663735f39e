package ghrelease

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeGitHub answers the release endpoints of the REST API as GitHub does
// (status codes, error bodies, drafts hidden from the by-tag lookup, assets
// uploaded on a separate host path with ?name=), keeping state in memory.
type fakeGitHub struct {
	t     *testing.T
	token string
	srv   *httptest.Server

	mu       sync.Mutex
	releases []*fakeRelease
	nextID   int64
	commits  map[string]bool   // commits pushed
	tags     map[string]string // tag -> commit on GitHub
	uploads  int               // upload requests received
	requests int
	// breakUpload, when n > 0, makes the n-th upload request register a
	// "starter" asset, read part of the body and drop the connection.
	breakUpload int
	// noDigest leaves digest out of asset JSON (older GitHub Enterprise).
	noDigest bool
	// hideDraftsOnce hides drafts from the next release list, as a lagging
	// replica would: the create that follows gets 422 already_exists.
	hideDraftsOnce bool
}

type fakeRelease struct {
	ID     int64
	Tag    string
	Target string
	Draft  bool
	Assets []*fakeAsset
}

type fakeAsset struct {
	ID    int64
	Name  string
	State string
	Data  []byte
}

func newFakeGitHub(t *testing.T, token string) *fakeGitHub {
	f := &fakeGitHub{t: t, token: token, nextID: 100, commits: map[string]bool{}, tags: map[string]string{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// apiURL is given without a trailing slash on purpose: the client must add it.
func (f *fakeGitHub) apiURL() string    { return f.srv.URL + "/api/v3" }
func (f *fakeGitHub) uploadURL() string { return f.srv.URL + "/api/uploads/" }

func (f *fakeGitHub) writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func (f *fakeGitHub) fail(w http.ResponseWriter, code int, msg string, errs ...map[string]string) {
	body := map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest", "status": strconv.Itoa(code)}
	if len(errs) > 0 {
		body["errors"] = errs
	}
	f.writeJSON(w, code, body)
}

func (f *fakeGitHub) releaseJSON(r *fakeRelease) map[string]any {
	return map[string]any{
		"id": r.ID, "tag_name": r.Tag, "target_commitish": r.Target, "name": r.Tag, "draft": r.Draft,
		"html_url":   fmt.Sprintf("https://github.com/o/r/releases/tag/%s", r.Tag),
		"upload_url": fmt.Sprintf("%s/api/uploads/repos/o/r/releases/%d/assets{?name,label}", f.srv.URL, r.ID),
	}
}

func (f *fakeGitHub) assetJSON(a *fakeAsset) map[string]any {
	m := map[string]any{"id": a.ID, "name": a.Name, "size": len(a.Data), "state": a.State}
	if !f.noDigest && a.State == "uploaded" {
		sum := sha256.Sum256(a.Data)
		m["digest"] = "sha256:" + hex.EncodeToString(sum[:])
	}
	return m
}

var (
	reByTag    = regexp.MustCompile(`^/api/v3/repos/o/r/releases/tags/(.+)$`)
	reReleases = regexp.MustCompile(`^/api/v3/repos/o/r/releases$`)
	reRelease  = regexp.MustCompile(`^/api/v3/repos/o/r/releases/(\d+)$`)
	reAssets   = regexp.MustCompile(`^/api/v3/repos/o/r/releases/(\d+)/assets$`)
	reAsset    = regexp.MustCompile(`^/api/v3/repos/o/r/releases/assets/(\d+)$`)
	reCommit   = regexp.MustCompile(`^/api/v3/repos/o/r/commits/(.+)$`)
	reUpload   = regexp.MustCompile(`^/api/uploads/repos/o/r/releases/(\d+)/assets$`)
)

func (f *fakeGitHub) serve(w http.ResponseWriter, req *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	if got := req.Header.Get("Authorization"); got != "Bearer "+f.token {
		// A careless server that echoes what it was sent: the client must
		// still never print it.
		f.fail(w, http.StatusUnauthorized, "Bad credentials (received "+got+")")
		return
	}
	path := req.URL.EscapedPath()
	switch {
	case req.Method == "GET" && reByTag.MatchString(path):
		tag := reByTag.FindStringSubmatch(path)[1]
		for _, r := range f.releases {
			if r.Tag == tag && !r.Draft {
				f.writeJSON(w, 200, f.releaseJSON(r))
				return
			}
		}
		f.fail(w, 404, "Not Found")
	case req.Method == "GET" && reReleases.MatchString(path):
		var out []map[string]any
		for _, r := range f.releases {
			if r.Draft && f.hideDraftsOnce {
				continue
			}
			out = append(out, f.releaseJSON(r))
		}
		f.hideDraftsOnce = false
		f.writeJSON(w, 200, out)
	case req.Method == "POST" && reReleases.MatchString(path):
		var body struct {
			TagName         string `json:"tag_name"`
			TargetCommitish string `json:"target_commitish"`
			Draft           bool   `json:"draft"`
		}
		json.NewDecoder(req.Body).Decode(&body)
		for _, r := range f.releases {
			if r.Tag == body.TagName {
				f.fail(w, 422, "Validation Failed", map[string]string{"resource": "Release", "code": "already_exists", "field": "tag_name"})
				return
			}
		}
		f.nextID++
		r := &fakeRelease{ID: f.nextID, Tag: body.TagName, Target: body.TargetCommitish, Draft: body.Draft}
		f.releases = append(f.releases, r)
		if _, ok := f.tags[r.Tag]; !ok && !r.Draft {
			f.tags[r.Tag] = r.Target
		}
		f.writeJSON(w, 201, f.releaseJSON(r))
	case req.Method == "PATCH" && reRelease.MatchString(path):
		r := f.release(reRelease.FindStringSubmatch(path)[1])
		if r == nil {
			f.fail(w, 404, "Not Found")
			return
		}
		var body struct {
			Draft *bool `json:"draft"`
		}
		json.NewDecoder(req.Body).Decode(&body)
		if body.Draft != nil {
			r.Draft = *body.Draft
			if !r.Draft {
				f.tags[r.Tag] = r.Target // publishing creates the tag
			}
		}
		f.writeJSON(w, 200, f.releaseJSON(r))
	case req.Method == "GET" && reAssets.MatchString(path):
		r := f.release(reAssets.FindStringSubmatch(path)[1])
		if r == nil {
			f.fail(w, 404, "Not Found")
			return
		}
		out := []map[string]any{}
		for _, a := range r.Assets {
			out = append(out, f.assetJSON(a))
		}
		f.writeJSON(w, 200, out)
	case req.Method == "DELETE" && reAsset.MatchString(path):
		id, _ := strconv.ParseInt(reAsset.FindStringSubmatch(path)[1], 10, 64)
		for _, r := range f.releases {
			for i, a := range r.Assets {
				if a.ID == id {
					r.Assets = append(r.Assets[:i], r.Assets[i+1:]...)
					w.WriteHeader(204)
					return
				}
			}
		}
		f.fail(w, 404, "Not Found")
	case req.Method == "GET" && reAsset.MatchString(path):
		id, _ := strconv.ParseInt(reAsset.FindStringSubmatch(path)[1], 10, 64)
		if a := f.asset(id); a != nil && req.Header.Get("Accept") == "application/octet-stream" {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(a.Data)
			return
		}
		f.fail(w, 404, "Not Found")
	case req.Method == "GET" && reCommit.MatchString(path):
		ref := reCommit.FindStringSubmatch(path)[1]
		ref = strings.ReplaceAll(ref, "%2F", "/")
		sha := ""
		if tag, ok := strings.CutPrefix(ref, "refs/tags/"); ok {
			sha = f.tags[tag]
		} else if f.commits[ref] {
			sha = ref
		}
		if sha == "" {
			f.fail(w, 422, "No commit found for SHA: "+ref)
			return
		}
		w.WriteHeader(200)
		io.WriteString(w, sha)
	case req.Method == "POST" && reUpload.MatchString(path):
		r := f.release(reUpload.FindStringSubmatch(path)[1])
		if r == nil {
			f.fail(w, 404, "Not Found")
			return
		}
		name := req.URL.Query().Get("name")
		if name == "" || req.Header.Get("Content-Type") == "" || req.ContentLength <= 0 {
			f.fail(w, 400, "Bad Content-Length, Content-Type or name")
			return
		}
		for _, a := range r.Assets {
			if a.Name == name {
				f.fail(w, 422, "Validation Failed", map[string]string{"resource": "ReleaseAsset", "code": "already_exists", "field": "name"})
				return
			}
		}
		f.uploads++
		f.nextID++
		if f.breakUpload > 0 && f.uploads == f.breakUpload {
			// GitHub keeps a "starter" asset for an upload that broke off.
			r.Assets = append(r.Assets, &fakeAsset{ID: f.nextID, Name: name, State: "starter"})
			io.CopyN(io.Discard, req.Body, req.ContentLength/2)
			hj, ok := w.(http.Hijacker)
			if !ok {
				f.t.Fatal("cannot hijack")
			}
			conn, _, _ := hj.Hijack()
			conn.Close()
			return
		}
		data, _ := io.ReadAll(req.Body)
		a := &fakeAsset{ID: f.nextID, Name: name, State: "uploaded", Data: data}
		r.Assets = append(r.Assets, a)
		f.writeJSON(w, 201, f.assetJSON(a))
	default:
		f.fail(w, 404, "Not Found")
	}
}

func (f *fakeGitHub) release(id string) *fakeRelease {
	n, _ := strconv.ParseInt(id, 10, 64)
	for _, r := range f.releases {
		if r.ID == n {
			return r
		}
	}
	return nil
}

func (f *fakeGitHub) asset(id int64) *fakeAsset {
	for _, r := range f.releases {
		for _, a := range r.Assets {
			if a.ID == id {
				return a
			}
		}
	}
	return nil
}

// only returns the one release, failing the test otherwise.
func (f *fakeGitHub) only(t *testing.T) *fakeRelease {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.releases) != 1 {
		t.Fatalf("%d releases on the fake GitHub, want 1", len(f.releases))
	}
	return f.releases[0]
}
