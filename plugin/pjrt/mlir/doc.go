// Package mlir reads MLIR bytecode, and the VHLO dialect in it, into a
// generic operation tree, in pure Go.
//
// jaxlib hands a PJRT plugin's PJRT_Client_Compile (format "mlir") a
// StableHLO portable artifact: MLIR bytecode (format version 6; versions 0
// to 6 read too) holding builtin.module, vhlo.* ops with VHLO types and
// attributes, sometimes sdy (Shardy) ops and builtin.unrealized_conversion_cast,
// and locations with jax's source positions. jaxlib exports no MLIR C API,
// so this package decodes the bytes itself, following
// mlir/docs/BytecodeFormat.md and mlir/lib/Bytecode/Reader/BytecodeReader.cpp
// (llvm-project), mlir/include/mlir/IR/BuiltinDialectBytecode.td, and
// stablehlo/dialect/VhloBytecode.cpp and VhloOps.td (openxla/stablehlo).
//
// VHLO and builtin types and attributes decode to one set of Go values
// (a vhlo tensor_v1 type and a builtin tensor type are both a *TensorType),
// so the translator to backend/ir does not care which dialect wrote them.
// Attributes and types of dialects it does not decode (sdy, ...) become
// OpaqueAttr/OpaqueType values: their size is recorded, so they never stop a
// read. The op tree keeps VHLO's op names (vhlo.add_v1, vhlo.dot_general_v2)
// and attribute names as written; mapping them to IR is the caller's job.
//
// Read never panics on malformed input; its errors are *Error values that
// give the byte offset and what was expected there, and name the op and its
// jax source location once inside an op.
package mlir
