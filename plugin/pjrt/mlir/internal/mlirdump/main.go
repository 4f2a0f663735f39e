// Command mlirdump prints an MLIR bytecode file (a StableHLO portable
// artifact) as package mlir reads it, in generic op form, to diff against
// jaxlib's get_asm(print_generic_op_form=True):
//
//	go run ./plugin/pjrt/mlir/internal/mlirdump [-loc] file.mlir.bc
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

func main() {
	locs := flag.Bool("loc", false, "print locations")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: mlirdump [-loc] file.mlir.bc")
		os.Exit(2)
	}
	data, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	m, err := mlir.Read(data)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("// producer %s, bytecode version %d\n", m.Producer, m.Version)
	fmt.Print(m.Format(*locs))
}
