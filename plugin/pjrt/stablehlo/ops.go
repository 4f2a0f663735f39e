package stablehlo

import (
	"slices"
	"strings"

	"github.com/metalplug/metalplug/backend/ir"
	"github.com/metalplug/metalplug/plugin/pjrt/mlir"
)

// OpSupport is one op the translation supports and what it becomes.
type OpSupport struct {
	Name string // the op as the artifact names it: vhlo.add_v1
	Note string // what it becomes in the IR, and its limits
}

// Ops lists every supported op, sorted by name: the table docs/jax.md is
// generated from. Any op not listed is an error naming it.
func Ops() []OpSupport {
	out := make([]OpSupport, 0, len(handlers)+len(structural))
	for name, h := range handlers {
		out = append(out, OpSupport{Name: name, Note: h.note})
	}
	for name, note := range structural {
		out = append(out, OpSupport{Name: name, Note: note})
	}
	slices.SortFunc(out, func(a, b OpSupport) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// structural are the ops that hold the program rather than compute in it.
var structural = map[string]string{
	"builtin.module": "the module: its functions (one device: mhlo.num_partitions and mhlo.num_replicas must be 1)",
	"vhlo.func_v1":   "main becomes the program (with no results: nothing runs); private functions are inlined where called",
	"vhlo.return_v1": "the results of a function or region",
	"sdy.mesh":       "ignored (one device)",
}

type handler struct {
	fn    func(e *env, op *mlir.Operation) ([]ir.Value, error)
	note  string
	binds bool // fn binds op's results itself (tuples)
}

// handlers is filled by init: handlers translate regions, which look
// handlers up.
var handlers map[string]handler

func init() { handlers = handlerTable() }

func handlerTable() map[string]handler {
	h := map[string]handler{}
	add := func(name string, fn func(*env, *mlir.Operation) ([]ir.Value, error), note string) {
		h[name] = handler{fn: fn, note: note}
	}
	// Both versions of the ops that gained result_accuracy in VHLO 1.9-1.10
	// (an artifact targets any version from 0.9.0 on).
	for name, o := range unaryOps {
		note := "IR " + o.String()
		switch name {
		case "negate":
			note += "; complex: each part negated"
		case "abs":
			note += "; complex: a scaled hypot of the parts"
		case "sign":
			note += "; complex: z/|z|"
		case "exponential", "exponential_minus_one", "log", "log_plus_one", "logistic", "sqrt", "rsqrt", "tanh", "sine", "cosine":
			note += "; complex composed from the parts"
		}
		add("vhlo."+name+"_v1", unary(o), note)
		switch name {
		case "exponential", "exponential_minus_one", "log", "log_plus_one", "logistic", "sqrt", "rsqrt", "tanh", "sine", "cosine":
			add("vhlo."+name+"_v2", unary(o), note+"; result_accuracy DEFAULT or HIGHEST (one implementation; tolerances are refused)")
		}
	}
	for name, o := range binaryOps {
		note := "IR " + o.String()
		switch name {
		case "divide":
			note = "IR divide; integers composed to XLA's x/0 = -1 (all bits), MIN/-1 = MIN; complex: Smith's division of the parts"
		case "power":
			note += "; complex: exp(y log x), 0^0 = 1"
		case "remainder":
			note = "IR remainder (C fmod); integers composed to XLA's x%0 = x, MIN%-1 = 0"
		case "add", "subtract", "multiply":
			note += "; complex composed from the parts"
			if name != "subtract" {
				note += "; i1 as " + map[string]string{"add": "or", "multiply": "and"}[name]
			}
		case "maximum", "minimum":
			note += "; i1 as " + map[string]string{"maximum": "or", "minimum": "and"}[name]
		}
		add("vhlo."+name+"_v1", binary(o), note)
	}
	add("vhlo.tan_v1", tan, "sin/cos (in f32 for half types); complex: -i tanh(iz)")
	add("vhlo.tan_v2", tan, "sin/cos (in f32 for half types); complex: -i tanh(iz); result_accuracy DEFAULT or HIGHEST (one implementation; tolerances are refused)")
	add("vhlo.cbrt_v1", cbrt, "pow(|x|, 1/3) and a Newton step, with the sign (in f32 for half types)")
	add("vhlo.cbrt_v2", cbrt, "as cbrt_v1; result_accuracy DEFAULT or HIGHEST (one implementation; tolerances are refused)")
	add("vhlo.atan2_v1", atan2, "composed: a float32 minimax polynomial (1.1 ulp) reflected to the quadrant; f64 is an error")
	add("vhlo.round_nearest_afz_v1", roundAFZ, "composed: floor(|x|) + (frac >= 0.5), times sign(x)")
	add("vhlo.is_finite_v1", isFinite, "x - x == 0")
	add("vhlo.popcnt_v1", popcnt, "composed: SWAR bit counting with shifts and masks")
	add("vhlo.count_leading_zeros_v1", countLeadingZeros, "composed: a binary search with shifts and selects")
	add("vhlo.real_v1", realImag(false), "IR real; float: identity")
	add("vhlo.imag_v1", realImag(true), "IR imag; float: zeros")
	add("vhlo.complex_v1", complexOp, "IR complex (f32 parts only)")
	add("vhlo.compare_v1", compare, "IR compare; TOTALORDER on floats through the bits (XLA's total order); "+
		"SIGNED on unsigned and UNSIGNED on signed types by flipping the top bit; complex by the parts (orders lexicographic)")
	add("vhlo.select_v1", selectOp, "IR select (a scalar predicate broadcast)")
	add("vhlo.clamp_v1", clamp, "max then min (scalar bounds broadcast)")
	add("vhlo.convert_v1", convert, "IR convert (float to int truncates and saturates, NaN to 0, as XLA's CPU); to complex sets the real part; from complex is an error")
	add("vhlo.bitcast_convert_v1", bitcastConvert, "IR bitcast_convert; between widths, the last dim joined or split with shifts (little-endian), as XLA")

	add("vhlo.constant_v1", constant, "IR constant (dense elements; a splat is broadcast)")
	add("vhlo.iota_v1", iota, "IR iota (complex: of the real part)")
	add("vhlo.rng_bit_generator_v1", rngBitGenerator, "IR Rng's Philox4x32-10 bits for every algorithm (the bits are the implementation's), the state's counter advanced by the blocks drawn")
	add("vhlo.broadcast_in_dim_v1", broadcastInDim, "IR broadcast_in_dim (unsorted dims: a transpose first)")
	add("vhlo.reshape_v1", reshape, "IR reshape")
	add("vhlo.transpose_v1", transpose, "IR transpose")
	add("vhlo.slice_v1", slice, "IR slice")
	add("vhlo.concatenate_v1", concatenate, "IR concatenate")
	add("vhlo.pad_v1", pad, "IR pad (negative and interior padding)")
	add("vhlo.reverse_v1", reverse, "IR reverse")
	add("vhlo.get_dimension_size_v1", getDimensionSize, "a constant (shapes are static)")
	add("vhlo.dynamic_slice_v1", dynamicSlice, "IR gather of one slice (the IR clamps starts to [0, dim - size], as StableHLO)")
	add("vhlo.dynamic_update_slice_v1", dynamicUpdateSlice, "starts clamped to [0, dim - update], then IR scatter (replace)")
	add("vhlo.gather_v1", gather, "IR gather")
	add("vhlo.gather_v2", gather, "IR gather; operand_batching_dims become iota index components and collapsed dims")
	add("vhlo.scatter_v1", scatter, "as scatter_v2")
	add("vhlo.scatter_v2", scatter, "ScatterWith (fixed kinds or the region form); several inputs: IR scatter_region; "+
		"input_batching_dims become iota index components and inserted dims")

	linalgHandlers(add)
	add("vhlo.fft_v1", fft, "IR fft (complex64 and float32)")
	add("vhlo.dot_general_v1", dotGeneral, "IR dot_general (precision ignored); complex: four of the parts; i1: a count of the pairs both true, != 0")
	add("vhlo.dot_general_v2", dotGeneral, "IR dot_general (precision and algorithm ignored); a wider result type computes in it; complex: four of the parts; i1: a count of the pairs both true, != 0")
	add("vhlo.dot_v1", dot, "IR dot_general of the last lhs dim with the first rhs dim; complex: four of the parts; i1: a count of the pairs both true, != 0")
	add("vhlo.convolution_v1", convolution, "IR convolution between transposes to channels-last; window_reversal as a reverse; "+
		"batch_group_count as feature groups; no spatial dims as one of size 1; complex as four of the parts; integers exactly through float64 (up to 32 bits)")

	add("vhlo.reduce_v1", reduce, "ReduceWith: IR reduce for the fixed monoids, reduce_region otherwise")
	add("vhlo.reduce_window_v1", reduceWindow, "ReduceWindowWith (several inputs: reduce_window_region); base dilation and negative padding as a pad with the init; "+
		"window dilation as one strided slice per window position, stacked and reduced over")
	add("vhlo.select_and_scatter_v1", selectAndScatter, "SelectAndScatterWith (non-negative padding)")
	add("vhlo.sort_v1", sortOp, "SortWith (IR sorts are stable)")
	add("vhlo.while_v1", while, "IR while; captured values carried unchanged, small constants rebuilt inside")
	add("vhlo.case_v1", caseOp, "IR case; captured values passed to every branch")
	add("vhlo.if_v1", ifOp, "IR case on !pred")
	add("vhlo.call_v1", call, "inlined")
	add("vhlo.composite_v1", composite, "its decomposition, inlined")
	add("vhlo.composite_v2", composite, "its decomposition, inlined")
	add("vhlo.optimization_barrier_v1", identity, "identity")
	add("vhlo.create_token_v1", newToken, "an empty bool tensor (a token carries no data; one device runs in order)")
	add("vhlo.after_all_v1", newToken, "as create_token: the joined tokens order nothing more on one device")
	add("vhlo.custom_call_v1", customCall, "the one-device no-ops "+strings.Join(noOpCustomCalls, ", ")+" (identity); dce_sink (nothing); ApproxTopK (the exact top k: a stable sort by its comparator, sliced); "+
		HostCallTarget+" (jax's Python callbacks as jax_plugins.metalplug lowers them: ir.OpHostCall)"+linalgNote())
	add("vhlo.custom_call_v2", customCall, "as custom_call_v1")
	for _, name := range []string{"vhlo.all_reduce_v1", "vhlo.all_reduce_v2", "vhlo.all_gather_v1", "vhlo.all_gather_v2",
		"vhlo.reduce_scatter_v1", "vhlo.all_to_all_v1", "vhlo.all_to_all_v2"} {
		add(name, oneParticipant, "one device: each result is its operand (a collective of one participant)")
	}
	add("vhlo.reduce_precision_v1", reducePrecision, "on the float32 bits, as XLA: round to nearest even at the mantissa width, the signed infinity and zero past the exponent's range, NaN kept (float64 through float32 when the widths fit it)")
	add("vhlo.collective_permute_v1", collectivePermute, "one device: the operand where the device sends to itself (the pair (0, 0)), else zeros")
	add("vhlo.partition_id_v1", zeroID, "0 (one device)")
	add("vhlo.replica_id_v1", zeroID, "0 (one device)")
	add("sdy.sharding_group", nothing, "ignored (one device)")
	add("sdy.sharding_constraint", identity, "identity (one device)")
	add("sdy.reshard", identity, "identity (one device)")
	add("builtin.unrealized_conversion_cast", identity, "identity (VHLO and builtin tensor types are one)")
	h["vhlo.tuple_v1"] = handler{fn: tuple, note: "kept apart: only get_tuple_element may use the tuple", binds: true}
	h["vhlo.get_tuple_element_v1"] = handler{fn: getTupleElement, note: "the element of a tuple_v1", binds: true}
	h["vhlo.async_start_v1"] = handler{fn: asyncStart, binds: true,
		note: "its region translated in place (one device runs in order); the future holds the region's values (async.go)"}
	h["vhlo.async_done_v1"] = handler{fn: asyncDone, binds: true, note: "the values of its async_start's future"}
	return h
}
