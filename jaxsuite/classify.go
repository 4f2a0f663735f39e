package jaxsuite

import (
	"regexp"
	"strings"
)

// Class is what a failure on the device is put down to.
type Class string

const (
	// ClassOurs: a bug of ours (a wrong value, a missing op, a crash). The
	// default for a failure no rule explains, so that it gets looked at.
	ClassOurs Class = "ours"
	// ClassPolicy: what the platform does on purpose (float64 compute,
	// denormals, one device), where jax's test expects otherwise.
	ClassPolicy Class = "policy"
	// ClassJax: jax itself turns the platform away, for instance through a
	// hard-coded list of platforms.
	ClassJax Class = "jax-side"
	// ClassCPU: the test fails on jax's CPU too; counted apart.
	ClassCPU Class = "cpu-too"
)

// Classes in the order the report shows them.
var Classes = []Class{ClassOurs, ClassPolicy, ClassJax, ClassCPU}

// Rule classifies the failures whose message and test id match its
// patterns (a nil pattern matches anything). Why is the evidence: what the
// match shows and why that is the class.
type Rule struct {
	Name    string
	Class   Class
	Why     string
	Message *regexp.Regexp
	Test    *regexp.Regexp
	// Example is an error line the rule was written for (and, when the
	// rule has a Test pattern, ExampleID a test id); a test checks that
	// each example is classified by its own rule.
	Example, ExampleID string
}

func (r Rule) matches(id, msg string) bool {
	return (r.Message != nil || r.Test != nil) &&
		(r.Message == nil || r.Message.MatchString(msg)) &&
		(r.Test == nil || r.Test.MatchString(id))
}

// The rules not in Rules: the one for a test that fails on CPU too, which
// is decided before any other, and the default.
var (
	CPURule = Rule{Name: "fails on CPU too", Class: ClassCPU,
		Why: "the same test fails in the same checkout on jax's own CPU backend: not the device's doing, and counted apart"}
	DefaultRule = Rule{Name: "unexplained", Class: ClassOurs,
		Why: "matches no rule: a bug of ours until shown otherwise"}
)

// GapPattern matches the compile error of a program that needs the host
// for a part whose home is not the host, on the Metal driver with
// METALPLUG_NO_CPU_FALLBACK set: the driver's name, the setting's
// sentence, then the op and the reason of each such part ("op: reason",
// joined by "; "). Group 1 is the list of parts.
var GapPattern = regexp.MustCompile(`metal(?:-model)?: compile: METALPLUG_NO_CPU_FALLBACK=\w+ forbids the host these parts of the program: (.+)`)

// GapRule classifies the model's failures for want of a lowering: the
// report counts them per op and reason (Gaps).
var GapRule = Rule{
	Name: "not on the GPU yet", Class: ClassOurs,
	Why: "on the Metal driver (the model run), the program needs the host for an op whose home is not the host, which METALPLUG_NO_CPU_FALLBACK=unplanned forbids, " +
		"so it fails to compile naming the op and the reason: a lowering to MPSGraph that is missing, ours (what is the host's by design runs there and passes: matrix decompositions, host callbacks, and float64, which Apple GPUs lack)",
	Message: GapPattern,
	Example: "jaxlib._jax.XlaRuntimeError: INTERNAL: metal-model: compile: METALPLUG_NO_CPU_FALLBACK=unplanned forbids the host these parts of the program: " +
		"select_and_scatter_region: select_and_scatter by arbitrary bodies is not lowered: it runs on the CPU; max and min pooling's gradients are select_and_scatter, which is",
}

// Gap is one part of a program that the Metal driver would run on the
// host: its IR op and why.
type Gap struct{ Op, Reason string }

// gapStart finds the start of each "op: " in GapPattern's list of parts:
// at its start or after "; " (a reason may hold "; " too, never followed
// by a lowercase word and a colon).
var gapStart = regexp.MustCompile(`(?:^|; )([a-z][a-z0-9_]*): `)

