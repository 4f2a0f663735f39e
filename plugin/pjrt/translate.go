package pjrt

import "github.com/metalplug/metalplug/plugin/pjrt/stablehlo"

// jax's programs go through the StableHLO reader and translator: the MLIR
// bytecode of a portable artifact, read (plugin/pjrt/mlir) and translated to
// the IR (plugin/pjrt/stablehlo). What the translation does not support is
// UNIMPLEMENTED; a malformed artifact INVALID_ARGUMENT.
func init() { Translate = stablehlo.Translator(ErrUnsupported) }
