package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/setup/probe"
	"github.com/metalplug/metalplug/wheels"
)

const (
	ghToken  = "ghp_TESTtoken0123456789abcdefABCDEF"
	pypToken = "pypi-AgEIcHlwaS5vcmcCJDk5OTk5OTk5LTk5OTk"
)

// world is a clean repository at 0.1.0, a fake GitHub that has its commit,
// a fake index, and a config that publishes to them.
type world struct {
	root  string
	head  string
	gh    *fakeGitHub
	index *fakeIndex
	build *fakeBuild
	log   bytes.Buffer
}

func newWorld(t *testing.T) *world {
	w := &world{root: repo(t, "0.1.0"), gh: newFakeGitHub(t, ghToken), index: newFakeIndex(t, pypToken), build: &fakeBuild{}}
	w.head = gitT(t, w.root, "rev-parse", "HEAD")
	w.gh.commits[w.head] = true
	return w
}

func (w *world) config(tag string, publish bool) Config {
	return Config{
		Root: w.root, Tag: tag, Publish: publish, Out: filepath.Join(w.root, "dist", "release", tag),
		Repo:        "o/r",
		GitHubToken: ghToken, ConnectGitHub: w.gh.connect,
		IndexURL: w.index.url(), IndexToken: pypToken,
		Build: w.build.build, Log: &w.log,
	}
}

// run runs the release and checks that no token, in any form, is in what
// it printed or returned.
func (w *world) run(t *testing.T, c Config) error {
	t.Helper()
	err := Run(context.Background(), c)
	all := w.log.String()
	if err != nil {
		all += "\n" + err.Error()
	}
	for _, secret := range []string{ghToken, pypToken, basicAuth("__token__", pypToken), basicAuth("__token__", ghToken)} {
		if strings.Contains(all, secret) {
			t.Fatalf("a token leaked into the output:\n%s", all)
		}
	}
	return err
}

