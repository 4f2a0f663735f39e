package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// GitHub is the part of GitHub's REST API a release uses, for one
// repository. An answer other than a success comes back as an *APIError;
// any other error means the request or its answer did not get through.
//
// The client that speaks the API (go-github) lives in the tools module
// (tools/ghrelease), so that the library's module does not list it; `go
// tool mage release` runs tools/cmd/release, which sets
// Config.ConnectGitHub to it.
type GitHub interface {
	// FindRelease returns the release of tag, drafts included, or nil when
	// there is none.
	FindRelease(ctx context.Context, tag string) (*Release, error)
	// CommitSHA returns the commit ref (a commit SHA, or refs/tags/<tag>)
	// names on GitHub.
	CommitSHA(ctx context.Context, ref string) (string, error)
	// CreateRelease creates a draft release of tag, named tag, at commit.
	CreateRelease(ctx context.Context, tag, commit, body string) (*Release, error)
	// Assets lists the assets of the release.
	Assets(ctx context.Context, release int64) ([]RemoteAsset, error)
	// DeleteAsset deletes an asset.
	DeleteAsset(ctx context.Context, asset int64) error
	// UploadAsset uploads f as the release's asset name and returns the
	// size GitHub stored.
	UploadAsset(ctx context.Context, release int64, name, mediaType string, f *os.File) (int64, error)
	// DownloadAsset reads an asset's bytes.
	DownloadAsset(ctx context.Context, asset int64) (io.ReadCloser, error)
	// Publish turns a draft release into a published one.
	Publish(ctx context.Context, release int64) (*Release, error)
}

// Release is a GitHub release, published or a draft.
type Release struct {
	ID    int64
	Tag   string
	Draft bool
	// URL is the release's page.
	URL string
}

// RemoteAsset is a release asset as the API reports it.
type RemoteAsset struct {
	ID   int64
	Name string
	Size int64
	// State is "uploaded", or "starter" for an upload that broke off.
	State string
	// Digest is "sha256:<hex>", which GitHub computes on upload; servers
	// that do not (older GitHub Enterprise) leave it empty.
	Digest string
}

// APIError is an answer of the API other than a success.
type APIError struct {
	// Request is the method and URL.
	Request string
	// Status is the HTTP status code.
	Status int
	// Message is GitHub's message.
	Message string
	// Details are the errors a 422 lists, each as "resource field code
	// message".
	Details []string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("%d %s", e.Status, e.Message)
	if e.Request != "" {
		s = e.Request + ": " + s
	}
	if len(e.Details) > 0 {
		s += " (" + strings.Join(e.Details, "; ") + ")"
	}
	return s
}

// gitHub is what a release does on GitHub, through the API.
type gitHub struct {
	api         GitHub
	owner, repo string
	logf        func(string, ...any)
}

// apiStatus is the status of an answer of the API, or 0 when err is none.
func apiStatus(err error) (*APIError, int) {
	var er *APIError
	if errors.As(err, &er) {
		return er, er.Status
	}
	return nil, 0
}

