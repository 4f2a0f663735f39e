package pjrt

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// A minimal protobuf writer, to build the CompileOptionsProto jax sends.
type pb []byte

func (p pb) tag(num, wire int) pb        { return binary.AppendUvarint(p, uint64(num<<3|wire)) }
func (p pb) varint(num int, v uint64) pb { return binary.AppendUvarint(p.tag(num, wireVarint), v) }
func (p pb) bytes(num int, v []byte) pb {
	return append(binary.AppendUvarint(p.tag(num, wireBytes), uint64(len(v))), v...)
}
func (p pb) double(num int, v float64) pb {
	return binary.LittleEndian.AppendUint64(p.tag(num, wireFixed64), math.Float64bits(v))
}

// options builds a CompileOptionsProto as jax's looks: build options with
// replicas, partitions, the SPMD flag and a debug-options blob, a profile
// version, and the given overrides.
func options(replicas, partitions uint64, overrides map[string]pb) []byte {
	build := pb(nil).bytes(3, pb(nil).varint(1, 1).varint(99, 7)). // debug_options: skipped
									varint(4, replicas).varint(5, partitions).varint(6, 1)
	p := pb(nil).bytes(fieldExecutableBuildOptions, build).varint(5, 0)
	for name, v := range overrides {
		p = p.bytes(fieldEnvOptionOverrides, pb(nil).bytes(1, []byte(name)).bytes(2, v))
	}
	return p.varint(9, 1)
}

