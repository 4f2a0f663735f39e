package release

import (
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
)

// git runs git in root and returns its trimmed stdout.
func git(root string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// checkTree returns the HEAD commit when the work tree has nothing
// uncommitted (untracked files included: the sdist is made from the files on
// disk) and the tag, if it exists, points at HEAD.
func checkTree(root, tag string) (string, error) {
	head, err := git(root, "rev-parse", "HEAD")
	if err != nil {
		return "", fmt.Errorf("%s is not a git work tree with a commit: a release is built from a commit (%v)", root, err)
	}
	status, err := git(root, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return "", err
	}
	if status != "" {
		lines := strings.Split(status, "\n")
		var files []string
		for i, l := range lines {
			if i == 5 {
				files = append(files, fmt.Sprintf("and %d more", len(lines)-5))
				break
			}
			files = append(files, strings.TrimSpace(l[min(2, len(l)):]))
		}
		return "", fmt.Errorf("the work tree is not clean (%d changed or untracked: %s): a release is built from a commit only. Commit or stash them (git stash -u), then re-run", len(lines), strings.Join(files, ", "))
	}
	if at, err := git(root, "rev-parse", "-q", "--verify", "refs/tags/"+tag+"^{commit}"); err == nil && at != "" && at != head {
		return "", fmt.Errorf("tag %s already exists and points at %s, not at HEAD (%s): a released version is not rebuilt from other sources. To finish releasing %s, check it out (git checkout %s) and re-run; to release this commit, bump the version in pyproject.toml and tag that", tag, at[:12], head[:12], tag, tag)
	}
	return head, nil
}

// remotePattern takes owner/name from a GitHub remote URL (https or ssh).
var remotePattern = regexp.MustCompile(`github\.com[:/]([^/]+)/([^/]+?)(?:\.git)?/?$`)

// repository is owner and name: $GITHUB_REPOSITORY, else the origin remote.
func (c *Config) repository() (string, string, error) {
	spec := c.Repo
	if spec == "" {
		if u, err := git(c.Root, "remote", "get-url", "origin"); err == nil {
			if m := remotePattern.FindStringSubmatch(u); m != nil {
				spec = m[1] + "/" + m[2]
			}
		}
	}
	owner, name, ok := strings.Cut(spec, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("which GitHub repository? %s is %q and the origin remote names none: set %s=owner/name", EnvRepository, c.Repo, EnvRepository)
	}
	return owner, name, nil
}
