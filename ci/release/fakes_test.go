package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/wheels"
)

// fakeGitHub is GitHub's release API as the release sees it (the GitHub
// interface), keeping state in memory and answering as GitHub does: status
// codes and messages, drafts, "starter" assets for uploads that broke off.
// The client that speaks the API over HTTP is tested against GitHub's
// wire format in the tools module (tools/ghrelease).
type fakeGitHub struct {
	t     *testing.T
	token string

	mu       sync.Mutex
	releases []*fakeRelease
	nextID   int64
	commits  map[string]bool   // commits pushed
	tags     map[string]string // tag -> commit on GitHub
	uploads  int               // upload requests received
	requests int
	// breakUpload, when n > 0, makes the n-th upload request register a
	// "starter" asset, read part of the file and fail as a dropped
	// connection does.
	breakUpload int
	// noDigest leaves the digest out of the assets (older GitHub Enterprise).
	noDigest bool
	// hideDraftsOnce hides drafts from the next lookup, as a lagging
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
	return &fakeGitHub{t: t, token: token, nextID: 100, commits: map[string]bool{}, tags: map[string]string{}}
}

// connect is Config.ConnectGitHub: a client of o/r presenting c's token.
func (f *fakeGitHub) connect(c Config, owner, repo string) (GitHub, error) {
	if owner != "o" || repo != "r" {
		f.t.Errorf("connected to %s/%s, want o/r", owner, repo)
	}
	return &fakeClient{f: f, token: c.GitHubToken}, nil
}

// fakeClient is one connection to the fake, with its token.
type fakeClient struct {
	f     *fakeGitHub
	token string
}

// begin counts a request and checks its token; a wrong one gets 401, with
// the token echoed as a careless server would: the run must still never
// print it.
func (c *fakeClient) begin() (*fakeGitHub, error) {
	f := c.f
	f.mu.Lock()
	f.requests++
	if c.token != f.token {
		return f, &APIError{Request: "GET https://api.example/", Status: 401, Message: "Bad credentials (received Bearer " + c.token + ")"}
	}
	return f, nil
}

func notFound() error { return &APIError{Status: 404, Message: "Not Found"} }

func (f *fakeGitHub) releaseOf(r *fakeRelease) *Release {
	return &Release{ID: r.ID, Tag: r.Tag, Draft: r.Draft, URL: "https://github.com/o/r/releases/tag/" + r.Tag}
}

func (c *fakeClient) FindRelease(ctx context.Context, tag string) (*Release, error) {
	f, err := c.begin()
	defer f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	hide := f.hideDraftsOnce
	f.hideDraftsOnce = false
	for _, r := range f.releases {
		if r.Tag == tag && !(r.Draft && hide) {
			return f.releaseOf(r), nil
		}
	}
	return nil, nil
}

func (c *fakeClient) CommitSHA(ctx context.Context, ref string) (string, error) {
	f, err := c.begin()
	defer f.mu.Unlock()
	if err != nil {
		return "", err
	}
	sha := ""
	if tag, ok := strings.CutPrefix(ref, "refs/tags/"); ok {
		sha = f.tags[tag]
	} else if f.commits[ref] {
		sha = ref
	}
	if sha == "" {
		return "", &APIError{Status: 422, Message: "No commit found for SHA: " + ref}
	}
	return sha, nil
}

func (c *fakeClient) CreateRelease(ctx context.Context, tag, commit, body string) (*Release, error) {
	f, err := c.begin()
	defer f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	for _, r := range f.releases {
		if r.Tag == tag {
			return nil, &APIError{Status: 422, Message: "Validation Failed", Details: []string{"Release tag_name already_exists"}}
		}
	}
	f.nextID++
	r := &fakeRelease{ID: f.nextID, Tag: tag, Target: commit, Draft: true}
	f.releases = append(f.releases, r)
	return f.releaseOf(r), nil
}

