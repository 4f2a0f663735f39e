// Package release publishes a version: it checks that the tree is committed
// and the tag names the version in pyproject.toml, builds the sdist and the
// universal wheel (reproducibly, dated by the commit), writes
// SHA256SUMS, and then (only when asked to publish) creates the GitHub
// release as a draft, uploads the assets, uploads the sdist and wheels to a
// package index (PyPI's legacy upload API), and publishes the draft last.
//
// Every step is idempotent, so a run that failed part-way is completed by
// running it again: the release is found by its tag, assets already there
// with the same size and sha256 are skipped, and files the index already has
// ("File already exists") count as uploaded. Tokens come from the
// environment and are scrubbed from everything the run prints or returns.
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
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/metalplug/metalplug/matrix"
	"github.com/metalplug/metalplug/wheels"
)

// Environment variables the release reads.
const (
	EnvGitHubToken  = "GITHUB_TOKEN"
	EnvRepository   = "GITHUB_REPOSITORY" // owner/name; else from the origin remote
	EnvGitHubAPI    = "GITHUB_API_URL"    // https://api.github.com/ by default
	EnvGitHubUpload = "GITHUB_UPLOAD_URL" // derived from the API URL by default
	EnvIndexToken   = "PYPI_TOKEN"        // else TWINE_PASSWORD
	EnvTwinePass    = "TWINE_PASSWORD"
	EnvIndexUser    = "TWINE_USERNAME" // __token__ by default
	EnvIndexURL     = "METALPLUG_INDEX_URL"
	EnvTwineURL     = "TWINE_REPOSITORY_URL"
	EnvWheels       = "METALPLUG_RELEASE_WHEELS" // a directory of wheels built on other machines
)

// DefaultIndexURL is PyPI's legacy upload endpoint.
const DefaultIndexURL = "https://upload.pypi.org/legacy/"

// Config is one release run.
type Config struct {
	// Root is the source tree, a git work tree.
	Root string
	// Tag is the release tag, v<version in pyproject.toml>.
	Tag string
	// Publish makes the run publish; otherwise it is a dry run that builds
	// and says what it would do, touching no network.
	Publish bool
	// Out is where the assets are built: <Root>/dist/release/<Tag> when empty.
	Out string

	// Repo is owner/name on GitHub.
	Repo string
	// GitHubAPI and GitHubUpload are the REST API and upload base URLs.
	GitHubAPI, GitHubUpload string
	GitHubToken             string
	// IndexURL is the package index's legacy upload endpoint.
	IndexURL, IndexUser, IndexToken string

	// Wheels is a directory of wheels built on other machines for this
	// release (the macOS arm64 wheel, built on a Mac runner): each *.whl in
	// it joins the assets. Named and empty, or holding a wheel of another
	// project or version, the run fails before it publishes anything.
	Wheels string

	// Build builds the assets into out and returns their paths: the sdist
	// and wheels (what goes to the index) first, in that order. BuildAssets
	// when nil.
	Build func(ctx context.Context, root, out string, logf func(string, ...any)) ([]string, error)
	// ConnectGitHub returns the client of GitHub's REST API for
	// repository owner/repo, at GitHubAPI and GitHubUpload with
	// GitHubToken (defaults filled in); a publishing run needs it. The one
	// that speaks to GitHub is the tools module's ghrelease.Connect, which
	// tools/cmd/release (what `go tool mage release` runs) sets.
	ConnectGitHub func(c Config, owner, repo string) (GitHub, error)
	// HTTP is the client for GitHub and the index; http.DefaultClient's
	// transport when nil.
	HTTP *http.Client
	// Log receives every line the run prints (os.Stderr when nil).
	Log io.Writer
}