func TestParseCompileOptions(t *testing.T) {
	o, err := parseCompileOptions(options(1, 1, map[string]pb{
		"xla_cpu_enable_fast_math":                           pb(nil).varint(fieldOverrideBool, 1),
		"xla_gpu_autotune_level":                             pb(nil).varint(fieldOverrideInt, 3),
		"xla_gpu_auto_spmd_partitioning_memory_budget_ratio": pb(nil).double(fieldOverrideDouble, 0.5),
		"xla_dump_to":                                        pb(nil).bytes(fieldOverrideString, []byte("/tmp/x")),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if o.numReplicas != 1 || o.numPartitions != 1 {
		t.Errorf("replicas %d, partitions %d", o.numReplicas, o.numPartitions)
	}
	want := map[string]string{"xla_cpu_enable_fast_math": "true", "xla_gpu_autotune_level": "3", "xla_gpu_auto_spmd_partitioning_memory_budget_ratio": "0.5", "xla_dump_to": `"/tmp/x"`}
	for name, v := range want {
		if got := o.overrides[name].String(); got != v {
			t.Errorf("override %s = %s, want %s", name, got, v)
		}
	}
	if err := o.check(); err != nil {
		t.Errorf("real XLA options must be accepted: %v", err)
	}
	empty, err := parseCompileOptions(nil)
	if err != nil || empty.check() != nil {
		t.Errorf("empty options (every default): %v", err)
	}
}

func TestCompileOptionsRefused(t *testing.T) {
	o, _ := parseCompileOptions(options(1, 1, map[string]pb{"invalid_key": pb(nil).bytes(1, []byte("invalid_value"))}))
	if err := o.check(); err == nil || err.Error() != "No such compile option: 'invalid_key'" || codeOf(err) != codeInvalidArgument {
		t.Errorf("an unknown option: %v; want XLA's \"No such compile option: 'invalid_key'\"", err)
	}
	o, _ = parseCompileOptions(options(2, 1, nil))
	if err := o.check(); err == nil || !strings.Contains(err.Error(), "2 replicas × 1 partitions") {
		t.Errorf("two replicas: %v", err)
	}
	o, _ = parseCompileOptions(options(1, 4, nil))
	if err := o.check(); err == nil || !strings.Contains(err.Error(), "1 replicas × 4 partitions") {
		t.Errorf("four partitions: %v", err)
	}
	for _, bad := range [][]byte{{0x1a, 0x05, 0x01}, {0x08}, {0x00}, {0x0f}} {
		if _, err := parseCompileOptions(bad); err == nil {
			t.Errorf("malformed %x must fail", bad)
		}
	}
}

// Override values, as OptionOverrideProto.
func strOpt(s string) pb     { return pb(nil).bytes(fieldOverrideString, []byte(s)) }
func boolOpt(b bool) pb      { return pb(nil).varint(fieldOverrideBool, map[bool]uint64{true: 1}[b]) }
func intOpt(i int64) pb      { return pb(nil).varint(fieldOverrideInt, uint64(i)) }
func doubleOpt(f float64) pb { return pb(nil).double(fieldOverrideDouble, f) }
func checkOne(name string, v pb) error {
	o, err := parseCompileOptions(options(1, 1, map[string]pb{name: v}))
	if err != nil {
		return err
	}
	return o.check()
}

// What XLA's CompileOptions::ApplyOption takes, metalplug takes.
func TestCompileOptionsAccepted(t *testing.T) {
	for _, c := range []struct {
		name, what string
		v          pb
	}{
		// jax's tests (api_test): a bool as a bool, and as Python spells it.
		{"xla_embed_ir_in_executable", "true", boolOpt(true)},
		{"xla_embed_ir_in_executable", "false", boolOpt(false)},
		{"xla_embed_ir_in_executable", `"True"`, strOpt("True")},
		{"xla_embed_ir_in_executable", `"False"`, strOpt("False")},
		{"xla_dump_to", `"/tmp/dump"`, strOpt("/tmp/dump")},
		{"xla_dump_hlo_as_text", "true", boolOpt(true)},
		{"xla_dump_hlo_as_proto", "true", boolOpt(true)},
		{"xla_allow_excess_precision", "false", boolOpt(false)},
		{"xla_cpu_enable_fast_math", "true", boolOpt(true)},
		{"xla_gpu_per_fusion_autotune_cache_dir", `""`, strOpt("")},
		{"xla_gpu_kernel_cache_file", `"/tmp/k"`, strOpt("/tmp/k")},
		// int32 and int64: a number in range, or a decimal string.
		{"xla_cpu_parallel_codegen_split_count", "4", intOpt(4)},
		{"xla_gpu_autotune_level", "-1", intOpt(-1)},
		{"xla_gpu_autotune_level", `" +3 "`, strOpt(" +3 ")},
		{"xla_cmd_buffer_trace_cache_size", "1<<40", intOpt(1 << 40)},
		{"xla_cmd_buffer_trace_cache_size", `"1099511627776"`, strOpt("1099511627776")},
		// float: a double within float's positive normal range, or a string.
		{"xla_gpu_auto_spmd_partitioning_memory_budget_ratio", "0.5", doubleOpt(0.5)},
		{"xla_gpu_auto_spmd_partitioning_memory_budget_ratio", `"0.5"`, strOpt("0.5")},
		{"xla_gpu_auto_spmd_partitioning_memory_budget_ratio", `"-1e-3"`, strOpt("-1e-3")},
		{"xla_gpu_auto_spmd_partitioning_memory_budget_ratio", `"1e50"`, strOpt("1e50")}, // SimpleAtof: inf
		{"xla_gpu_auto_spmd_partitioning_memory_budget_ratio", `"+Infinity"`, strOpt("+Infinity")},
		{"xla_gpu_auto_spmd_partitioning_memory_budget_ratio", `"nan(1)"`, strOpt("nan(1)")},
		// enum: a value's name or any number.
		{"xla_gpu_shape_checks", `"RUNTIME"`, strOpt("RUNTIME")},
		{"xla_gpu_shape_checks", `"2"`, strOpt("2")},
		{"xla_gpu_shape_checks", "99", intOpt(99)},
		{"xla_gpu_experimental_autotune_backends", `"CUDNN,TRITON"`, strOpt("CUDNN,TRITON")}, // an imported enum
		// repeated: a comma-separated list, "" for none (jax's PGLE passes that).
		{"xla_gpu_enable_command_buffer", `""`, strOpt("")},
		{"xla_gpu_enable_command_buffer", `"FUSION,CUBLAS"`, strOpt("FUSION,CUBLAS")},
		{"xla_gpu_enable_command_buffer", "1", intOpt(1)},
		{"xla_disable_hlo_passes", `"algsimp,dce"`, strOpt("algsimp,dce")},
		{"xla_backend_extra_options", `""`, strOpt("")},
		// A field XLA has removed: an older jaxlib may still take it.
		{"xla_gpu_enable_cuda_graphs", `"anything"`, strOpt("anything")},
	} {
		if err := checkOne(c.name, c.v); err != nil {
			t.Errorf("%s = %s: %v", c.name, c.what, err)
		}
	}
}

// What XLA refuses, metalplug refuses, in XLA's words.
func TestCompileOptionsRefusedInXLAsWords(t *testing.T) {
	for _, c := range []struct {
		name, what string
		v          pb
		want       string // the whole message
	}{
		// jax's test_jit_lower_compile_with_compiler_options_invalid
		{"invalid_key", `"invalid_value"`, strOpt("invalid_value"), "No such compile option: 'invalid_key'"},
		{"xla_embed_ir_in_executable", `"invalid_value"`, strOpt("invalid_value"),
			"While setting option xla_embed_ir_in_executable, 'invalid_value' is not a valid bool value."},
		// An xla_ prefix is not enough.
		// bool: only the proto bool, "True" and "False".
		{"xla_embed_ir_in_executable", `"true"`, strOpt("true"), "While setting option xla_embed_ir_in_executable, 'true' is not a valid bool value."},
		{"xla_embed_ir_in_executable", "1", intOpt(1), "While setting option xla_embed_ir_in_executable, '1' is not a valid bool value."},
		{"xla_embed_ir_in_executable", "1.0", doubleOpt(1), "While setting option xla_embed_ir_in_executable, '1' is not a valid bool value."},
		// int32: absl::StrCat quotes a bool as 1.
		{"xla_gpu_autotune_level", "true", boolOpt(true), "While setting option xla_gpu_autotune_level, '1' is not a valid int32 value."},
		{"xla_gpu_autotune_level", "1<<40", intOpt(1 << 40), "While setting option xla_gpu_autotune_level, '1099511627776' is not a valid int32 value."},
		{"xla_gpu_autotune_level", "3.0", doubleOpt(3), "While setting option xla_gpu_autotune_level, '3' is not a valid int32 value."},
		{"xla_gpu_autotune_level", `"1.5"`, strOpt("1.5"), "While setting option xla_gpu_autotune_level, '1.5' is not a valid int32 value."},
		{"xla_gpu_autotune_level", `"0x10"`, strOpt("0x10"), "While setting option xla_gpu_autotune_level, '0x10' is not a valid int32 value."},
		{"xla_gpu_autotune_level", `"1_000"`, strOpt("1_000"), "While setting option xla_gpu_autotune_level, '1_000' is not a valid int32 value."},
		{"xla_gpu_autotune_level", `"3000000000"`, strOpt("3000000000"), "While setting option xla_gpu_autotune_level, '3000000000' is not a valid int32 value."},
		{"xla_gpu_autotune_level", `""`, strOpt(""), "While setting option xla_gpu_autotune_level, '' is not a valid int32 value."},
		{"xla_cmd_buffer_trace_cache_size", "0.5", doubleOpt(0.5), "While setting option xla_cmd_buffer_trace_cache_size, '0.5' is not a valid int64 value."},
		// float: a double below float's smallest positive normal (zero
		// too) or above its max, an int, a hex float.
		{"xla_gpu_auto_spmd_partitioning_memory_budget_ratio", "0.0", doubleOpt(0), "While setting option xla_gpu_auto_spmd_partitioning_memory_budget_ratio, '0' is not a valid float value."},
		{"xla_gpu_auto_spmd_partitioning_memory_budget_ratio", "-0.5", doubleOpt(-0.5), "While setting option xla_gpu_auto_spmd_partitioning_memory_budget_ratio, '-0.5' is not a valid float value."},
		{"xla_gpu_auto_spmd_partitioning_memory_budget_ratio", "1e39", doubleOpt(1e39), "While setting option xla_gpu_auto_spmd_partitioning_memory_budget_ratio, '1e+39' is not a valid float value."},
		{"xla_gpu_auto_spmd_partitioning_memory_budget_ratio", "1", intOpt(1), "While setting option xla_gpu_auto_spmd_partitioning_memory_budget_ratio, '1' is not a valid float value."},
		{"xla_gpu_auto_spmd_partitioning_memory_budget_ratio", `"0x1p-1"`, strOpt("0x1p-1"), "While setting option xla_gpu_auto_spmd_partitioning_memory_budget_ratio, '0x1p-1' is not a valid float value."},
		{"xla_gpu_auto_spmd_partitioning_memory_budget_ratio", `"+-1"`, strOpt("+-1"), "While setting option xla_gpu_auto_spmd_partitioning_memory_budget_ratio, '+-1' is not a valid float value."},
		{"xla_gpu_auto_spmd_partitioning_memory_budget_ratio", `"half"`, strOpt("half"), "While setting option xla_gpu_auto_spmd_partitioning_memory_budget_ratio, 'half' is not a valid float value."},
		// string: only a string.
		{"xla_dump_to", "true", boolOpt(true), "While setting option xla_dump_to, '1' is not a valid string value."},
		{"xla_dump_to", "0.25", doubleOpt(0.25), "While setting option xla_dump_to, '0.25' is not a valid string value."},
		// enum: names are exact; a bool is no number.
		{"xla_gpu_shape_checks", `"runtime"`, strOpt("runtime"), "While setting option xla_gpu_shape_checks, 'runtime' is not a valid enum value."},
		{"xla_gpu_shape_checks", "false", boolOpt(false), "While setting option xla_gpu_shape_checks, '0' is not a valid enum value."},
		// repeated: each item on its own, and the bad one quoted.
		{"xla_gpu_enable_command_buffer", `"FUSION,BOGUS"`, strOpt("FUSION,BOGUS"), "While setting option xla_gpu_enable_command_buffer, 'BOGUS' is not a valid enum value."},
		{"xla_gpu_enable_command_buffer", `"FUSION,"`, strOpt("FUSION,"), "While setting option xla_gpu_enable_command_buffer, '' is not a valid enum value."},
		// message (a map here): nothing sets one.
		{"xla_backend_extra_options", `"a=b"`, strOpt("a=b"), "While setting option xla_backend_extra_options, 'a=b' is not a valid message value."},
		{"xla_backend_extra_options", "true", boolOpt(true), "While setting option xla_backend_extra_options, '1' is not a valid message value."},
	} {
		err := checkOne(c.name, c.v)
		if err == nil || err.Error() != c.want || codeOf(err) != codeInvalidArgument {
			t.Errorf("%s = %s: %v (code %d)\n\twant INVALID_ARGUMENT %q", c.name, c.what, err, codeOf(err), c.want)
		}
	}
	// An override without a value fails as XLA reads it, before the names.
	o, _ := parseCompileOptions(options(1, 1, map[string]pb{"invalid_key": strOpt("x"), "xla_dump_to": nil}))
	if err := o.check(); err == nil || err.Error() != "OptionOverrideProto value not set." || codeOf(err) != codeInternal {
		t.Errorf("an override with no value: %v; want INTERNAL \"OptionOverrideProto value not set.\"", err)
	}
}

// The parsers of values by themselves, for the types no DebugOptions field
// has today (double) and for what absl accepts around a number.
func TestCheckString(t *testing.T) {
	for _, c := range []struct {
		typ, s string
		ok     bool
	}{
		{"double", "1e308", true}, {"double", "1e400", true}, {"double", "-.5", true}, {"double", "5.", true},
		{"double", "\t2.5\n", true}, {"double", "NaN", true}, {"double", "-inf", true},
		{"double", "1e", false}, {"double", "--1", false}, {"double", "-+1", false}, {"double", "0X1p0", false}, {"double", "", false},
		{"int64", "-9223372036854775808", true}, {"int64", "9223372036854775808", false}, {"int32", "+-1", false},
		{"uint64", "1", false}, {"bytes", "x", false}, // types XLA sets from no string
	} {
		err := debugOption{typ: c.typ}.checkString("opt", c.s)
		if (err == nil) != c.ok {
			t.Errorf("%s %q: %v, want ok=%v", c.typ, c.s, err, c.ok)
		}
	}
	if strCat(optionOverride{kind: "double", f: 1e-7}) != "1e-07" || strCat(optionOverride{kind: "double", f: math.Inf(-1)}) != "-inf" || strCat(optionOverride{kind: "double", f: 123456789}) != "1.23457e+08" {
		t.Errorf("strCat is not absl's six digits")
	}
}

func TestDebugOptionsTable(t *testing.T) {
	if !strings.HasPrefix(debugOptionsSource, "openxla/xla@") || len(debugOptionsSource) != len("openxla/xla@")+40 {
		t.Errorf("debug_options_gen.go names no xla commit: %q", debugOptionsSource)
	}
	if len(debugOptions) < 300 {
		t.Errorf("only %d DebugOptions fields", len(debugOptions))
	}
	for _, name := range debugOptionsReserved {
		if _, ok := debugOptions[name]; ok {
			t.Errorf("%s is both a field and reserved", name)
		}
	}
	for name, o := range debugOptions {
		if (o.typ == "enum") != (len(o.values) > 0) {
			t.Errorf("%s: type %s with values %v", name, o.typ, o.values)
		}
	}
}

// TestOptionNewerThanTheTableIsAccepted: an option of XLA's form that the
// table lacks (newer than its xla.proto) compiles, as the running jaxlib's
// XLA may know it; a name of no XLA form is refused.
func TestOptionNewerThanTheTableIsAccepted(t *testing.T) {
	if _, inTable := debugOptions["xla_option_newer_than_the_table"]; inTable {
		t.Fatal("test bug: the name is in the table")
	}
	if err := checkOverride("xla_option_newer_than_the_table", optionOverride{kind: "bool", b: true}); err != nil {
		t.Errorf("an xla_ option the table lacks: %v", err)
	}
	if err := checkOverride("not_xla_at_all", optionOverride{kind: "bool", b: true}); err == nil {
		t.Error("a name of no XLA form was accepted")
	}
}
