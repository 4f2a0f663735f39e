// Command release is what `go tool mage release <tag> <publish>` runs: the
// release of package ci/release, with GitHub reached through go-github
// (package ghrelease), configured from the environment (release.FromEnv).
//
//	release [-root dir] <tag> <publish>
//
// It works in dir, the source root (.. by default, which is the root when
// run by hand from tools/: go -C tools run ./cmd/release v0.1.0 false).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"

	"github.com/metalplug/metalplug/ci/release"
	"github.com/metalplug/metalplug/tools/ghrelease"
)

func main() {
	root := flag.String("root", "..", "the source root, a git work tree")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: release [-root dir] <tag> <publish: true or false>\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	publish, err := strconv.ParseBool(flag.Arg(1))
	if err != nil {
		fmt.Fprintf(os.Stderr, "release: publish is true or false, not %q\n", flag.Arg(1))
		os.Exit(2)
	}
	// The release's paths and messages are relative to the root, as when
	// Mage ran it in process.
	if err := os.Chdir(*root); err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c := release.FromEnv(".", flag.Arg(0), publish)
	c.ConnectGitHub = ghrelease.Connect
	if err := release.Run(ctx, c); err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		stop()
		os.Exit(1)
	}
}