func (c *fakeClient) Assets(ctx context.Context, release int64) ([]RemoteAsset, error) {
	f, err := c.begin()
	defer f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	r := f.release(release)
	if r == nil {
		return nil, notFound()
	}
	var out []RemoteAsset
	for _, a := range r.Assets {
		ra := RemoteAsset{ID: a.ID, Name: a.Name, Size: int64(len(a.Data)), State: a.State}
		if !f.noDigest && a.State == "uploaded" {
			ra.Digest = "sha256:" + hexSum(a.Data)
		}
		out = append(out, ra)
	}
	return out, nil
}

func (c *fakeClient) DeleteAsset(ctx context.Context, asset int64) error {
	f, err := c.begin()
	defer f.mu.Unlock()
	if err != nil {
		return err
	}
	for _, r := range f.releases {
		for i, a := range r.Assets {
			if a.ID == asset {
				r.Assets = append(r.Assets[:i], r.Assets[i+1:]...)
				return nil
			}
		}
	}
	return notFound()
}

func (c *fakeClient) UploadAsset(ctx context.Context, release int64, name, mediaType string, file *os.File) (int64, error) {
	f, err := c.begin()
	defer f.mu.Unlock()
	if err != nil {
		return 0, err
	}
	r := f.release(release)
	if r == nil {
		return 0, notFound()
	}
	if name == "" || mediaType == "" {
		return 0, &APIError{Status: 400, Message: "Bad Content-Type or name"}
	}
	for _, a := range r.Assets {
		if a.Name == name {
			return 0, &APIError{Status: 422, Message: "Validation Failed", Details: []string{"ReleaseAsset name already_exists"}}
		}
	}
	data, err := io.ReadAll(file)
	if err != nil {
		return 0, err
	}
	f.uploads++
	f.nextID++
	if f.breakUpload > 0 && f.uploads == f.breakUpload {
		// GitHub keeps a "starter" asset for an upload that broke off.
		r.Assets = append(r.Assets, &fakeAsset{ID: f.nextID, Name: name, State: "starter", Data: data[:len(data)/2]})
		return 0, fmt.Errorf("Post \"https://uploads.example/repos/o/r/releases/%d/assets?name=%s\": write: connection reset by peer", release, name)
	}
	r.Assets = append(r.Assets, &fakeAsset{ID: f.nextID, Name: name, State: "uploaded", Data: data})
	return int64(len(data)), nil
}

func (c *fakeClient) DownloadAsset(ctx context.Context, asset int64) (io.ReadCloser, error) {
	f, err := c.begin()
	defer f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	a := f.asset(asset)
	if a == nil {
		return nil, notFound()
	}
	return io.NopCloser(bytes.NewReader(bytes.Clone(a.Data))), nil
}

func (c *fakeClient) Publish(ctx context.Context, release int64) (*Release, error) {
	f, err := c.begin()
	defer f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	r := f.release(release)
	if r == nil {
		return nil, notFound()
	}
	r.Draft = false
	f.tags[r.Tag] = r.Target // publishing creates the tag
	return f.releaseOf(r), nil
}