// complete checks the end state: one published release holding exactly the
// built files, each once with the right bytes, and the index holding the
// sdist and wheels.
func (w *world) complete(t *testing.T, tag string) {
	t.Helper()
	rel := w.gh.only(t)
	if rel.Draft || rel.Tag != tag || rel.Target != w.head {
		t.Fatalf("release %+v: want published %s at %s", rel, tag, w.head)
	}
	out := filepath.Join(w.root, "dist", "release", tag)
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"SHA256SUMS": hexSum(sums)}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, name, _ := strings.Cut(line, "  ")
		want[name] = sum
	}
	if len(want) != 4 {
		t.Fatalf("SHA256SUMS lists %d files, want 3:\n%s", len(want)-1, sums)
	}
	got := map[string]string{}
	for _, a := range rel.Assets {
		if _, dup := got[a.Name]; dup {
			t.Errorf("asset %s is on the release twice", a.Name)
		}
		if a.State != "uploaded" {
			t.Errorf("asset %s is in state %s", a.Name, a.State)
		}
		got[a.Name] = hexSum(a.Data)
	}
	for name, sum := range want {
		if got[name] != sum {
			t.Errorf("asset %s: sha256 %q on GitHub, want %s", name, got[name], sum)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the release has %d assets, want %d", len(got), len(want))
	}
	w.index.mu.Lock()
	defer w.index.mu.Unlock()
	if len(w.index.files) != 3 {
		t.Errorf("the index has %d files, want the sdist and 2 wheels", len(w.index.files))
	}
	for name, data := range w.index.files {
		if want[name] != hexSum(data) {
			t.Errorf("index file %s differs from the built one", name)
		}
	}
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestDryRunBuildsAndPublishesNothing(t *testing.T) {
	w := newWorld(t)
	c := w.config("v0.1.0", false)
	c.GitHubToken, c.IndexToken = "", ""
	if err := w.run(t, c); err != nil {
		t.Fatal(err)
	}
	if w.gh.requests != 0 || w.index.posts != 0 {
		t.Fatalf("a dry run made %d GitHub and %d index requests", w.gh.requests, w.index.posts)
	}
	out := w.log.String()
	for _, want := range []string{"dry run", "nothing was published", "go tool mage release v0.1.0 true", "GITHUB_TOKEN is not set", "metalplug-0.1.0.post219-py3-none-manylinux_2_34_x86_64.whl", "SHA256SUMS"} {
		if !strings.Contains(out, want) {
			t.Errorf("the dry run does not say %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(c.Out, "SHA256SUMS")); err != nil {
		t.Error(err)
	}
}

func TestDryRunReportsWhatWouldBlockPublishing(t *testing.T) {
	w := newWorld(t)
	write(t, w.root, "README.md", "changed\n")
	err := w.run(t, w.config("v0.2.0", false))
	t.Logf("message: %v", err)
	if err == nil || !strings.Contains(err.Error(), "the assets are built") || !strings.Contains(err.Error(), "not clean") || !strings.Contains(err.Error(), "does not match the version") {
		t.Fatalf("dry run on a dirty tree with a wrong tag: %v", err)
	}
	if w.build.calls != 1 || w.gh.requests != 0 {
		t.Fatalf("the dry run built %d times and made %d requests; want 1 and 0", w.build.calls, w.gh.requests)
	}
}

func TestPublishAndRerunMakesNoDuplicates(t *testing.T) {
	w := newWorld(t)
	if err := w.run(t, w.config("v0.1.0", true)); err != nil {
		t.Fatalf("%v\n%s", err, w.log.String())
	}
	w.complete(t, "v0.1.0")
	uploads, posts := w.gh.uploads, w.index.posts
	if uploads != 4 || posts != 3 {
		t.Fatalf("%d asset uploads and %d index uploads, want 4 and 3", uploads, posts)
	}
	// A second run finds the release, skips every asset and counts the
	// index's "File already exists" as done.
	w.log.Reset()
	if err := w.run(t, w.config("v0.1.0", true)); err != nil {
		t.Fatalf("re-run: %v\n%s", err, w.log.String())
	}
	w.complete(t, "v0.1.0")
	if w.gh.uploads != uploads {
		t.Errorf("the re-run uploaded %d assets again", w.gh.uploads-uploads)
	}
	if !strings.Contains(w.log.String(), "already there") || !strings.Contains(w.log.String(), "already on the release") {
		t.Errorf("the re-run does not say what it skipped:\n%s", w.log.String())
	}
}

func TestWithoutDigestsAssetsAreComparedByContent(t *testing.T) {
	w := newWorld(t)
	w.gh.noDigest = true
	if err := w.run(t, w.config("v0.1.0", true)); err != nil {
		t.Fatal(err)
	}
	uploads := w.gh.uploads
	if err := w.run(t, w.config("v0.1.0", true)); err != nil {
		t.Fatal(err)
	}
	if w.gh.uploads != uploads {
		t.Errorf("the re-run uploaded %d assets again", w.gh.uploads-uploads)
	}
	w.complete(t, "v0.1.0")
}

func TestMissingTokenStopsBeforeBuilding(t *testing.T) {
	w := newWorld(t)
	c := w.config("v0.1.0", true)
	c.GitHubToken = ""
	err := w.run(t, c)
	t.Logf("message: %v", err)
	if err == nil {
		t.Fatal("published without a GitHub token")
	}
	for _, want := range []string{"GITHUB_TOKEN is not set", "Nothing was built or published", "go tool mage release v0.1.0 true"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if w.build.calls != 0 || w.gh.requests != 0 {
		t.Errorf("built %d times and made %d requests before saying the token is missing", w.build.calls, w.gh.requests)
	}
	c = w.config("v0.1.0", true)
	c.IndexToken = ""
	if err := w.run(t, c); err == nil || !strings.Contains(err.Error(), "PYPI_TOKEN is not set") {
		t.Fatalf("without an index token: %v", err)
	}
	if err := w.run(t, w.config("v0.1.0", true)); err != nil {
		t.Fatalf("with both tokens: %v", err)
	}
	w.complete(t, "v0.1.0")
}

// TestPublishNeedsAGitHubClient: a publishing run without one (the
// package used other than through tools/cmd/release) stops before it
// builds, and says how to publish.
func TestPublishNeedsAGitHubClient(t *testing.T) {
	w := newWorld(t)
	c := w.config("v0.1.0", true)
	c.ConnectGitHub = nil
	err := w.run(t, c)
	t.Logf("message: %v", err)
	if err == nil || !strings.Contains(err.Error(), "no GitHub client") || !strings.Contains(err.Error(), "go tool mage release v0.1.0 true") {
		t.Fatalf("publishing without a GitHub client: %v", err)
	}
	if w.build.calls != 0 {
		t.Error("built although nothing could be published")
	}
	c.Publish = false
	if err := w.run(t, c); err != nil {
		t.Fatalf("a dry run needs no GitHub client: %v", err)
	}
}

func TestBadTokensAreNamedAndNeverPrinted(t *testing.T) {
	w := newWorld(t)
	w.gh.token = "the-token-github-wants" // so ghToken gets a 401 that echoes it
	err := w.run(t, w.config("v0.1.0", true))
	t.Logf("message: %v", err)
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "GITHUB_TOKEN") || !strings.Contains(err.Error(), "Bad credentials") {
		t.Fatalf("with a bad GitHub token: %v", err)
	}
	if !strings.Contains(err.Error(), redacted) {
		t.Errorf("the echoed token was not visibly scrubbed: %v", err)
	}
	w.gh.token = ghToken
	w.index.token = "the-token-the-index-wants"
	err = w.run(t, w.config("v0.1.0", true))
	t.Logf("message: %v", err)
	if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "PYPI_TOKEN") || !strings.Contains(err.Error(), "re-run") {
		t.Fatalf("with a bad index token: %v", err)
	}
	if rel := w.gh.only(t); !rel.Draft {
		t.Error("the release was published although the index upload failed")
	}
	w.index.token = pypToken
	if err := w.run(t, w.config("v0.1.0", true)); err != nil {
		t.Fatalf("after fixing the token: %v", err)
	}
	w.complete(t, "v0.1.0")
}

func TestDirtyTreeIsRefused(t *testing.T) {
	w := newWorld(t)
	write(t, w.root, "README.md", "changed\n")
	write(t, w.root, "new.go", "package x\n")
	err := w.run(t, w.config("v0.1.0", true))
	t.Logf("message: %v", err)
	if err == nil || !strings.Contains(err.Error(), "not clean") || !strings.Contains(err.Error(), "README.md") || !strings.Contains(err.Error(), "new.go") || !strings.Contains(err.Error(), "git stash -u") {
		t.Fatalf("dirty tree: %v", err)
	}
	if w.build.calls != 0 || w.gh.requests != 0 {
		t.Fatal("a dirty tree was built or published")
	}
	gitT(t, w.root, "add", ".")
	gitT(t, w.root, "commit", "-q", "-m", "second")
	w.head = gitT(t, w.root, "rev-parse", "HEAD")
	w.gh.commits[w.head] = true
	if err := w.run(t, w.config("v0.1.0", true)); err != nil {
		t.Fatal(err)
	}
	w.complete(t, "v0.1.0")
}

func TestTagMustMatchTheVersion(t *testing.T) {
	w := newWorld(t)
	for _, tag := range []string{"v0.2.0", "0.1.0", "v0.1"} {
		err := w.run(t, w.config(tag, true))
		t.Logf("message: %v", err)
		if err == nil || !strings.Contains(err.Error(), "pyproject.toml") || !strings.Contains(err.Error(), "v0.1.0") {
			t.Errorf("tag %s: %v", tag, err)
		}
	}
	if w.build.calls != 0 {
		t.Fatal("built for a mismatched tag")
	}
	if err := w.run(t, w.config("v0.1.0", true)); err != nil {
		t.Fatal(err)
	}
	w.complete(t, "v0.1.0")
}

func TestLocalTagAtAnotherCommit(t *testing.T) {
	w := newWorld(t)
	gitT(t, w.root, "tag", "v0.1.0")
	tagged := w.head
	write(t, w.root, "README.md", "later\n")
	gitT(t, w.root, "commit", "-q", "-am", "later")
	err := w.run(t, w.config("v0.1.0", true))
	t.Logf("message: %v", err)
	if err == nil || !strings.Contains(err.Error(), "already exists") || !strings.Contains(err.Error(), tagged[:12]) || !strings.Contains(err.Error(), "git checkout v0.1.0") {
		t.Fatalf("tag at another commit: %v", err)
	}
	if w.build.calls != 0 {
		t.Fatal("built although the tag names another commit")
	}
	gitT(t, w.root, "checkout", "-q", "v0.1.0")
	if err := w.run(t, w.config("v0.1.0", true)); err != nil {
		t.Fatal(err)
	}
	w.complete(t, "v0.1.0")
}

func TestTagOnGitHubAtAnotherCommit(t *testing.T) {
	w := newWorld(t)
	w.gh.tags["v0.1.0"] = "0123456789abcdef0123456789abcdef01234567"
	err := w.run(t, w.config("v0.1.0", true))
	t.Logf("message: %v", err)
	if err == nil || !strings.Contains(err.Error(), "already exists on GitHub") || !strings.Contains(err.Error(), "0123456789ab") {
		t.Fatalf("tag on GitHub at another commit: %v", err)
	}
	if len(w.gh.releases) != 0 {
		t.Fatal("a release was created for a tag at another commit")
	}
}

func TestUnpushedCommitIsNamed(t *testing.T) {
	w := newWorld(t)
	delete(w.gh.commits, w.head)
	err := w.run(t, w.config("v0.1.0", true))
	t.Logf("message: %v", err)
	if err == nil || !strings.Contains(err.Error(), "not on GitHub") || !strings.Contains(err.Error(), "git push") {
		t.Fatalf("unpushed commit: %v", err)
	}
	w.gh.commits[w.head] = true
	if err := w.run(t, w.config("v0.1.0", true)); err != nil {
		t.Fatal(err)
	}
	w.complete(t, "v0.1.0")
}

// TestExistingReleaseIsCompleted: a release of the tag already exists (a
// draft left by an earlier run, hidden from the list once, so the create
// gets GitHub's 422 already_exists); the run takes it over.
func TestExistingReleaseIsCompleted(t *testing.T) {
	w := newWorld(t)
	w.gh.releases = append(w.gh.releases, &fakeRelease{ID: 7, Tag: "v0.1.0", Target: w.head, Draft: true})
	w.gh.hideDraftsOnce = true
	if err := w.run(t, w.config("v0.1.0", true)); err != nil {
		t.Fatalf("%v\n%s", err, w.log.String())
	}
	if !strings.Contains(w.log.String(), "already exists") {
		t.Errorf("the 422 path was not taken:\n%s", w.log.String())
	}
	w.complete(t, "v0.1.0")
}

func TestPublishedReleaseWithDifferentAssetIsNotOverwritten(t *testing.T) {
	w := newWorld(t)
	w.gh.releases = append(w.gh.releases, &fakeRelease{ID: 7, Tag: "v0.1.0", Target: w.head,
		Assets: []*fakeAsset{{ID: 8, Name: "metalplug-0.1.0.tar.gz", State: "uploaded", Data: []byte("something else")}}})
	err := w.run(t, w.config("v0.1.0", true))
	t.Logf("message: %v", err)
	if err == nil || !strings.Contains(err.Error(), "differs") || !strings.Contains(err.Error(), "metalplug-0.1.0.tar.gz") {
		t.Fatalf("differing asset on a published release: %v", err)
	}
	if a := w.gh.releases[0].Assets[0]; string(a.Data) != "something else" {
		t.Fatal("a published asset was replaced")
	}
}

// TestNetworkFailsMidUpload: the connection drops during the second asset
// (GitHub keeps a "starter" asset for it); the run says so, the release
// stays a draft, and a re-run replaces the broken asset and finishes.
func TestNetworkFailsMidUpload(t *testing.T) {
	w := newWorld(t)
	w.gh.breakUpload = 2
	err := w.run(t, w.config("v0.1.0", true))
	t.Logf("message: %v", err)
	if err == nil {
		t.Fatal("the run succeeded though the connection dropped")
	}
	for _, want := range []string{"connection broke", "metalplug-0.1.0.post219", "re-run `go tool mage release v0.1.0 true`"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	rel := w.gh.only(t)
	if !rel.Draft || len(rel.Assets) != 2 || rel.Assets[1].State != "starter" {
		t.Fatalf("after the failure: draft %v, assets %+v", rel.Draft, rel.Assets)
	}
	if w.index.posts != 0 {
		t.Fatal("uploaded to the index before GitHub had every asset")
	}
	w.gh.breakUpload = 0
	w.log.Reset()
	if err := w.run(t, w.config("v0.1.0", true)); err != nil {
		t.Fatalf("re-run: %v\n%s", err, w.log.String())
	}
	if !strings.Contains(w.log.String(), "replacing") {
		t.Errorf("the re-run did not say it replaced the broken asset:\n%s", w.log.String())
	}
	w.complete(t, "v0.1.0")
}

func TestRepositoryFromRemote(t *testing.T) {
	for remote, want := range map[string]string{
		"https://github.com/metalplug/metalplug.git": "metalplug/metalplug",
		"git@github.com:metalplug/metalplug.git":     "metalplug/metalplug",
		"https://github.com/a/b":                     "a/b",
	} {
		dir := repo(t, "0.1.0")
		gitT(t, dir, "remote", "add", "origin", remote)
		o, r, err := (&Config{Root: dir}).repository()
		if err != nil || o+"/"+r != want {
			t.Errorf("%s: %s/%s, %v; want %s", remote, o, r, err, want)
		}
	}
	dir := repo(t, "0.1.0")
	if _, _, err := (&Config{Root: dir}).repository(); err == nil || !strings.Contains(err.Error(), "GITHUB_REPOSITORY") {
		t.Errorf("no remote: %v", err)
	}
}

func TestRedactorScrubsEveryForm(t *testing.T) {
	r := newRedactor(Config{GitHubToken: ghToken, IndexToken: pypToken + "/+="})
	for _, s := range []string{ghToken, pypToken + "/+=", basicAuth("__token__", pypToken+"/+="), url.QueryEscape(pypToken + "/+=")} {
		if got := r.redact("before " + s + " after"); strings.Contains(got, s) {
			t.Errorf("%q survived: %q", s, got)
		}
	}
	if got := newRedactor(Config{GitHubToken: "abc"}).redact("abc"); got != "abc" {
		t.Errorf("a 3-character token scrubbed text: %q", got)
	}
}

func TestErrorBodyGist(t *testing.T) {
	html := "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html>\n<head>\n<title>Error: 403 Forbidden</title>\n<style type=\"text/css\">html {background-color: #eee;}</style>\n</head><body><h1>Error: 403 Forbidden</h1>\n<p>Sorry, the requested URL <tt>&#039;http://127.0.0.1/&#039;</tt> caused an error:</p>\n<pre>Authorization failed.</pre></body></html>"
	got := firstLine(html)
	t.Logf("%s", got)
	if !strings.HasPrefix(got, "Error: 403 Forbidden: ") || !strings.Contains(got, "Authorization failed.") || strings.Contains(got, "<") || strings.Contains(got, "background") || strings.Contains(got, "&#039;") {
		t.Errorf("firstLine(html) = %q", got)
	}
	if got := firstLine("400 File already exists ('x.whl').\nSee https://pypi.org/help"); got != "400 File already exists ('x.whl')." {
		t.Errorf("firstLine(text) = %q", got)
	}
}

func TestFromEnv(t *testing.T) {
	for _, k := range []string{EnvGitHubToken, EnvRepository, EnvGitHubAPI, EnvGitHubUpload, EnvIndexToken, EnvTwinePass, EnvIndexUser, EnvIndexURL, EnvTwineURL} {
		t.Setenv(k, "")
	}
	t.Setenv(EnvGitHubToken, "gh-token-1234")
	t.Setenv(EnvTwinePass, "twine-password-1234")
	t.Setenv(EnvTwineURL, "https://test.pypi.org/legacy/")
	c := FromEnv(".", "v0.1.0", true)
	if c.GitHubToken != "gh-token-1234" || c.IndexToken != "twine-password-1234" || c.IndexURL != "https://test.pypi.org/legacy/" || !c.Publish {
		t.Errorf("FromEnv: %+v", c)
	}
	t.Setenv(EnvIndexToken, "pypi-token-1234")
	t.Setenv(EnvIndexURL, "http://127.0.0.1:8080/")
	if c := FromEnv(".", "v0.1.0", false); c.IndexToken != "pypi-token-1234" || c.IndexURL != "http://127.0.0.1:8080/" {
		t.Errorf("PYPI_TOKEN and METALPLUG_INDEX_URL take precedence: %+v", c)
	}
	c = Config{GitHubAPI: "https://ghe.example.com/api/v3/"}
	c.defaults()
	if c.GitHubUpload != "https://ghe.example.com/api/uploads/" || c.IndexURL != DefaultIndexURL || c.IndexUser != "__token__" {
		t.Errorf("defaults: %+v", c)
	}
	c = Config{}
	c.defaults()
	if c.GitHubAPI != "https://api.github.com/" || c.GitHubUpload != "https://uploads.github.com/" {
		t.Errorf("defaults: %+v", c)
	}
}

// The wheels built on other machines (the macOS arm64 wheel, from a Mac
// runner) join the release and the index; a directory that holds none, or
// a wheel of another version, stops the run before anything is published.
func TestWheelsBuiltElsewhereJoinTheRelease(t *testing.T) {
	w := newWorld(t)
	dir := t.TempDir()
	c := w.config("v0.1.0", true)
	c.Wheels = dir
	if err := w.run(t, c); err == nil || !strings.Contains(err.Error(), "holds no wheel") || w.gh.requests != 0 {
		t.Fatalf("an empty directory of wheels: %v, %d GitHub requests; want a refusal before any", err, w.gh.requests)
	}
	write(t, dir, "metalplug-0.0.9-py3-none-macosx_12_0_arm64.whl", "old\n")
	if err := w.run(t, c); err == nil || !strings.Contains(err.Error(), "not a wheel of metalplug 0.1.0") || w.gh.requests != 0 {
		t.Fatalf("a wheel of another version: %v, %d GitHub requests; want a refusal before any", err, w.gh.requests)
	}
	os.Remove(filepath.Join(dir, "metalplug-0.0.9-py3-none-macosx_12_0_arm64.whl"))
	lib := filepath.Join(t.TempDir(), "libmetalplug.dylib")
	write(t, filepath.Dir(lib), filepath.Base(lib), "not really a library\n")
	r := &probe.Report{GOOS: "darwin", GOARCH: "arm64"}
	r.TensorFlow.Distribution, r.TensorFlow.Version = "tensorflow", "2.21.0"
	mac, err := wheels.WriteWheel(dir, wheels.Spec{Version: "0.1.0", Platform: "macosx_12_0_arm64", Lib: lib, Report: r})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, mac))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.run(t, c); err != nil {
		t.Fatalf("%v\n%s", err, w.log.String())
	}
	rel := w.gh.only(t)
	found := false
	for _, a := range rel.Assets {
		found = found || (a.Name == mac && bytes.Equal(a.Data, data))
	}
	sums, err := os.ReadFile(filepath.Join(c.Out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	w.index.mu.Lock()
	_, indexed := w.index.files[mac]
	w.index.mu.Unlock()
	if !found || !indexed || !strings.Contains(string(sums), mac) {
		t.Errorf("the Mac wheel: on the release %v, on the index %v, in SHA256SUMS %v; want all three", found, indexed, strings.Contains(string(sums), mac))
	}
}
