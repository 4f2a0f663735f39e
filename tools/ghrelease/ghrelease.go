// Package ghrelease is the client of GitHub's REST API a release uses
// (release.GitHub), on go-github.
package ghrelease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/metalplug/metalplug/ci/release"
)

// client is release.GitHub for one repository.
type client struct {
	c           *github.Client
	http        *http.Client
	owner, repo string
}

// Connect is release.Config.ConnectGitHub: a client of owner/repo at
// c.GitHubAPI and c.GitHubUpload, authenticated with c.GitHubToken, over
// c.HTTPClient().
func Connect(c release.Config, owner, repo string) (release.GitHub, error) {
	hc := c.HTTPClient()
	gc := github.NewClient(hc).WithAuthToken(c.GitHubToken)
	base, err := url.Parse(withSlash(c.GitHubAPI))
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", release.EnvGitHubAPI, c.GitHubAPI, err)
	}
	upload, err := url.Parse(withSlash(c.GitHubUpload))
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", release.EnvGitHubUpload, c.GitHubUpload, err)
	}
	gc.BaseURL, gc.UploadURL = base, upload
	return &client{c: gc, http: hc, owner: owner, repo: repo}, nil
}

func withSlash(u string) string {
	if strings.HasSuffix(u, "/") {
		return u
	}
	return u + "/"
}

// apiError makes GitHub's answer other than a success a *release.APIError;
// other errors (the connection, rate limits) pass as they are.
func apiError(err error) error {
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil {
		return err
	}
	out := &release.APIError{Status: er.Response.StatusCode, Message: er.Message}
	if req := er.Response.Request; req != nil && req.URL != nil {
		u := *req.URL
		u.RawQuery = ""
		out.Request = req.Method + " " + u.String()
	}
	for _, e := range er.Errors {
		out.Details = append(out.Details, strings.TrimSpace(e.Resource+" "+e.Field+" "+e.Code+" "+e.Message))
	}
	return out
}

func releaseOf(r *github.RepositoryRelease) *release.Release {
	return &release.Release{ID: r.GetID(), Tag: r.GetTagName(), Draft: r.GetDraft(), URL: r.GetHTMLURL()}
}

// FindRelease looks the tag up (GET .../releases/tags/ does not return
// drafts), then in the list of releases, where drafts are.
func (g *client) FindRelease(ctx context.Context, tag string) (*release.Release, error) {
	rel, _, err := g.c.Repositories.GetReleaseByTag(ctx, g.owner, g.repo, tag)
	if err == nil {
		return releaseOf(rel), nil
	}
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusNotFound {
		return nil, apiError(err)
	}
	opts := &github.ListOptions{PerPage: 100}
	for {
		list, resp, err := g.c.Repositories.ListReleases(ctx, g.owner, g.repo, opts)
		if err != nil {
			return nil, apiError(err)
		}
		for _, r := range list {
			if r.GetTagName() == tag {
				return releaseOf(r), nil
			}
		}
		if resp.NextPage == 0 {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
}

func (g *client) CommitSHA(ctx context.Context, ref string) (string, error) {
	sha, _, err := g.c.Repositories.GetCommitSHA1(ctx, g.owner, g.repo, ref, "")
	return sha, apiError(err)
}

func (g *client) CreateRelease(ctx context.Context, tag, commit, body string) (*release.Release, error) {
	rel, _, err := g.c.Repositories.CreateRelease(ctx, g.owner, g.repo, &github.RepositoryRelease{
		TagName:         github.String(tag),
		TargetCommitish: github.String(commit),
		Name:            github.String(tag),
		Body:            github.String(body),
		Draft:           github.Bool(true),
	})
	if err != nil {
		return nil, apiError(err)
	}
	return releaseOf(rel), nil
}

// remoteAsset is an asset as the API reports it; go-github v62 has no field
// for digest ("sha256:<hex>", which GitHub computes on upload).
type remoteAsset struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	State  string `json:"state"`
	Digest string `json:"digest"`
}

func (g *client) Assets(ctx context.Context, id int64) ([]release.RemoteAsset, error) {
	var out []release.RemoteAsset
	for page := 1; ; {
		req, err := g.c.NewRequest("GET", fmt.Sprintf("repos/%s/%s/releases/%d/assets?per_page=100&page=%d", g.owner, g.repo, id, page), nil)
		if err != nil {
			return nil, err
		}
		var list []remoteAsset
		resp, err := g.c.Do(ctx, req, &list)
		if err != nil {
			return nil, apiError(err)
		}
		for _, a := range list {
			out = append(out, release.RemoteAsset(a))
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		page = resp.NextPage
	}
}

func (g *client) DeleteAsset(ctx context.Context, id int64) error {
	_, err := g.c.Repositories.DeleteReleaseAsset(ctx, g.owner, g.repo, id)
	return apiError(err)
}

func (g *client) UploadAsset(ctx context.Context, id int64, name, mediaType string, f *os.File) (int64, error) {
	up, _, err := g.c.Repositories.UploadReleaseAsset(ctx, g.owner, g.repo, id,
		&github.UploadOptions{Name: name, MediaType: mediaType}, f)
	if err != nil {
		return 0, apiError(err)
	}
	return int64(up.GetSize()), nil
}

func (g *client) DownloadAsset(ctx context.Context, id int64) (io.ReadCloser, error) {
	rc, _, err := g.c.Repositories.DownloadReleaseAsset(ctx, g.owner, g.repo, id, g.http)
	if err != nil {
		return nil, apiError(err)
	}
	return rc, nil
}

func (g *client) Publish(ctx context.Context, id int64) (*release.Release, error) {
	out, _, err := g.c.Repositories.EditRelease(ctx, g.owner, g.repo, id, &github.RepositoryRelease{Draft: github.Bool(false)})
	if err != nil {
		return nil, apiError(err)
	}
	return releaseOf(out), nil
}
