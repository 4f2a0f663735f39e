// Package stablehlo translates the StableHLO program jax hands a PJRT
// plugin into one backend/ir program.
//
// jaxlib gives PJRT_Client_Compile a portable artifact: MLIR bytecode of
// VHLO ops, which package mlir reads into a generic op tree. Translate
// turns that tree's public main function into an ir.Program whose
// parameters are main's arguments and whose results are main's results, in
// order; Read does both steps from the bytes, Translator is the same as
// the function plugin/pjrt's seam takes, and MainSignature says what the
// PJRT layer needs beside the program (argument and result types, which
// arguments jax marked donated, jax's result names).
//
// The rules, in one place:
//
//   - Every op and attribute the translation does not support is an error
//     that names the op, what about it is unsupported and jax's source
//     location (from mlir.Operation.Errorf), and wraps ErrUnsupported; a
//     module that contradicts itself (types that disagree, a missing
//     attribute) is a status.InvalidArgument error; a panic is recovered
//     and becomes a status.Internal error that names the op being
//     translated. Nothing unsupported is translated into an approximation
//     without saying so: Ops lists what each op becomes.
//   - Private functions (call_v1, and composite_v2's decomposition) are
//     inlined: the IR's call is a region the Metal driver does not lower
//     (a program holding one runs on the CPU), jax's callees are small
//     (pjit wrappers, _where, clip, threefry2x32), and inlining lets the
//     constants and bodies of a callee reach the *With builders' fixed
//     forms.
//   - Regions see only their own parameters in the IR. Values a while or
//     case region uses from outside are passed in: carried unchanged
//     through the loop, or passed to every branch; small constants are
//     rebuilt inside instead. The scalar bodies of reduce, sort, scatter,
//     reduce_window and select_and_scatter have fixed signatures, so only
//     constants may be captured there; anything else is an error.
//   - What StableHLO defines and the IR leaves open or lacks is composed
//     from IR ops so that the result is XLA's CPU's: integer division and
//     remainder by zero and of the minimum by -1, total-order float
//     comparison, clamped dynamic_update_slice starts, operand batching
//     dims of gather and scatter, batch-grouped convolution, bitcasts
//     between widths, complex arithmetic of the parts (IR real, imag and
//     complex), atan2, cbrt, tan, popcnt, count_leading_zeros. ui16 and
//     ui64 (jax's threefry and 16-bit random floats use them) are held as
//     the bits of int16 and int64, with the ops whose result depends on
//     signedness composed; they may not cross main's boundary.
package stablehlo