// FromEnv fills a Config from the environment.
func FromEnv(root, tag string, publish bool) Config {
	c := Config{
		Root: root, Tag: tag, Publish: publish,
		Repo:         os.Getenv(EnvRepository),
		GitHubAPI:    os.Getenv(EnvGitHubAPI),
		GitHubUpload: os.Getenv(EnvGitHubUpload),
		GitHubToken:  os.Getenv(EnvGitHubToken),
		IndexURL:     firstNonEmpty(os.Getenv(EnvIndexURL), os.Getenv(EnvTwineURL)),
		IndexUser:    os.Getenv(EnvIndexUser),
		IndexToken:   firstNonEmpty(os.Getenv(EnvIndexToken), os.Getenv(EnvTwinePass)),
		Wheels:       os.Getenv(EnvWheels),
	}
	return c
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Asset is one file of the release.
type Asset struct {
	Path   string
	Name   string
	Size   int64
	SHA256 string
	// Index says whether it goes to the package index too (sdist, wheels).
	Index bool
}

// Run does the release. Its error, like everything it logs, never holds a
// token.
func Run(ctx context.Context, c Config) (err error) {
	r := newRedactor(c)
	logw := c.Log
	if logw == nil {
		logw = os.Stderr
	}
	logf := func(format string, args ...any) {
		fmt.Fprintln(logw, r.redact(fmt.Sprintf(format, args...)))
	}
	defer func() {
		if err != nil {
			err = errors.New(r.redact(err.Error()))
		}
	}()
	if err := c.defaults(); err != nil {
		return err
	}
	// Preflight: every check that needs no build. A publishing run stops
	// at the first failure; a dry run reports them all, builds anyway, and
	// fails at the end, so it shows both the assets and what blocks them.
	var blocked []string
	check := func(err error) error {
		if err == nil {
			return nil
		}
		if c.Publish {
			return err
		}
		blocked = append(blocked, err.Error())
		logf("dry run: a publishing run would stop here: %v", err)
		return nil
	}
	version, err := checkTag(c.Root, c.Tag)
	if err := check(err); err != nil {
		return err
	}
	if version == "" {
		if version, err = wheels.ProjectVersion(c.Root); err != nil {
			return err
		}
	}
	head, err := checkTree(c.Root, c.Tag)
	if err := check(err); err != nil {
		return err
	}
	if head == "" {
		if head, err = git(c.Root, "rev-parse", "HEAD"); err != nil {
			return fmt.Errorf("%s is not a git work tree with a commit: a release is built from a commit (%v)", c.Root, err)
		}
	}
	owner, repo, err := c.repository()
	if err := check(err); err != nil {
		return err
	}
	rerun := fmt.Sprintf("go tool mage release %s true", c.Tag)
	if c.Publish {
		if err := c.checkTokens(owner + "/" + repo); err != nil {
			return err
		}
		if c.ConnectGitHub == nil {
			return fmt.Errorf("cannot publish %s: this run has no GitHub client (Config.ConnectGitHub). Nothing was built or published; publish with `%s`", c.Tag, rerun)
		}
	}

	logf("release %s: version %s at commit %s", c.Tag, version, head[:12])
	build := c.Build
	if build == nil {
		build = BuildAssets
	}
	paths, err := build(ctx, c.Root, c.Out, logf)
	if err != nil {
		return fmt.Errorf("building the release assets: %w", err)
	}
	if c.Wheels != "" {
		more, err := builtElsewhere(c.Wheels, version)
		if err != nil {
			return err
		}
		paths = append(paths, more...)
	}
	assets, err := describe(paths)
	if err != nil {
		return err
	}
	sums, err := writeSums(c.Out, assets)
	if err != nil {
		return err
	}
	assets = append(assets, *sums)
	for _, a := range assets {
		logf("  %-64s %9d  sha256 %s", a.Name, a.Size, a.SHA256)
	}

	if !c.Publish {
		logf("dry run: would create (or complete) the GitHub release %s on %s and upload the %d files above, then upload %d of them to %s",
			c.Tag, orUnknown(owner, repo), len(assets), countIndex(assets), c.IndexURL)
		for _, miss := range c.missingTokens() {
			logf("note: %s is not set; a publishing run would stop until it is", miss)
		}
		if len(blocked) > 0 {
			return fmt.Errorf("dry run: the assets are built, but publishing %s would stop:\n  %s", c.Tag, strings.Join(blocked, "\n  "))
		}
		logf("dry run: nothing was published. To publish: %s", rerun)
		return nil
	}

	api, err := c.ConnectGitHub(c, owner, repo)
	if err != nil {
		return err
	}
	gh := &gitHub{api: api, owner: owner, repo: repo, logf: logf}
	rel, err := gh.ensureRelease(ctx, c.Tag, head, version)
	if err != nil {
		return err
	}
	for _, a := range assets {
		if err := gh.ensureAsset(ctx, rel, a); err != nil {
			return fmt.Errorf("%w\nWhat is already uploaded stays; re-run `%s` to finish the release", err, rerun)
		}
	}
	idx := &indexClient{url: c.IndexURL, user: c.IndexUser, token: c.IndexToken, http: c.HTTPClient(), logf: logf}
	for _, a := range assets {
		if !a.Index {
			continue
		}
		if err := idx.upload(ctx, a); err != nil {
			return fmt.Errorf("%w\nThe GitHub release stays a draft until the index has every file; re-run `%s` to finish", err, rerun)
		}
	}
	if err := gh.publish(ctx, rel); err != nil {
		return err
	}
	logf("released %s: %s", c.Tag, rel.URL)
	return nil
}

func orUnknown(owner, repo string) string {
	if owner == "" {
		return "(repository unknown: set GITHUB_REPOSITORY=owner/name)"
	}
	return owner + "/" + repo
}

func countIndex(as []Asset) int {
	n := 0
	for _, a := range as {
		if a.Index {
			n++
		}
	}
	return n
}

func (c *Config) defaults() error {
	if c.Root == "" {
		c.Root = "."
	}
	if c.Out == "" {
		c.Out = filepath.Join(c.Root, "dist", "release", c.Tag)
	}
	if c.GitHubAPI == "" {
		c.GitHubAPI = "https://api.github.com/"
	}
	if c.GitHubUpload == "" {
		if strings.TrimSuffix(c.GitHubAPI, "/") == "https://api.github.com" {
			c.GitHubUpload = "https://uploads.github.com/"
		} else {
			// GitHub Enterprise Server: https://HOST/api/v3/ uploads at https://HOST/api/uploads/.
			c.GitHubUpload = strings.TrimSuffix(strings.TrimSuffix(c.GitHubAPI, "/"), "/v3") + "/uploads/"
		}
	}
	if c.IndexURL == "" {
		c.IndexURL = DefaultIndexURL
	}
	if c.IndexUser == "" {
		c.IndexUser = "__token__"
	}
	return nil
}

// HTTPClient is c.HTTP, or a client on http.DefaultTransport's settings
// that waits at most 2 s for a 100 Continue and 30 minutes for a request.
func (c *Config) HTTPClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ExpectContinueTimeout = 2 * time.Second
	return &http.Client{Transport: t, Timeout: 30 * time.Minute}
}