// Gaps are the parts an error line of GapRule names, in its order; none
// for any other line.
func Gaps(line string) []Gap {
	m := GapPattern.FindStringSubmatch(line)
	if m == nil {
		return nil
	}
	list := m[1]
	at := gapStart.FindAllStringSubmatchIndex(list, -1)
	if len(at) == 0 || at[0][0] != 0 {
		return []Gap{{Op: "?", Reason: list}}
	}
	var out []Gap
	for i, a := range at {
		end := len(list)
		if i+1 < len(at) {
			end = at[i+1][0]
		}
		out = append(out, Gap{Op: list[a[2]:a[3]], Reason: strings.TrimSpace(list[a[1]:end])})
	}
	return out
}

// Rules are tried in order; the first that matches classifies.
// Specific rules come before general ones; GapRule comes first, since the
// reasons it quotes may say what later rules look for.
var Rules = []Rule{
	GapRule,
	{
		Name: "complex operands", Class: ClassOurs,
		Why:     "the translation refuses an op on complex operands that it does not compose yet (division, transcendentals, abs, power): a missing feature of ours",
		Message: regexp.MustCompile(`UNIMPLEMENTED: metalplug: .*complex(64|128)? operands|compile: instruction [^:]*complex(64|128)\[`),
		Example: `jax.errors.JaxRuntimeError: UNIMPLEMENTED: metalplug: PJRT_Client_Compile: reading the "mlir" program: vhlo.tanh_v2 at jit(tanh)/tanh at tests/lax_vmap_op_test.py:43:10: complex operands`,
	},
	{
		Name: "float64 compute (complex128)", Class: ClassPolicy,
		Why:     "complex128 is float64 compute, which the device does not offer (Apple GPUs have no float64; the IR's one complex type is complex64): jax hands a complex128 array to the program only where a test asks for it explicitly",
		Message: regexp.MustCompile(`has element type complex<f64>, which metalplug has no dtype`),
		Example: `jax.errors.JaxRuntimeError: UNIMPLEMENTED: metalplug: PJRT_Client_Compile: reading the "mlir" program: vhlo.func_v1 at unknown location: argument 0 has element type complex<f64>, which metalplug has no dtype for`,
	},
	{
		Name: "ui16 or ui64 in or out of a program", Class: ClassOurs,
		Why:     "a program argument or result of uint16 or uint64, which the IR holds as int16 and int64 bits inside a program but not at its boundary: a missing feature of ours",
		Message: regexp.MustCompile(`has element type ui(16|64), which metalplug has no dtype`),
		Example: `jax.errors.JaxRuntimeError: UNIMPLEMENTED: metalplug: PJRT_Client_Compile: reading the "mlir" program: vhlo.func_v1 at unknown location: argument 0 has element type ui16, which metalplug has no dtype`,
	},
	{
		Name: "dtype the device lacks", Class: ClassOurs,
		Why:     "a program argument or result, or a buffer, of an element type the plugin has no dtype for (int4 and uint4, the float8, float6 and float4 types): a missing feature of ours",
		Message: regexp.MustCompile(`has element type \w+, which metalplug has no dtype|element type \w+ is not supported by metalplug buffers`),
		Example: `jax.errors.JaxRuntimeError: UNIMPLEMENTED: metalplug: PJRT_Client_Compile: reading the "mlir" program: vhlo.func_v1 at unknown location: argument 0 has element type f8E4M3FN, which metalplug has no dtype for`,
	},
	{
		Name: "linear algebra ops", Class: ClassOurs,
		Why:     "cholesky and triangular_solve, and the decompositions jax leaves to XLA's expanders on a platform it has no solver for (custom_call Qr, Eigh, ProductOfElementaryHouseholderReflectors), are not translated: missing ops of ours",
		Message: regexp.MustCompile(`program: vhlo\.(cholesky|triangular_solve)_v\d|custom_call target "(Qr|Eigh|ProductOfElementaryHouseholderReflectors|Svd|Lu)"`),
		Example: `jax.errors.JaxRuntimeError: UNIMPLEMENTED: metalplug: PJRT_Client_Compile: reading the "mlir" program: vhlo.cholesky_v1 at jit(cholesky)/cholesky at tests/cholesky_update_test.py:60:19:`,
	},
	{
		Name: "rng_bit_generator", Class: ClassOurs,
		Why:     "the rbg and unsafe_rbg PRNGs and lax.rng_bit_generator lower to rng_bit_generator, which is not translated (jax's default threefry works): a missing op of ours",
		Message: regexp.MustCompile(`program: vhlo\.rng_bit_generator_v1`),
		Example: `jax.errors.JaxRuntimeError: UNIMPLEMENTED: metalplug: PJRT_Client_Compile: reading the "mlir" program: vhlo.rng_bit_generator_v1 at jit(rng_bit_generator)/rng_bit_generator at tests/lax_test.py:3606:13: the op vhlo.rng_bit_generator_v1`,
	},
	{
		Name: "window dilation", Class: ClassOurs,
		Why:     "reduce_window with window_dilations above 1: the IR's windows are dense, and the translation does not spread them: a missing feature of ours",
		Message: regexp.MustCompile(`program: vhlo\.reduce_window_v1 .*window_dilations`),
		Example: `jax.errors.JaxRuntimeError: UNIMPLEMENTED: metalplug: PJRT_Client_Compile: reading the "mlir" program: vhlo.reduce_window_v1 at jit(reduce_window_sum)/reduce_window_sum at tests/lax_test.py:2170:13: window_dilations [1 2 2 1] (the IR's windows are dense)`,
	},
	{
		Name: "integer convolution", Class: ClassOurs,
		Why:     "a convolution of integers: the IR convolves floats only: a missing feature of ours",
		Message: regexp.MustCompile(`a convolution of u?int\d+`),
		Example: `jax.errors.JaxRuntimeError: UNIMPLEMENTED: metalplug: PJRT_Client_Compile: reading the "mlir" program: vhlo.convolution_v1 at jit(conv_general_dilated)/conv_general_dilated at tests/lax_test.py:587:13: a convolution of int8 (the IR convolves floats only)`,
	},
	{
		Name: "tokens and side effects", Class: ClassOurs,
		Why:     "a program that takes or returns a token (ordered effects: jax.debug.print, io_callback, ordered callbacks) that the translation refuses: ours",
		Message: regexp.MustCompile(`is a token \(side effects\)`),
		Example: `jax.errors.JaxRuntimeError: UNIMPLEMENTED: metalplug: PJRT_Client_Compile: reading the "mlir" program: vhlo.func_v1 at unknown location: result 0 is a token (side effects) (not supported by metalplug)`,
	},
	{
		Name: "result_accuracy other than DEFAULT", Class: ClassOurs,
		Why:     "the program asks a transcendental for a result_accuracy by tolerances, which the translation does not promise, and refuses (DEFAULT and HIGHEST are the one implementation): ours",
		Message: regexp.MustCompile(`result_accuracy #vhlo\.result_accuracy`),
		Example: `jax.errors.JaxRuntimeError: UNIMPLEMENTED: metalplug: PJRT_Client_Compile: reading the "mlir" program: vhlo.tanh_v2 at jit(tanh)/tanh at tests/lax_test.py:162:28: result_accuracy #vhlo.result_accuracy_v1<atol = 0.000000e+00, rtol = 0.00`,
	},
	{
		Name: "StableHLO op not translated", Class: ClassOurs,
		Why:     "the program holds a StableHLO op (or a custom_call target) the translation has no rule for, which it names: a missing op of ours",
		Message: regexp.MustCompile(`UNIMPLEMENTED: metalplug: PJRT_Client_Compile: reading the "mlir" program: (vhlo|sdy|builtin)\.\w+`),
		Example: `jax.errors.JaxRuntimeError: UNIMPLEMENTED: metalplug: PJRT_Client_Compile: reading the "mlir" program: vhlo.reduce_precision_v1 at jit(reduce_precision)/reduce_precision at tests/lax_test.py:2613:20: reduce_precision to 5 exponent and 10 mantissa bits of bfloat16 (only to f16's or bf16's)`,
	},
	{
		Name: "the host driver refuses an instruction", Class: ClassOurs,
		Why:     "the IR program was translated but the host driver has no kernel for one instruction (op and dtypes named): a missing kernel of ours",
		Message: regexp.MustCompile(`compiling for the host driver: host: compile:`),
		Example: `jax.errors.JaxRuntimeError: INTERNAL: metalplug: PJRT_Client_Compile: compiling for the host driver: host: compile: instruction %13: compare(complex64[9], complex64[9]) -> bool[9]: op compare is not implemented`,
	},
	{
		Name: "complex functions at extreme arguments", Class: ClassOurs,
		Why:     "jax's accuracy sweep of the complex plane (FunctionAccuracyTest, against mpmath, to the largest and smallest floats and infinities): the compositions of the parts are accurate for ordinary values but not where a part overflows or underflows, where XLA's are careful",
		Test:    regexp.MustCompile(`::FunctionAccuracyTest::testSuccessOnComplexPlane_`),
		Message: regexp.MustCompile(`Not equal to tolerance`),
		Example: `AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06`, ExampleID: "tests/lax_test.py::FunctionAccuracyTest::testSuccessOnComplexPlane_tan_complex64",
	},
	{
		Name: "wrong values", Class: ClassOurs,
		Why:     "the device computed other values than the test's reference (numpy, or jax itself): each is a bug of ours to look at",
		Message: regexp.MustCompile(`^AssertionError: (Not equal to tolerance|\s*Arrays are not (almost )?equal)`),
		Example: `AssertionError: Not equal to tolerance rtol=1e-07, atol=0 Mismatched elements: 1 / 1 (100%)`,
	},
	{
		Name: "the device alone", Class: ClassPolicy,
		Why:     "a module measured with JAX_PLATFORMS=metalplug alone, before the suite put jax's CPU beside the device (metalplug,cpu, as on any GPU machine): a test that also wants jax's CPU backend (cross-platform device_put, backend='cpu', colocated Python) found none",
		Message: regexp.MustCompile(`Unknown backend:? '?cpu'?\.? Available backends are \['metalplug'\]`),
		Example: `RuntimeError: Unknown backend cpu. Available backends are ['metalplug']`,
	},
	{
		Name: "jax's list of platforms with a compilation cache", Class: ClassJax,
		Why:     "CompilationCacheTest skips every test in setUp on a platform outside its hard-coded list (tpu, gpu, cpu), after its base class's setUp has replaced jax's compilation cache; a skip in setUp runs no tearDown, so jax's own check that a test leaves the cache as it found it fails, on that test and the next",
		Test:    regexp.MustCompile(`^tests/compilation_cache_test\.py::`),
		Message: regexp.MustCompile(`Test changed the compilation cache object`),
		Example: `failed on teardown with "AssertionError: Test changed the compilation cache object: before test it was None, now it is <tests.compilation_cache_test.InMemoryCache object at 0x7f4eee08c2c0>"`, ExampleID: "tests/compilation_cache_test.py::CompilationCacheTest::test_jit",
	},
	{
		Name: "exported for a hard-coded list of platforms", Class: ClassJax,
		Why:     "the test exports a function for a fixed list of platforms (cpu, tpu, cuda, rocm) and then calls it on the default device, or looks the device's platform up in a table of those (a KeyError); jax refuses an export for other platforms by design",
		Test:    regexp.MustCompile(`^tests/export_test\.py::JaxExportTest::test_(multi_platform|ordered_effects_multi_platform)|^tests/export_harnesses_multi_platform_test\.py::`),
		Message: regexp.MustCompile(`was exported for platforms '\(.*\)' but it is used on '\('metalplug',\)'|KeyError: 'metalplug'`),
		Example: `ValueError: Function 'f_jax' was exported for platforms '('cpu', 'tpu')' but it is used on '('metalplug',)'.`, ExampleID: "tests/export_test.py::JaxExportTest::test_ordered_effects_multi_platform_and_poly_v_9",
	},
	{
		Name: "jax expects another platform's refusal", Class: ClassJax,
		Why:     "the test asserts an error that jax's lowering raises on cpu and gpu, and names those platforms to expect it: QR of float16 (LAPACK and cuSOLVER have none) on every platform but tpu, jnp.insert and nonzero under shape polymorphism (associative scans) on all but tpu; metalplug computes the result instead (float16 through float32; cumulative reductions as reduce_window, as on tpu)",
		Test:    regexp.MustCompile(`::NumpyLinalgTest::testQrInvalidDtypeCPU$|::ShapePolyHarnessesTest::test_harness_jnp_(insert_insert|nonzero_size)_(constant|poly)$`),
		Message: regexp.MustCompile(`^AssertionError: (NotImplementedError|Exception) not raised`),
		Example: `AssertionError: Exception not raised`, ExampleID: "tests/linalg_test.py::NumpyLinalgTest::testQrInvalidDtypeCPU",
	},
	{
		Name: "jax's list of platforms with donation", Class: ClassJax,
		Why:     "jax warns that donation is not implemented for any platform missing from its hard-coded list (_platforms_with_donation in jax/_src/interpreters/mlir.py: cpu, cuda, rocm, tpu, neuron), and the suite turns warnings into errors; the plugin itself accepts donated buffers",
		Message: regexp.MustCompile(`Donation is not implemented for \('metalplug',\)`),
		Example: `UserWarning: Some donated buffers were not usable: ~float32[], ~float32[]. Donation is not implemented for ('metalplug',).`,
	},
	{
		Name: "host memory kinds", Class: ClassOurs,
		Why:     "the device offers one memory kind, device; jax's pinned_host and unpinned_host (memory spaces, compute_on with an output in host memory) are not offered, though on unified memory they could be the same memory: a missing feature of ours",
		Message: regexp.MustCompile(`Got memory kind: (pinned|unpinned)_host|^AssertionError: - device$`),
		Example: `ValueError: Could not find memory addressable by device host (reference driver). Device host (reference driver) can address the following memory kinds: device. Got memory kind: pinned_host`,
	},
	{
		Name: "layouts other than row-major", Class: ClassOurs,
		Why:     "device arrays are dense row-major: a layout the user asks device_put for (column-major) is not kept: a missing feature of ours",
		Test:    regexp.MustCompile(`^tests/layout_test\.py::LayoutTest::test_device_put_user_concrete_layout$`),
		Example: `AssertionError: Tuples differ: (0, 1) != (1, 0)`, ExampleID: "tests/layout_test.py::LayoutTest::test_device_put_user_concrete_layout",
	},
	{
		Name: "complex lu and svd under shape polymorphism", Class: ClassOurs,
		Why:     "the IR's lu and svd are real, so complex64 lu and svd keep jax's generic lowerings, which compare symbolic dims in Python; jax's CPU lowerings (LAPACK's cgetrf and cgesdd) would take them once the IR has complex64 lu and svd: ours",
		Test:    regexp.MustCompile(`::ShapePolyHarnessesTest::test_harness_(lu|svd)_shape_complex64_`),
		Message: regexp.MustCompile(`InconclusiveDimensionOperation|ConcretizationTypeError`),
		Example: `jax._src.export.shape_poly.InconclusiveDimensionOperation: Symbolic dimension comparison 'n' < 'm' is inconclusive.`, ExampleID: "tests/shape_poly_test.py::ShapePolyHarnessesTest::test_harness_lu_shape_complex64_5_4_poly_m_n",
	},
	{
		Name: "token buffers", Class: ClassOurs,
		Why:     "a token crosses the program boundary as an empty bool buffer, not as PJRT's token type, so jax can read one as a numpy array where XLA's runtimes refuse: ours",
		Test:    regexp.MustCompile(`::JitTest::test_print_token_buffer_error$`),
		Message: regexp.MustCompile(`^AssertionError: RuntimeError not raised`),
		Example: `AssertionError: RuntimeError not raised`, ExampleID: "tests/api_test.py::JitTest::test_print_token_buffer_error",
	},
	{
		Name: "Compiled.as_text() is None", Class: ClassOurs,
		Why:     "PJRT_Executable_OptimizedProgram is not implemented (metalplug runs none of XLA's passes and has no optimized HLO to give; handing back jax's own program made jax read its layouts from it), so Compiled.as_text() is None and a test that looks into it fails: ours",
		Message: regexp.MustCompile(`^TypeError: argument of type 'NoneType' is not iterable`),
		Test:    regexp.MustCompile(`::(AsyncCollectivesTest::test_async_|APITest::test_inline_optimized_hlo$|LaxTest::test_dce_sink_prevents_xla_dce$)`),
		Example: `TypeError: argument of type 'NoneType' is not iterable`, ExampleID: "tests/api_test.py::APITest::test_inline_optimized_hlo",
	},
	{
		Name: "did not finish", Class: ClassOurs,
		Why: "the test ran past its time: pytest-timeout failed it (its signal reaches a test blocked in jaxlib only once the computation returns), or the module's own limit ended it mid-test. " +
			"On the model, a large program the model interprets slowly is enough (random_lax_test's multinomials of 10^6 samples and its Bernoulli draw of 10^8); it is ours until a faster run shows otherwise",
		Message: regexp.MustCompile(`^did not finish: |^Failed: Timeout \(>[\d.]+s\) from pytest-timeout`),
		Example: "Failed: Timeout (>600.0s) from pytest-timeout.",
	},
	{
		Name: "ended for its time", Class: ClassOurs,
		Why: "the worker running the test was ended while the test ran, as pytest-timeout's thread method now does (in the run of 2026-12-04, before that method: once by hand, then by a watchdog at 300 s), and xdist reports a crashed worker. " +
			"random_lax_test's multinomials of 10^6 samples on the model, each 4 to 20 minutes in the model's interpreter; ours until a faster run shows otherwise. A worker that crashes for any other reason stays unexplained",
		Test:    regexp.MustCompile(`random_lax_test\.py::DistributionsTest::testMultinomialNumpy\d+$`),
		Message: regexp.MustCompile(`worker '?gw\d+'? crashed while running`),
		Example: `failed on setup with "worker 'gw2' crashed while running 'tests/random_lax_test.py::DistributionsTest::testMultinomialNumpy6'"`, ExampleID: "tests/random_lax_test.py::DistributionsTest::testMultinomialNumpy6",
	},
	{
		Name: "a PJRT extension the plugin lacks", Class: ClassOurs,
		Why:     "jax asks the plugin for a PJRT C API extension it does not offer (XlaTransform, ...): a missing feature of ours",
		Message: regexp.MustCompile(`PJRT plugin does not support the \w+ extension`),
		Example: `RuntimeError: Cannot register XLA transform 'transform_sin_to_cos': PJRT plugin does not support the XlaTransform extension.`,
	},
	{
		Name: "jax's list of platforms with host callbacks", Class: ClassJax,
		Why:     "jax lowers buffer_callback only for a hard-coded list of platforms (jax/_src/buffer_callback.py: cpu, cuda, rocm) and raises for any other before the plugin sees a program (its Python callbacks, for cpu, cuda, rocm and tpu in jax/_src/callback.py, the jax_plugins module lowers for metalplug)",
		Message: regexp.MustCompile("`(buffer_callback|EmitPythonCallback)` not supported on metalplug backend"),
		Example: "ValueError: `buffer_callback` not supported on metalplug backend.",
	},
	{
		Name: "jax's generic lowering lacks the option", Class: ClassJax,
		Why:     "where jax has no lowering registered for the platform it uses its platform-independent one, which lacks this option (tridiagonal_solve's perturb_singular); cpu, cuda and rocm have lowerings of their own, by a hard-coded list",
		Message: regexp.MustCompile(`NotImplementedError: .* is not supported on this platform\.`),
		Example: `NotImplementedError: perturb_singular=True is not supported on this platform.`,
	},
	{
		Name: "jax lowers the primitive for other platforms only", Class: ClassJax,
		Why:     "jax registers this primitive's lowering for a hard-coded list of platforms (cpu, cuda, rocm, tpu: LAPACK, cuSOLVER and the like) that the jax_plugins module does not register for metalplug, so jax raises before the plugin sees a program",
		Message: regexp.MustCompile(`(MLIR translation|Lowering) rule for primitive '[\w-]+' not found for platform metalplug`),
		Example: `NotImplementedError: MLIR translation rule for primitive 'eig' not found for platform metalplug`,
	},
}

// Classify puts down one failure on the device by its id and its error line
// (ErrorLine: what the report keeps, so that a report can be classified
// again when the rules change); cpuFailed says whether the same test failed
// on jax's CPU.
func Classify(id, msg string, cpuFailed bool) Rule {
	if cpuFailed {
		return CPURule
	}
	for _, r := range Rules {
		if r.matches(id, msg) {
			return r
		}
	}
	return DefaultRule
}

// AllRules is every rule a failure can be put down to, in report order.
func AllRules() []Rule {
	return append(append([]Rule{CPURule}, Rules...), DefaultRule)
}

// Reclassify applies the current rules to every recorded failure, on
// every driver.
func (r *Report) Reclassify() {
	for i := range r.Modules {
		for _, d := range Drivers {
			res := r.Modules[i].On(d)
			if res == nil {
				continue
			}
			for j := range res.Failures {
				f := &res.Failures[j]
				rule := Classify(f.ID, f.Error, f.Class == ClassCPU)
				f.Class, f.Rule = rule.Class, rule.Name
			}
		}
	}
}
