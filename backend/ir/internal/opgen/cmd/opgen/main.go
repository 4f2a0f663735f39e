// Command opgen writes backend/ir's ops_gen.go (see package opgen); go
// generate runs it in that directory.
package main

import (
	"fmt"
	"os"

	"github.com/metalplug/metalplug/backend/ir/internal/opgen"
)

func main() {
	out, err := opgen.Generate(".")
	if err == nil {
		err = os.WriteFile(opgen.Output, out, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