func (c *Config) missingTokens() []string {
	var m []string
	if c.GitHubToken == "" {
		m = append(m, EnvGitHubToken)
	}
	if c.IndexToken == "" {
		m = append(m, EnvIndexToken+" (or "+EnvTwinePass+")")
	}
	return m
}

// checkTokens stops a publishing run before it builds anything when a token
// is missing.
func (c *Config) checkTokens(repo string) error {
	var msgs []string
	if c.GitHubToken == "" {
		msgs = append(msgs, fmt.Sprintf("%s is not set: export a token that may write releases of %s (a fine-grained token with Contents: read and write, or GitHub Actions' own)", EnvGitHubToken, repo))
	}
	if c.IndexToken == "" {
		msgs = append(msgs, fmt.Sprintf("%s is not set: export an API token of %s for project %s (or set %s, and %s when it is not an API token)", EnvIndexToken, c.IndexURL, wheels.Name, EnvTwinePass, EnvIndexUser))
	}
	if len(msgs) > 0 {
		return fmt.Errorf("cannot publish %s: %s. Nothing was built or published; set it and re-run `go tool mage release %s true`", c.Tag, strings.Join(msgs, "; "), c.Tag)
	}
	return nil
}

// tagPattern is v followed by a PEP 440 public version.
var tagPattern = regexp.MustCompile(`^v(\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?)$`)

