package ghrelease

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/metalplug/metalplug/ci/release"
)

const ghToken = "ghp_TESTtoken0123456789abcdefABCDEF"

// connect is a client of the fake's repository o/r presenting token.
func connect(t *testing.T, f *fakeGitHub, token string) release.GitHub {
	t.Helper()
	g, err := Connect(release.Config{GitHubAPI: f.apiURL(), GitHubUpload: f.uploadURL(), GitHubToken: token}, "o", "r")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// status is the HTTP status of an answer other than a success, or 0 when
// err is not one.
func status(err error) int {
	var er *release.APIError
	if errors.As(err, &er) {
		return er.Status
	}
	return 0
}

func tempFile(t *testing.T, name, text string) *os.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestClientSpeaksTheAPI goes through every call against a fake that
// answers as GitHub does: a draft found through the list (the by-tag lookup
// hides drafts), GitHub's 422s as APIErrors with their details, assets
// with and without digests, and the published release found by its tag.
func TestClientSpeaksTheAPI(t *testing.T) {
	ctx := context.Background()
	f := newFakeGitHub(t, ghToken)
	head := "0123456789abcdef0123456789abcdef01234567"
	f.commits[head] = true
	g := connect(t, f, ghToken)

	if rel, err := g.FindRelease(ctx, "v0.1.0"); rel != nil || err != nil {
		t.Fatalf("FindRelease with no release: %+v, %v", rel, err)
	}
	if sha, err := g.CommitSHA(ctx, head); sha != head || err != nil {
		t.Fatalf("CommitSHA(head) = %q, %v", sha, err)
	}
	if _, err := g.CommitSHA(ctx, "refs/tags/v0.1.0"); status(err) != http.StatusUnprocessableEntity {
		t.Fatalf("CommitSHA of a tag GitHub lacks: %v, want a 422", err)
	}
	rel, err := g.CreateRelease(ctx, "v0.1.0", head, "notes")
	if err != nil || !rel.Draft || rel.Tag != "v0.1.0" || rel.ID == 0 {
		t.Fatalf("CreateRelease = %+v, %v", rel, err)
	}
	if r := f.only(t); r.Target != head || !r.Draft {
		t.Fatalf("on GitHub: %+v", r)
	}
	if found, err := g.FindRelease(ctx, "v0.1.0"); err != nil || found == nil || found.ID != rel.ID || !found.Draft {
		t.Fatalf("FindRelease of the draft = %+v, %v", found, err)
	}
	_, err = g.CreateRelease(ctx, "v0.1.0", head, "notes")
	var er *release.APIError
	if !errors.As(err, &er) || er.Status != 422 || len(er.Details) != 1 || er.Details[0] != "Release tag_name already_exists" || !strings.HasPrefix(er.Request, "POST http://") {
		t.Fatalf("CreateRelease again: %#v", err)
	}

	data := strings.Repeat("wheel bytes ", 1000)
	size, err := g.UploadAsset(ctx, rel.ID, "a.whl", "application/zip", tempFile(t, "a.whl", data))
	if err != nil || size != int64(len(data)) {
		t.Fatalf("UploadAsset = %d, %v", size, err)
	}
	list, err := g.Assets(ctx, rel.ID)
	if err != nil || len(list) != 1 {
		t.Fatalf("Assets = %+v, %v", list, err)
	}
	if a := list[0]; a.Name != "a.whl" || a.Size != int64(len(data)) || a.State != "uploaded" || a.Digest != "sha256:"+hexSum([]byte(data)) {
		t.Errorf("asset %+v", a)
	}
	f.noDigest = true
	if list, _ := g.Assets(ctx, rel.ID); len(list) != 1 || list[0].Digest != "" {
		t.Errorf("without digests: %+v", list)
	}
	rc, err := g.DownloadAsset(ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != data {
		t.Errorf("DownloadAsset gave %d bytes, want the %d uploaded", len(got), len(data))
	}
	if err := g.DeleteAsset(ctx, list[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := g.DeleteAsset(ctx, list[0].ID); status(err) != http.StatusNotFound {
		t.Errorf("deleting it again: %v, want a 404", err)
	}
	if list, err := g.Assets(ctx, rel.ID); len(list) != 0 || err != nil {
		t.Errorf("after the delete: %+v, %v", list, err)
	}

	pub, err := g.Publish(ctx, rel.ID)
	if err != nil || pub.Draft || pub.URL != "https://github.com/o/r/releases/tag/v0.1.0" {
		t.Fatalf("Publish = %+v, %v", pub, err)
	}
	before := f.requests
	if found, err := g.FindRelease(ctx, "v0.1.0"); err != nil || found == nil || found.Draft || f.requests != before+1 {
		t.Fatalf("FindRelease of the published release = %+v, %v, in %d requests", found, err, f.requests-before)
	}
	if sha, err := g.CommitSHA(ctx, "refs/tags/v0.1.0"); sha != head || err != nil {
		t.Errorf("the tag publishing made: %q, %v", sha, err)
	}
}

// TestRefusalsAndBrokenConnections: a bad token is a 401 APIError with
// GitHub's message; an upload whose connection drops is not an APIError.
func TestRefusalsAndBrokenConnections(t *testing.T) {
	ctx := context.Background()
	f := newFakeGitHub(t, ghToken)
	_, err := connect(t, f, "wrong-token").FindRelease(ctx, "v0.1.0")
	var er *release.APIError
	if !errors.As(err, &er) || er.Status != 401 || !strings.HasPrefix(er.Message, "Bad credentials") {
		t.Fatalf("with a wrong token: %#v", err)
	}
	g := connect(t, f, ghToken)
	f.commits["c"] = true
	rel, err := g.CreateRelease(ctx, "v0.1.0", "c", "")
	if err != nil {
		t.Fatal(err)
	}
	f.breakUpload = 1
	_, err = g.UploadAsset(ctx, rel.ID, "a.whl", "application/zip", tempFile(t, "a.whl", strings.Repeat("x", 1<<16)))
	if err == nil || status(err) != 0 {
		t.Fatalf("a dropped upload: %#v, want an error that is not an APIError", err)
	}
	if a := f.only(t).Assets; len(a) != 1 || a[0].State != "starter" {
		t.Errorf("after the dropped upload: %+v", a)
	}
}

// TestReleaseThroughTheClient runs a whole release (package ci/release)
// through this client against the fake: published with its asset and
// SHA256SUMS, then a re-run that uploads nothing again; a bad token is
// named and never printed.
func TestReleaseThroughTheClient(t *testing.T) {
	f := newFakeGitHub(t, ghToken)
	root := repo(t, "0.1.0")
	f.commits[gitT(t, root, "rev-parse", "HEAD")] = true
	var log bytes.Buffer
	run := func(token string) error {
		t.Helper()
		log.Reset()
		err := release.Run(context.Background(), release.Config{
			Root: root, Tag: "v0.1.0", Publish: true, Repo: "o/r",
			GitHubAPI: f.apiURL(), GitHubUpload: f.uploadURL(), GitHubToken: token, IndexToken: "unused-index-token",
			ConnectGitHub: Connect, Log: &log,
			// One asset that is not for the index, so no index is needed.
			Build: func(ctx context.Context, root, out string, logf func(string, ...any)) ([]string, error) {
				p := filepath.Join(out, "NOTES.txt")
				if err := os.MkdirAll(out, 0o755); err != nil {
					return nil, err
				}
				return []string{p}, os.WriteFile(p, []byte("release notes\n"), 0o644)
			},
		})
		all := log.String()
		if err != nil {
			all += "\n" + err.Error()
		}
		if strings.Contains(all, token) {
			t.Fatalf("the token leaked into the output:\n%s", all)
		}
		return err
	}
	err := run("ghp_WRONGtoken0123456789abcdefABCDEF")
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), release.EnvGitHubToken) || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("with a bad token: %v", err)
	}
	if err := run(ghToken); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	rel := f.only(t)
	if rel.Draft || len(rel.Assets) != 2 || f.uploads != 2 {
		t.Fatalf("release %+v after %d uploads: want it published with NOTES.txt and SHA256SUMS", rel, f.uploads)
	}
	if err := run(ghToken); err != nil {
		t.Fatalf("re-run: %v\n%s", err, log.String())
	}
	if f.uploads != 2 || !strings.Contains(log.String(), "already on the release") {
		t.Errorf("the re-run uploaded %d assets again:\n%s", f.uploads-2, log.String())
	}
}

// repo makes a git work tree at version ver with one commit, clean.
func repo(t *testing.T, ver string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"pyproject.toml": "[project]\nname = \"metalplug\"\nversion = \"" + ver + "\"\n",
		".gitignore":     "/dist/\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitT(t, dir, "init", "-q", "-b", "main")
	gitT(t, dir, "add", ".")
	gitT(t, dir, "commit", "-q", "-m", "first")
	return dir
}

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