func (f *fakeGitHub) release(id int64) *fakeRelease {
	for _, r := range f.releases {
		if r.ID == id {
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

// fakeIndex answers the legacy upload API as PyPI does: 200 for a new file,
// 400 "File already exists" for a name it has, 403 for a bad token (echoing
// the Authorization header it got, which the client must scrub).
type fakeIndex struct {
	srv   *httptest.Server
	user  string
	token string
	mu    sync.Mutex
	files map[string][]byte
	posts int
}

func newFakeIndex(t *testing.T, token string) *fakeIndex {
	x := &fakeIndex{user: "__token__", token: token, files: map[string][]byte{}}
	x.srv = httptest.NewServer(http.HandlerFunc(x.serve))
	t.Cleanup(x.srv.Close)
	return x
}

func (x *fakeIndex) url() string { return x.srv.URL + "/legacy/" }

func (x *fakeIndex) serve(w http.ResponseWriter, req *http.Request) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.posts++
	u, p, ok := req.BasicAuth()
	if !ok || u != x.user || p != x.token {
		http.Error(w, "403 Invalid or non-existent authentication information. See https://pypi.org/help/#invalid-auth for more information. (got "+req.Header.Get("Authorization")+")", 403)
		return
	}
	if err := req.ParseMultipartForm(64 << 20); err != nil {
		http.Error(w, "400 bad form: "+err.Error(), 400)
		return
	}
	for _, k := range []string{":action", "name", "version", "filetype", "pyversion", "sha256_digest", "metadata_version"} {
		if req.FormValue(k) == "" {
			http.Error(w, "400 missing "+k, 400)
			return
		}
	}
	f, h, err := req.FormFile("content")
	if err != nil {
		http.Error(w, "400 no content", 400)
		return
	}
	data, _ := io.ReadAll(f)
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != req.FormValue("sha256_digest") {
		http.Error(w, "400 The digest supplied does not match a digest calculated from the uploaded file.", 400)
		return
	}
	if _, ok := x.files[h.Filename]; ok {
		http.Error(w, "400 File already exists ('"+h.Filename+"', with blake2_256 hash 'x'). See https://pypi.org/help/#file-name-reuse for more information.", 400)
		return
	}
	x.files[h.Filename] = data
	w.WriteHeader(200)
}

// repo makes a git work tree at version ver with one commit, clean.
func repo(t *testing.T, ver string) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "pyproject.toml", "[project]\nname = \"metalplug\"\nversion = \""+ver+"\"\n")
	write(t, dir, "README.md", "x\n")
	write(t, dir, ".gitignore", "/build/\n/dist/\n")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.email=t@example.com", "-c", "user.name=t", "add", "."},
		{"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "first"},
	} {
		gitT(t, dir, args...)
	}
	return dir
}

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeBuild writes a small but real sdist (with PKG-INFO) and two real
// wheels (with METADATA and RECORD), the same bytes every time, and counts
// its calls.
type fakeBuild struct{ calls int }

func (b *fakeBuild) build(ctx context.Context, root, out string, logf func(string, ...any)) ([]string, error) {
	b.calls++
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	ver, err := wheels.ProjectVersion(root)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	gz.ModTime = time.Unix(315532800, 0)
	tw := tar.NewWriter(gz)
	pkg := []byte("Metadata-Version: 2.1\nName: metalplug\nVersion: " + ver + "\nSummary: test\n\n")
	tw.WriteHeader(&tar.Header{Name: "metalplug-" + ver + "/PKG-INFO", Mode: 0o644, Size: int64(len(pkg)), ModTime: time.Unix(315532800, 0)})
	tw.Write(pkg)
	tw.Close()
	gz.Close()
	sdist := filepath.Join(out, "metalplug-"+ver+".tar.gz")
	if err := os.WriteFile(sdist, buf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	paths := []string{sdist}
	lib := filepath.Join(out, "libmetalplug.so")
	os.WriteFile(lib, bytes.Repeat([]byte("not really a library "), 5000), 0o755)
	defer os.Remove(lib)
	for _, tf := range []string{"2.19.1", "2.21.0"} {
		wv, err := wheels.WheelVersion(ver, tf)
		if err != nil {
			return nil, err
		}
		r := &probe.Report{GOOS: "linux", GOARCH: "amd64"}
		r.TensorFlow.Distribution, r.TensorFlow.Version = "tensorflow-cpu", tf
		name, err := wheels.WriteWheel(out, wheels.Spec{Version: wv, Platform: "manylinux_2_34_x86_64", Lib: lib, Report: r})
		if err != nil {
			return nil, err
		}
		paths = append(paths, filepath.Join(out, name))
	}
	return paths, nil
}

// basicAuth is the header value a client sends for user:token.
func basicAuth(user, token string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + token))
}