// checkTag returns the version the tag names, which must be pyproject.toml's.
func checkTag(root, tag string) (string, error) {
	project, err := wheels.ProjectVersion(root)
	if err != nil {
		return "", err
	}
	m := tagPattern.FindStringSubmatch(tag)
	if m == nil {
		return "", fmt.Errorf("tag %q is not v<version> (v%s, say): pass the tag of the version in pyproject.toml", tag, project)
	}
	if m[1] != project {
		return "", fmt.Errorf("tag %s does not match the version in pyproject.toml (%s): release v%s, or set version = \"%s\" in pyproject.toml, commit, and re-run", tag, project, project, m[1])
	}
	return project, nil
}

// describe sizes and hashes the built files.
func describe(paths []string) ([]Asset, error) {
	var out []Asset
	seen := map[string]bool{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		n, err := io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, err
		}
		name := filepath.Base(p)
		if seen[name] {
			return nil, fmt.Errorf("two assets are named %s", name)
		}
		seen[name] = true
		out = append(out, Asset{Path: p, Name: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil)),
			Index: strings.HasSuffix(name, ".whl") || strings.HasSuffix(name, ".tar.gz")})
	}
	return out, nil
}

// builtElsewhere lists the wheels of version in dir, built on other
// machines: at least one, and none of another project or version.
func builtElsewhere(dir, version string) ([]string, error) {
	found, err := filepath.Glob(filepath.Join(dir, "*.whl"))
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("%s=%s holds no wheel: the wheels built on other machines (the macOS arm64 wheel) did not arrive", EnvWheels, dir)
	}
	prefix := "metalplug-" + version + "-"
	for _, p := range found {
		if name := filepath.Base(p); !strings.HasPrefix(name, prefix) {
			return nil, fmt.Errorf("%s holds %s, which is not a wheel of metalplug %s: a wheel built from another commit or version", dir, name, version)
		}
	}
	return found, nil
}

// writeSums writes SHA256SUMS (sha256sum's format, sorted by name) into dir.
func writeSums(dir string, as []Asset) (*Asset, error) {
	sorted := append([]Asset(nil), as...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var b strings.Builder
	for _, a := range sorted {
		fmt.Fprintf(&b, "%s  %s\n", a.SHA256, a.Name)
	}
	p := filepath.Join(dir, "SHA256SUMS")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	as2, err := describe([]string{p})
	if err != nil {
		return nil, err
	}
	return &as2[0], nil
}

// BuildAssets builds the sdist and the universal wheel into out, dated by
// the commit (SOURCE_DATE_EPOCH, unless already set), so that a re-run
// rebuilds the same bytes. The universal wheel is what the index gets for
// this platform: it serves every supported TensorFlow release and jax, and
// requires neither. The per-release wheels (go tool mage wheels) are for
// whoever pins one and are not published.
func BuildAssets(ctx context.Context, root, out string, logf func(string, ...any)) ([]string, error) {
	if os.Getenv("SOURCE_DATE_EPOCH") == "" {
		ct, err := git(root, "log", "-1", "--format=%ct")
		if err != nil {
			return nil, err
		}
		if _, err := strconv.ParseInt(ct, 10, 64); err != nil {
			return nil, fmt.Errorf("git log gave commit time %q", ct)
		}
		os.Setenv("SOURCE_DATE_EPOCH", ct)
		defer os.Unsetenv("SOURCE_DATE_EPOCH")
	}
	sdist, err := wheels.Sdist(root, out, "")
	if err != nil {
		return nil, err
	}
	u, err := BuildUniversal(root, out, logf)
	if err != nil {
		return nil, err
	}
	return []string{filepath.Join(out, sdist), filepath.Join(out, u.File)}, nil
}

// BuildUniversal builds the universal wheel of the tree at root into out:
// a build per matrix release and one for jax alone.
func BuildUniversal(root, out string, logf func(string, ...any)) (*wheels.Universal, error) {
	jax, err := wheels.EnsureJax(root, logf)
	if err != nil {
		return nil, err
	}
	return wheels.BuildUniversal(wheels.UniversalOptions{Root: root, Dir: out, Releases: matrix.Releases,
		Distribution: matrix.ReleaseDistribution, Jax: jax.Report, Log: logf})
}