// explain turns a failed API call into a message naming the problem and
// the fix.
func (g *gitHub) explain(what string, err error) error {
	er, status := apiStatus(err)
	switch status {
	case http.StatusUnauthorized:
		return fmt.Errorf("%s: GitHub refused %s (401 %s): the token is wrong, expired or revoked. Make a new one that may write releases of %s/%s, export it as %s and re-run",
			what, EnvGitHubToken, er.Message, g.owner, g.repo, EnvGitHubToken)
	case http.StatusForbidden, http.StatusNotFound:
		return fmt.Errorf("%s: GitHub answered %d (%s): %s cannot see or write releases of %s/%s. Check %s (owner/name) and give the token Contents: read and write",
			what, status, er.Message, EnvGitHubToken, g.owner, g.repo, EnvRepository)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// ensureRelease finds the release of tag (published or a draft) or creates
// it as a draft at commit head.
func (g *gitHub) ensureRelease(ctx context.Context, tag, head, version string) (*Release, error) {
	if rel, err := g.find(ctx, tag); err != nil || rel != nil {
		return rel, err
	}
	// The tag, if GitHub already has it, must be the commit being released.
	if sha, err := g.api.CommitSHA(ctx, "refs/tags/"+tag); err == nil && sha != head {
		return nil, fmt.Errorf("tag %s already exists on GitHub at %s, not at the commit being released (%s): to finish releasing %s, check out that commit and re-run; otherwise bump the version in pyproject.toml and release a new tag",
			tag, short(sha), short(head), tag)
	}
	if _, err := g.api.CommitSHA(ctx, head); err != nil {
		if _, status := apiStatus(err); status == http.StatusNotFound || status == http.StatusUnprocessableEntity {
			return nil, fmt.Errorf("commit %s is not on GitHub (%s/%s): push it first (git push origin HEAD), then re-run", short(head), g.owner, g.repo)
		}
		return nil, g.explain("checking that the commit is on GitHub", err)
	}
	rel, err := g.api.CreateRelease(ctx, tag, head,
		fmt.Sprintf("metalplug %s: the sdist, one wheel per supported TensorFlow release, and SHA256SUMS.", version))
	if err == nil {
		g.logf("created draft release %s (id %d)", tag, rel.ID)
		return rel, nil
	}
	if er, status := apiStatus(err); status == http.StatusUnprocessableEntity {
		// "already_exists": a release of this tag appeared since the lookup
		// (another run); take it over.
		if rel, ferr := g.find(ctx, tag); ferr == nil && rel != nil {
			g.logf("release %s already exists (id %d); completing it", tag, rel.ID)
			return rel, nil
		}
		return nil, fmt.Errorf("GitHub refused to create release %s (422 %s) and no release of that tag can be found: delete what holds the tag on GitHub, or release a new version", tag, describeErrors(er))
	}
	return nil, g.explain("creating release "+tag, err)
}

func describeErrors(er *APIError) string {
	return strings.Join(append([]string{er.Message}, er.Details...), "; ")
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// find returns the release of tag, drafts included.
func (g *gitHub) find(ctx context.Context, tag string) (*Release, error) {
	rel, err := g.api.FindRelease(ctx, tag)
	if err != nil {
		return nil, g.explain("looking up release "+tag, err)
	}
	if rel != nil {
		what := "release"
		if rel.Draft {
			what = "draft release"
		}
		g.logf("found %s %s (id %d)", what, tag, rel.ID)
	}
	return rel, nil
}

func (g *gitHub) assets(ctx context.Context, id int64) (map[string]RemoteAsset, error) {
	list, err := g.api.Assets(ctx, id)
	if err != nil {
		return nil, g.explain("listing the release's assets", err)
	}
	out := map[string]RemoteAsset{}
	for _, a := range list {
		out[a.Name] = a
	}
	return out, nil
}

// ensureAsset uploads a unless the release has it with the same size and
// sha256. A broken or different copy on a draft is replaced; on a published
// release it is an error, since people may have downloaded it.
func (g *gitHub) ensureAsset(ctx context.Context, rel *Release, a Asset) error {
	have, err := g.assets(ctx, rel.ID)
	if err != nil {
		return err
	}
	if old, ok := have[a.Name]; ok {
		same, err := g.sameAsset(ctx, old, a)
		if err != nil {
			return err
		}
		if same {
			g.logf("GitHub: %s is already on the release (same size and sha256)", a.Name)
			return nil
		}
		if !rel.Draft {
			return fmt.Errorf("release %s is published and its asset %s differs from this build (%d bytes, %s; built %d bytes, sha256:%s): delete that asset on GitHub if it is wrong and re-run, or release a new version",
				rel.Tag, a.Name, old.Size, orNone(old.Digest), a.Size, a.SHA256)
		}
		g.logf("GitHub: replacing %s on the draft (state %s, %d bytes, differs from this build)", a.Name, old.State, old.Size)
		if err := g.api.DeleteAsset(ctx, old.ID); err != nil {
			return g.explain("deleting the stale asset "+a.Name, err)
		}
	}
	f, err := os.Open(a.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	size, err := g.api.UploadAsset(ctx, rel.ID, a.Name, mediaType(a.Name), f)
	if err != nil {
		if er, _ := apiStatus(err); er == nil {
			return fmt.Errorf("uploading %s to GitHub release %s failed: the connection broke (%v). Check the network", a.Name, rel.Tag, err)
		}
		return g.explain("uploading "+a.Name+" to GitHub release "+rel.Tag, err)
	}
	if size != a.Size {
		return fmt.Errorf("GitHub stored %s with %d bytes, not %d", a.Name, size, a.Size)
	}
	g.logf("GitHub: uploaded %s", a.Name)
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "no digest"
	}
	return s
}

// sameAsset compares by size and sha256: GitHub's digest when it gives one,
// else the downloaded bytes.
func (g *gitHub) sameAsset(ctx context.Context, old RemoteAsset, a Asset) (bool, error) {
	if old.State != "" && old.State != "uploaded" {
		return false, nil
	}
	if old.Size != a.Size {
		return false, nil
	}
	if d, ok := strings.CutPrefix(old.Digest, "sha256:"); ok {
		return d == a.SHA256, nil
	}
	rc, err := g.api.DownloadAsset(ctx, old.ID)
	if err != nil {
		return false, g.explain("downloading "+a.Name+" to compare it", err)
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		return false, fmt.Errorf("downloading %s to compare it: %w", a.Name, err)
	}
	return hex.EncodeToString(h.Sum(nil)) == a.SHA256, nil
}

func mediaType(name string) string {
	switch {
	case strings.HasSuffix(name, ".tar.gz"):
		return "application/gzip"
	case strings.HasSuffix(name, ".whl"):
		return "application/zip"
	}
	return "text/plain; charset=utf-8"
}

// publish turns the draft into a release, the last step.
func (g *gitHub) publish(ctx context.Context, rel *Release) error {
	if !rel.Draft {
		return nil
	}
	out, err := g.api.Publish(ctx, rel.ID)
	if err != nil {
		return g.explain("publishing the draft release "+rel.Tag, err)
	}
	*rel = *out
	return nil
}
