package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/google/go-github/v62/github"
)

// gitHub is the release side of the GitHub REST API for one repository.
type gitHub struct {
	c           *github.Client
	http        *http.Client
	owner, repo string
	logf        func(string, ...any)
}

func newGitHub(c Config, owner, repo string, logf func(string, ...any)) (*gitHub, error) {
	client := github.NewClient(c.httpClient()).WithAuthToken(c.GitHubToken)
	base, err := url.Parse(withSlash(c.GitHubAPI))
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", EnvGitHubAPI, c.GitHubAPI, err)
	}
	upload, err := url.Parse(withSlash(c.GitHubUpload))
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", EnvGitHubUpload, c.GitHubUpload, err)
	}
	client.BaseURL, client.UploadURL = base, upload
	return &gitHub{c: client, http: c.httpClient(), owner: owner, repo: repo, logf: logf}, nil
}

func withSlash(u string) string {
	if strings.HasSuffix(u, "/") {
		return u
	}
	return u + "/"
}

// explain turns a failed API call into a message naming the problem and
// the fix.
func (g *gitHub) explain(what string, err error) error {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		switch er.Response.StatusCode {
		case http.StatusUnauthorized:
			return fmt.Errorf("%s: GitHub refused %s (401 %s): the token is wrong, expired or revoked. Make a new one that may write releases of %s/%s, export it as %s and re-run",
				what, EnvGitHubToken, er.Message, g.owner, g.repo, EnvGitHubToken)
		case http.StatusForbidden, http.StatusNotFound:
			return fmt.Errorf("%s: GitHub answered %d (%s): %s cannot see or write releases of %s/%s. Check %s (owner/name) and give the token Contents: read and write",
				what, er.Response.StatusCode, er.Message, EnvGitHubToken, g.owner, g.repo, EnvRepository)
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// ensureRelease finds the release of tag (published or a draft) or creates
// it as a draft at commit head.
func (g *gitHub) ensureRelease(ctx context.Context, tag, head, version string) (*github.RepositoryRelease, error) {
	if rel, err := g.find(ctx, tag); err != nil || rel != nil {
		return rel, err
	}
	// The tag, if GitHub already has it, must be the commit being released.
	if sha, _, err := g.c.Repositories.GetCommitSHA1(ctx, g.owner, g.repo, "refs/tags/"+tag, ""); err == nil && sha != head {
		return nil, fmt.Errorf("tag %s already exists on GitHub at %s, not at the commit being released (%s): to finish releasing %s, check out that commit and re-run; otherwise bump the version in pyproject.toml and release a new tag",
			tag, short(sha), short(head), tag)
	}
	if _, _, err := g.c.Repositories.GetCommitSHA1(ctx, g.owner, g.repo, head, ""); err != nil {
		var er *github.ErrorResponse
		if errors.As(err, &er) && er.Response != nil && (er.Response.StatusCode == http.StatusNotFound || er.Response.StatusCode == http.StatusUnprocessableEntity) {
			return nil, fmt.Errorf("commit %s is not on GitHub (%s/%s): push it first (git push origin HEAD), then re-run", short(head), g.owner, g.repo)
		}
		return nil, g.explain("checking that the commit is on GitHub", err)
	}
	rel, _, err := g.c.Repositories.CreateRelease(ctx, g.owner, g.repo, &github.RepositoryRelease{
		TagName:         github.String(tag),
		TargetCommitish: github.String(head),
		Name:            github.String(tag),
		Body:            github.String(fmt.Sprintf("metalplug %s: the sdist, one wheel per supported TensorFlow release, and SHA256SUMS.", version)),
		Draft:           github.Bool(true),
	})
	if err == nil {
		g.logf("created draft release %s (id %d)", tag, rel.GetID())
		return rel, nil
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusUnprocessableEntity {
		// "already_exists": a release of this tag appeared since the lookup
		// (another run); take it over.
		if rel, ferr := g.find(ctx, tag); ferr == nil && rel != nil {
			g.logf("release %s already exists (id %d); completing it", tag, rel.GetID())
			return rel, nil
		}
		return nil, fmt.Errorf("GitHub refused to create release %s (422 %s) and no release of that tag can be found: delete what holds the tag on GitHub, or release a new version", tag, describeErrors(er))
	}
	return nil, g.explain("creating release "+tag, err)
}

func describeErrors(er *github.ErrorResponse) string {
	parts := []string{er.Message}
	for _, e := range er.Errors {
		parts = append(parts, strings.TrimSpace(e.Resource+" "+e.Field+" "+e.Code+" "+e.Message))
	}
	return strings.Join(parts, "; ")
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// find returns the release of tag, drafts included (GET .../releases/tags/
// does not return drafts, so they are looked for in the list).
func (g *gitHub) find(ctx context.Context, tag string) (*github.RepositoryRelease, error) {
	rel, _, err := g.c.Repositories.GetReleaseByTag(ctx, g.owner, g.repo, tag)
	if err == nil {
		g.logf("found release %s (id %d)", tag, rel.GetID())
		return rel, nil
	}
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusNotFound {
		return nil, g.explain("looking up release "+tag, err)
	}
	opts := &github.ListOptions{PerPage: 100}
	for {
		list, resp, err := g.c.Repositories.ListReleases(ctx, g.owner, g.repo, opts)
		if err != nil {
			return nil, g.explain("listing releases", err)
		}
		for _, r := range list {
			if r.GetTagName() == tag {
				g.logf("found draft release %s (id %d)", tag, r.GetID())
				return r, nil
			}
		}
		if resp.NextPage == 0 {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
}

// remoteAsset is a release asset as the API reports it; go-github v62 has no
// field for digest ("sha256:<hex>", which GitHub computes on upload).
type remoteAsset struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	State  string `json:"state"`
	Digest string `json:"digest"`
}

func (g *gitHub) assets(ctx context.Context, id int64) (map[string]remoteAsset, error) {
	out := map[string]remoteAsset{}
	for page := 1; ; {
		req, err := g.c.NewRequest("GET", fmt.Sprintf("repos/%s/%s/releases/%d/assets?per_page=100&page=%d", g.owner, g.repo, id, page), nil)
		if err != nil {
			return nil, err
		}
		var list []remoteAsset
		resp, err := g.c.Do(ctx, req, &list)
		if err != nil {
			return nil, g.explain("listing the release's assets", err)
		}
		for _, a := range list {
			out[a.Name] = a
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		page = resp.NextPage
	}
}

// ensureAsset uploads a unless the release has it with the same size and
// sha256. A broken or different copy on a draft is replaced; on a published
// release it is an error, since people may have downloaded it.
func (g *gitHub) ensureAsset(ctx context.Context, rel *github.RepositoryRelease, a Asset) error {
	have, err := g.assets(ctx, rel.GetID())
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
		if !rel.GetDraft() {
			return fmt.Errorf("release %s is published and its asset %s differs from this build (%d bytes, %s; built %d bytes, sha256:%s): delete that asset on GitHub if it is wrong and re-run, or release a new version",
				rel.GetTagName(), a.Name, old.Size, orNone(old.Digest), a.Size, a.SHA256)
		}
		g.logf("GitHub: replacing %s on the draft (state %s, %d bytes, differs from this build)", a.Name, old.State, old.Size)
		if _, err := g.c.Repositories.DeleteReleaseAsset(ctx, g.owner, g.repo, old.ID); err != nil {
			return g.explain("deleting the stale asset "+a.Name, err)
		}
	}
	f, err := os.Open(a.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	up, _, err := g.c.Repositories.UploadReleaseAsset(ctx, g.owner, g.repo, rel.GetID(),
		&github.UploadOptions{Name: a.Name, MediaType: mediaType(a.Name)}, f)
	if err != nil {
		var er *github.ErrorResponse
		if !errors.As(err, &er) {
			return fmt.Errorf("uploading %s to GitHub release %s failed: the connection broke (%v). Check the network", a.Name, rel.GetTagName(), err)
		}
		return g.explain("uploading "+a.Name+" to GitHub release "+rel.GetTagName(), err)
	}
	if up.GetSize() != int(a.Size) {
		return fmt.Errorf("GitHub stored %s with %d bytes, not %d", a.Name, up.GetSize(), a.Size)
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
func (g *gitHub) sameAsset(ctx context.Context, old remoteAsset, a Asset) (bool, error) {
	if old.State != "" && old.State != "uploaded" {
		return false, nil
	}
	if old.Size != a.Size {
		return false, nil
	}
	if d, ok := strings.CutPrefix(old.Digest, "sha256:"); ok {
		return d == a.SHA256, nil
	}
	rc, _, err := g.c.Repositories.DownloadReleaseAsset(ctx, g.owner, g.repo, old.ID, g.http)
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
func (g *gitHub) publish(ctx context.Context, rel *github.RepositoryRelease) error {
	if !rel.GetDraft() {
		return nil
	}
	out, _, err := g.c.Repositories.EditRelease(ctx, g.owner, g.repo, rel.GetID(), &github.RepositoryRelease{Draft: github.Bool(false)})
	if err != nil {
		return g.explain("publishing the draft release "+rel.GetTagName(), err)
	}
	*rel = *out
	return nil
}
