package tasks

import (
	"context"
	"strconv"

	"github.com/metalplug/metalplug/setup/toolmod"
)

// Release runs the release (package ci/release) for tag from the tools
// module's command, which reaches GitHub through go-github:
// tools/cmd/release, in the source root (the current directory).
func Release(ctx context.Context, tag string, publish bool) error {
	return toolmod.Run(ctx, ".", toolmod.Release, "-root", ".", tag, strconv.FormatBool(publish))
}
