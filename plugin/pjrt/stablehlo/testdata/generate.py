#!/usr/bin/env python3
"""Writes the numerical fixtures of plugin/pjrt/stablehlo: for each of a set
of small jax programs, the exact bytes PJRT_Client_Compile receives, and
example inputs with what jax's CPU backend computes from them.

Usage: python generate.py OUTDIR [--only NAME[,NAME...]]

For every program this writes, into OUTDIR:

  NAME.mlir.bc  the portable artifact at VHLO 1.22.0 (jaxlib 0.12's current
                version): serialize_portable_artifact(module_to_bytecode(m),
                "1.22.0", True), as in plugin/pjrt/mlir/testdata/generate.py
  NAME.json     {"name", "versions", "inputs": [...], "outputs": [...]}, each
                tensor {"dtype": numpy's name, "shape": [...], "data":
                base64 of its little-endian row-major bytes}: the arguments
                of main in order (jit's pytree leaves, unused ones kept, typed
                PRNG keys as their uint32 data) and jax.jit(f) on the CPU

The Go test translates each artifact, runs it on backend/ir/eval and
compares with the outputs. Inputs come from a seeded generator and carry
the edge cases (NaN, -0, infinities, zero divisors, out-of-range indices)
each program is about, so reruns write the same files.

Ops jax never emits by itself (integer power, a TOTALORDER compare outside
a sort, stablehlo.if, tuples) are lowered through small custom primitives
whose MLIR lowering writes the op directly.
"""

import argparse
import base64
import json
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")

from jax._src import core  # noqa: E402
from jax._src.interpreters import mlir as jax_mlir  # noqa: E402
from jax._src.lib.mlir import ir  # noqa: E402
from jax._src.lib.mlir.dialects import hlo  # noqa: E402
from jax.extend.core import Primitive  # noqa: E402
from jaxlib import _jax  # noqa: E402

TARGET = "1.22.0"

f32, f16, bf16, i32, u32 = jnp.float32, jnp.float16, jnp.bfloat16, jnp.int32, jnp.uint32

PROGRAMS = {}


def program(name, x64=False, platform=None):
    """Registers a program. With platform, the artifact is lowered for that
    platform (jax's default lowerings of linear algebra, as a plugin
    platform without LAPACK gets them: "tpu" has no LAPACK custom calls)
    while the outputs still come from the CPU; such a program may return
    (fn, args, cpu_fn) when the CPU needs another spelling of fn."""
    def deco(fn):
        PROGRAMS[name] = (fn, x64, platform)
        return fn
    return deco


def rng(name):
    return np.random.default_rng(sum(map(ord, name)))


# ---------------------------------------------------------------------------
# Custom primitives for ops jax does not emit on its own.


def raw_primitive(name, lower, result=None):
    p = Primitive(name)
    p.def_abstract_eval(result or (lambda x, *rest: core.ShapedArray(x.shape, x.dtype)))
    jax_mlir.register_lowering(p, lower)
    return p


int_pow = raw_primitive("metalplug_int_pow", lambda ctx, x, y: [hlo.power(x, y)])


def _compare(direction, ctype):
    def lower(ctx, x, y):
        return [hlo.compare(x, y, hlo.ComparisonDirectionAttr.get(direction),
                            compare_type=hlo.ComparisonTypeAttr.get(ctype))]
    return raw_primitive(f"metalplug_cmp_{direction}_{ctype}", lower,
                         lambda x, y: core.ShapedArray(x.shape, np.bool_))


total_lt = _compare("LT", "TOTALORDER")
total_ge = _compare("GE", "TOTALORDER")
total_eq = _compare("EQ", "TOTALORDER")
unsigned_lt = _compare("LT", "UNSIGNED")
signed_gt = _compare("GT", "SIGNED")


def _if(ctx, pred, x, y):
    t = ir.RankedTensorType(x.type)
    op = hlo.IfOp([t], pred)
    with ir.InsertionPoint(op.true_branch.blocks.append()):
        hlo.return_([hlo.add(x, y)])
    with ir.InsertionPoint(op.false_branch.blocks.append()):
        hlo.return_([hlo.multiply(hlo.negate(x), y)])
    return op.results


if_op = raw_primitive("metalplug_if", _if, lambda p, x, y: core.ShapedArray(x.shape, x.dtype))


def _tuples(ctx, x, y):
    t = hlo.tuple([x, hlo.tuple([y, x])])
    inner = hlo.get_tuple_element(t, 1)
    return [hlo.add(hlo.get_tuple_element(inner, 0), hlo.get_tuple_element(t, 0))]


tuples = raw_primitive("metalplug_tuples", _tuples)


def _scalar_select(ctx, p, x, y):
    return [hlo.select(p, x, y)]


scalar_select = raw_primitive("metalplug_scalar_select", _scalar_select,
                              lambda p, x, y: core.ShapedArray(x.shape, x.dtype))


def _sharding_call(ctx, x):
    op = hlo.CustomCallOp([x.type], [x], call_target_name=ir.StringAttr.get("Sharding"))
    op.attributes["mhlo.sharding"] = ir.StringAttr.get("{replicated}")
    return op.results


sharding_call = raw_primitive("metalplug_sharding_call", _sharding_call)


def _dim_size(ctx, x):
    size = hlo.get_dimension_size(x, 1)
    return [hlo.multiply(x, hlo.broadcast_in_dim(ir.RankedTensorType(x.type), hlo.convert(
        ir.RankedTensorType.get([], ir.RankedTensorType(x.type).element_type), size), []))]


dim_size = raw_primitive("metalplug_dim_size", _dim_size)


# ---------------------------------------------------------------------------
# The programs. Each returns (function, concrete arguments).

SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e-30, 3e38], np.float32)


@program("elementwise_f32")
def _():
    r = rng("elementwise_f32")
    x = np.concatenate([r.uniform(-4, 4, 28).astype(np.float32), SPECIAL])
    pos = np.concatenate([r.uniform(0.01, 20, 28).astype(np.float32), SPECIAL])

    def f(x, p):
        return (jnp.sin(x), jnp.cos(x), jnp.tan(x), jnp.exp(x), jnp.expm1(x), jnp.log(p), jnp.log1p(p),
                jnp.tanh(x), jax.nn.sigmoid(x), jnp.sqrt(p), lax.rsqrt(p), jnp.cbrt(x), jnp.abs(x), jnp.sign(x),
                -x, jnp.floor(x), jnp.ceil(x), jnp.round(x), lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO),
                jnp.isfinite(x), jnp.arctan2(x, p - 10), jnp.arcsin(jnp.clip(x / 4, -1, 1)), jnp.arctan(x),
                lax.erf(x), jnp.sinh(x), jnp.cosh(x), lax.erf_inv(jnp.clip(x / 4.5, -0.99, 0.99)))
    return f, (x, pos)


@program("result_accuracy")
def _():
    # The transcendentals with accuracy=HIGHEST (jax's lax_test
    # testEvenFunctionGrads, testExpm1Grad): result_accuracy mode HIGHEST,
    # which XLA's CPU computes as DEFAULT (its one implementation).
    r = rng("result_accuracy")
    x = np.concatenate([r.uniform(-4, 4, 28).astype(np.float32), np.arange(-80, 81, 20, dtype=np.float32), SPECIAL])
    pos = np.concatenate([r.uniform(0.01, 20, 28).astype(np.float32), SPECIAL])
    hi = lax.AccuracyMode.HIGHEST

    def f(x, p):
        ops = (lax.exp, lax.expm1, lax.tanh, lax.logistic, lax.sin, lax.cos, lax.tan)
        return (*(op(x, accuracy=hi) for op in ops), lax.log(p, accuracy=hi), lax.log1p(p, accuracy=hi),
                lax.sqrt(p, accuracy=hi), lax.rsqrt(p, accuracy=hi), lax.cbrt(x, accuracy=hi),
                jax.vmap(jax.grad(lambda v: lax.tanh(v, accuracy=hi)))(x),
                jax.vmap(jax.grad(lambda v: lax.expm1(v, accuracy=hi)))(x))
    return f, (x, pos)


@program("binary_f32")
def _():
    r = rng("binary_f32")
    a = np.concatenate([r.uniform(-10, 10, 20).astype(np.float32), np.repeat(SPECIAL, len(SPECIAL))])
    b = np.concatenate([r.uniform(-10, 10, 20).astype(np.float32), np.tile(SPECIAL, len(SPECIAL))])

    def f(a, b):
        return (a + b, a - b, a * b, a / b, lax.rem(a, b), jnp.maximum(a, b), jnp.minimum(a, b),
                lax.pow(jnp.abs(a), b), lax.pow(a, jnp.round(b)), jnp.clip(a, -1.5, 2.5),
                a == b, a != b, a < b, a <= b, a > b, a >= b, jnp.where(a > b, a, b))
    return f, (a, b)


@program("elementwise_f16")
def _():
    r = rng("elementwise_f16")
    x = np.concatenate([r.uniform(-4, 4, 20), [np.nan, np.inf, -np.inf, 0.0, -0.0, 65504.0, 6e-8]]).astype(np.float16)
    y = np.concatenate([r.uniform(0.1, 4, 20), [1, 2, 0, -1, 0.5, 2, 3]]).astype(np.float16)

    def f(x, y):
        return (x + y, x * y, x / y, jnp.exp(x), jnp.log(y), jnp.tanh(x), jnp.sqrt(y), jnp.sin(x), jnp.tan(x),
                jnp.maximum(x, y), jnp.floor(x), jax.nn.sigmoid(x), x.astype(f32) * 3.0, (x.astype(f32) / 3).astype(f16),
                jnp.sum(x * y), jnp.arctan2(x, y))
    return f, (x, y)


@program("elementwise_bf16")
def _():
    r = rng("elementwise_bf16")
    x = np.concatenate([r.uniform(-4, 4, 20), [np.nan, np.inf, 0.0, -0.0, 3e38, 1e-38]]).astype(jnp.bfloat16)
    y = np.concatenate([r.uniform(0.1, 4, 20), [1, 2, 0, -1, 2, 3]]).astype(jnp.bfloat16)

    def f(x, y):
        return (x + y, x - y, x * y, x / y, jnp.exp(x), jnp.log(y), jnp.tanh(x), lax.rsqrt(y), jnp.cos(x),
                jnp.minimum(x, y), jnp.round(x), jax.nn.gelu(x), x.astype(f32) + 1, (x.astype(f32) * 1.001).astype(bf16))
    return f, (x, y)


@program("int32")
def _():
    r = rng("int32")
    mn, mx = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    a = np.concatenate([r.integers(-1000, 1000, 12), [7, -7, 7, -7, 0, mn, mn, 5, mx, mn, 1, -1, 3, 3]]).astype(np.int32)
    b = np.concatenate([r.integers(-20, 20, 12), [0, 0, -2, 2, 0, -1, 0, -1, 1, 1, 33, 32, -1, 31]]).astype(np.int32)

    def f(a, b):
        return (a + b, a - b, a * b, lax.div(a, b), lax.rem(a, b), a // jnp.where(b == 0, 1, b), a % jnp.where(b == 0, 1, b),
                jnp.maximum(a, b), jnp.minimum(a, b), jnp.abs(a), jnp.sign(a), -a,
                a & b, a | b, a ^ b, ~a, lax.shift_left(a, b), lax.shift_right_logical(a, b), lax.shift_right_arithmetic(a, b),
                lax.population_count(a), lax.clz(a), a == b, a < b, a >= b, int_pow.bind(a, jnp.clip(b, -3, 5)),
                a ** 3, unsigned_lt.bind(a, b), a.astype(f32), a.astype(jnp.int8), a.astype(u32), a.astype(bool),
                jnp.clip(a, -5, 5))
    return f, (a, b)


@program("uint32")
def _():
    r = rng("uint32")
    mx = np.iinfo(np.uint32).max
    a = np.concatenate([r.integers(0, 1 << 32, 10, dtype=np.uint64), [7, 0, 5, mx, mx, 1, 1 << 31, 3]]).astype(np.uint32)
    b = np.concatenate([r.integers(0, 40, 10, dtype=np.uint64), [0, 0, 2, 1, mx, 32, 31, 33]]).astype(np.uint32)

    def f(a, b):
        return (a + b, a - b, a * b, lax.div(a, b), lax.rem(a, b), jnp.maximum(a, b), jnp.minimum(a, b),
                a & b, a | b, a ^ b, ~a, lax.shift_left(a, b), lax.shift_right_logical(a, b),
                lax.shift_right_arithmetic(a, b), lax.population_count(a), lax.clz(a), a < b, a == b,
                signed_gt.bind(a, b), a.astype(f32), a.astype(i32), a.astype(jnp.uint8), a.astype(bool))
    return f, (a, b)


@program("small_ints")
def _():
    a = np.array([-128, -1, 0, 1, 100, 127, -100, 55], np.int8)
    b = np.array([0, -1, 3, -128, 27, 1, 7, 0], np.int8)
    c = np.array([0, 1, 200, 255, 17, 128, 3, 9], np.uint8)
    d = np.array([-32768, 1000, -1, 0, 32767, 5, -7, 2], np.int16)

    def f(a, b, c, d):
        return (a + b, a * b, lax.div(a, b), lax.rem(a, b), a >> 1, c + c, c * 3, lax.div(c, c[::-1]), lax.rem(c, c[::-1]), c < 128,
                d * d, d // 3, d.astype(f32), c.astype(i32), a.astype(jnp.uint8), d.astype(jnp.int8), lax.population_count(c),
                lax.clz(d), jnp.sum(a.astype(i32)), jnp.max(c))
    return f, (a, b, c, d)


@program("bool_ops")
def _():
    r = rng("bool_ops")
    p = r.integers(0, 2, 12).astype(bool)
    q = r.integers(0, 2, 12).astype(bool)
    x = r.uniform(-1, 1, 12).astype(np.float32)

    def f(p, q, x):
        return (p & q, p | q, p ^ q, ~p, p == q, p < q, jnp.where(p, x, -x), p.astype(f32), p.astype(i32),
                jnp.any(p), jnp.all(q), (x > 0).astype(jnp.uint8), jnp.sum(p), scalar_select.bind(p[0], x, -x),
                if_op.bind(q[1], x, x * 2), tuples.bind(x, x + 1))
    return f, (p, q, x)


@program("converts")
def _():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, -0.7, 2.5, -1.0, 0.5, 1.5, 255.5, 256.0, -129.0,
                  65520.0, 1e-8, 16777217.0, 2.0 ** 31, -(2.0 ** 31), 0.0, -0.0], np.float32)
    n = np.array([0, 1, -1, 16777217, 2147483647, -2147483648, 300, -129, 65535, 33554435, 7, 8,
                  1 << 30, 3, 5, 9, 10, 11, 12, 13], np.int32)

    def f(x, n):
        return (x.astype(i32), x.astype(u32), x.astype(jnp.uint8), x.astype(jnp.int8), x.astype(jnp.int16), x.astype(bool),
                x.astype(f16), x.astype(bf16), x.astype(f16).astype(f32), n.astype(f32), n.astype(f16), n.astype(bf16),
                n.astype(jnp.int8), n.astype(jnp.uint8), n.astype(u32).astype(f32), lax.reduce_precision(x, 5, 10),
                lax.reduce_precision(x, 8, 7), lax.bitcast_convert_type(x, i32), lax.bitcast_convert_type(n, f32),
                lax.bitcast_convert_type(x, jnp.uint8), lax.bitcast_convert_type(x, jnp.int16),
                lax.bitcast_convert_type(lax.bitcast_convert_type(n, jnp.uint8), f32),
                lax.bitcast_convert_type(lax.bitcast_convert_type(x, f16), f32), lax.bitcast_convert_type(x.astype(bf16), jnp.int8))
    return f, (x, n)


@program("total_order")
def _():
    v = np.array([np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0, -1.0, 1e-45, -1e-45], np.float32)
    x = np.repeat(v, len(v))
    y = np.tile(v, len(v))

    def f(x, y):
        h = x.astype(f16)
        return total_lt.bind(x, y), total_ge.bind(x, y), total_eq.bind(x, y), total_lt.bind(h, y.astype(f16))
    return f, (x, y)


@program("complex")
def _():
    r = rng("complex")
    x = r.uniform(-2, 2, 8).astype(np.float32)
    y = r.uniform(-2, 2, 8).astype(np.float32)

    def f(x, y):
        z = lax.complex(x, y)
        w = z * (1.5 - 2j) + z - jnp.conj(z) * 0 - (-z)
        return jnp.real(w), jnp.imag(w), jnp.real(z * z), jnp.imag(x.astype(jnp.complex64)), z == w
    return f, (x, y)


@program("complex_math")
def _():
    # The complex64 ops jax's lax_test and lax_vmap_op_test run (composed
    # from the parts: the IR has no complex arithmetic), on values of both
    # signs and sizes, zeros and a pure imaginary and a negative real.
    r = rng("complex_math")
    re = np.concatenate([r.uniform(-3, 3, 10), [0, 0, -2, 0.5, 1e-4, 7]]).astype(np.float32)
    im = np.concatenate([r.uniform(-3, 3, 10), [0, 1.5, 0, -0.0, -1e-4, -9]]).astype(np.float32)
    x = (re + 1j * im).astype(np.complex64)
    y = x[::-1].copy()
    a = (r.normal(size=(3, 4)) + 1j * r.normal(size=(3, 4))).astype(np.complex64)
    m = (r.normal(size=(4, 2)) + 1j * r.normal(size=(4, 2))).astype(np.complex64)
    w = r.normal(size=(4, 2)).astype(np.float32)
    img = (r.normal(size=(1, 2, 5)) + 1j * r.normal(size=(1, 2, 5))).astype(np.complex64)
    k = (r.normal(size=(3, 2, 2)) + 1j * r.normal(size=(3, 2, 2))).astype(np.complex64)

    def f(x, y, a, m, w, img, k):
        nz = jnp.where(y == 0, 1 + 1j, y).astype(jnp.complex64)
        return (x / nz, jnp.abs(x), lax.sign(x), jnp.exp(x), jnp.expm1(x), jnp.log(nz), jnp.log1p(x), jnp.sqrt(x),
                lax.rsqrt(nz), jnp.tanh(x), jnp.tan(x), jnp.sin(x), jnp.cos(x), jax.nn.sigmoid(x), lax.pow(nz, x),
                lax.pow(jnp.zeros(3, jnp.complex64), jnp.array([0, 2, 1j], jnp.complex64)),
                x == y, x != y, jnp.sort(x), lax.iota(jnp.complex64, 4), a @ m, a @ w,
                lax.conv_general_dilated(img, k, (1,), "SAME", dimension_numbers=("NCW", "OIW", "NCW")))
    return f, (x, y, a, m, w, img, k)


@program("complex_extremes")
def _():
    # expm1, tanh and tan of complex64 over the whole plane, as jax's
    # FunctionAccuracyTest samples it: zeros, the smallest normal, ordinary
    # values, values where exp overflows, the largest float and the
    # infinities, in every combination of signs.
    edge = np.array([0.0, 1.1754944e-38, 2.3e-23, 1e-4, 0.5, 2.0, 30.0, 88550680.0, 1.7e23, 3.4028235e38, np.inf], np.float32)
    v = np.concatenate([-edge[::-1], edge])
    re, im = np.meshgrid(v, v)
    x = (re + 1j * im).astype(np.complex64).ravel()

    def f(x):
        return jnp.expm1(x), jnp.tanh(x), jnp.tan(x)
    return f, (x,)


@program("fft")
def _():
    r = rng("fft")
    x = r.uniform(-1, 1, (2, 8)).astype(np.float32)

    def f(x):
        c = jnp.fft.fft(x)
        return jnp.abs(jnp.fft.rfft(x)), jnp.real(c), jnp.imag(c), jnp.fft.irfft(jnp.fft.rfft(x), n=8)
    return f, (x,)


@program("fft_empty")
def _():
    # Transforms of nothing: an empty batch and an empty axis.
    def f(x, y):
        return jnp.fft.fft(x), jnp.fft.fft(y), jnp.fft.ifft(y)
    return f, (np.zeros((0, 4), np.complex64), np.zeros((3, 0), np.complex64))


@program("empty_splat")
def _():
    # jax's decompositions (chlo.sinh here) splat their constants over the
    # shape they are given: a splat of an empty tensor.
    def f(x, y):
        return jnp.sinh(x), jnp.arcsin(y), jnp.cosh(x.astype(jnp.float32) * 2)
    return f, (np.zeros((0,), np.int8), np.zeros((2, 0), np.int32))


@program("matmul")
def _():
    r = rng("matmul")
    x = r.normal(size=(8, 16)).astype(np.float32)
    w = r.normal(size=(16, 4)).astype(np.float32)
    b = r.normal(size=(4,)).astype(np.float32)
    xb = x.astype(jnp.bfloat16)
    wb = w.astype(jnp.bfloat16)
    xi = r.integers(-128, 128, (4, 5)).astype(np.int8)
    wi = r.integers(-128, 128, (5, 3)).astype(np.int8)

    def f(x, w, b, xb, wb, xi, wi):
        return (jnp.tanh(x @ w + b), jnp.dot(xb, wb), jnp.dot(xb, wb, preferred_element_type=f32),
                lax.dot(xi, wi, preferred_element_type=i32), jnp.dot(x[0], w[:, 0]), x.T @ x)
    return f, (x, w, b, xb, wb, xi, wi)


@program("einsum")
def _():
    r = rng("einsum")
    a = r.normal(size=(2, 3, 4)).astype(np.float32)
    b = r.normal(size=(2, 4, 5)).astype(np.float32)
    c = r.normal(size=(5, 3)).astype(np.float32)

    def f(a, b, c):
        return (jnp.einsum("bij,bjk->bik", a, b), jnp.einsum("ij,ij->i", a[0], a[1]), jnp.einsum("bij,bjk,kl->bil", a, b, c),
                jnp.einsum("bij->jb", a), jnp.einsum("bij,bik->bjk", a, a))
    return f, (a, b, c)


@program("bool_dot")
def _():
    # jax's lax_test testDotAgainstNumpy and testDotGeneral* on bools: XLA's
    # dot of i1 is the OR of the ANDs.
    r = rng("bool_dot")
    p = r.integers(0, 2, (3, 4)).astype(bool)
    q = r.integers(0, 2, (4, 5)).astype(bool)
    q[:, 0] = False

    def f(p, q):
        return (lax.dot(p, q), lax.dot_general(p, q, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32),
                lax.dot_general(p[None], q.T[None], (((2,), (2,)), ((0,), (0,)))))
    return f, (p, q)


@program("bool_conv")
def _():
    # jax's lax_test testConvGeneralDilated0D on bools (and a 2-D one):
    # XLA's convolution of i1 is the OR of the ANDs.
    r = rng("bool_conv")
    x = r.integers(0, 2, (4, 6)).astype(bool)
    w = r.integers(0, 2, (6, 6)).astype(bool)
    w[0] = False
    wg = r.integers(0, 2, (4, 3)).astype(bool)
    wb = r.integers(0, 2, (4, 6)).astype(bool)
    x2 = (r.random((2, 2, 6, 5)) < 0.2)
    w2 = (r.random((3, 2, 3, 2)) < 0.3)

    def f(x, w, wg, wb, x2, w2):
        dn = ("NC", "OI", "NC")
        return (lax.conv_general_dilated(x, w, (), (), dimension_numbers=dn),
                lax.conv_general_dilated(x, wg, (), (), feature_group_count=2, dimension_numbers=dn),
                lax.conv_general_dilated(x, wb, (), (), batch_group_count=2, dimension_numbers=dn),
                lax.conv_general_dilated(x2, w2, (1, 2), ((1, 1), (0, 1)), rhs_dilation=(1, 2),
                                         dimension_numbers=("NCHW", "OIHW", "NCHW")))
    return f, (x, w, wg, wb, x2, w2)


@program("conv")
def _():
    r = rng("conv")
    x = r.normal(size=(1, 3, 7, 6)).astype(np.float32)
    w = r.normal(size=(4, 3, 3, 3)).astype(np.float32)
    wg = r.normal(size=(6, 1, 3, 2)).astype(np.float32)
    x1 = r.normal(size=(2, 10, 4)).astype(np.float32)
    w1 = r.normal(size=(3, 4, 5)).astype(np.float32)

    def f(x, w, wg, x1, w1):
        nchw = lax.conv_general_dilated(x, w, (1, 2), "SAME", rhs_dilation=(2, 1), dimension_numbers=("NCHW", "OIHW", "NCHW"))
        nhwc = lax.conv_general_dilated(jnp.transpose(x, (0, 2, 3, 1)), jnp.transpose(w, (2, 3, 1, 0)), (2, 1), ((1, 2), (0, 1)),
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
        grouped = lax.conv_general_dilated(x, wg, (1, 1), "VALID", feature_group_count=3, dimension_numbers=("NCHW", "OIHW", "NCHW"))
        transposed = lax.conv_transpose(jnp.transpose(x, (0, 2, 3, 1)), jnp.transpose(w, (2, 3, 1, 0)), (2, 2), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
        dilated = lax.conv_general_dilated(x, w, (1, 1), ((2, 0), (1, 1)), lhs_dilation=(2, 1), dimension_numbers=("NCHW", "OIHW", "NCHW"))
        conv1d = lax.conv_general_dilated(x1, w1, (2,), "SAME", dimension_numbers=("NWC", "WIO", "NWC"))
        return nchw, nhwc, grouped, transposed, dilated, conv1d
    return f, (x, w, wg, x1, w1)


@program("conv_0d")
def _():
    # A convolution without spatial dims, as jax's lax_test testConv0DIsDot
    # and testConvGeneralDilated0D: a matmul, grouped or batch-grouped.
    r = rng("conv_0d")
    x = r.normal(size=(5, 6)).astype(np.float32)
    w = r.normal(size=(4, 6)).astype(np.float32)
    wg = r.normal(size=(4, 3)).astype(np.float32)

    def f(x, w, wg):
        dn = ("NC", "OI", "NC")
        dot = lax.conv_general_dilated(x, w, (), "VALID", dimension_numbers=dn)
        grouped = lax.conv_general_dilated(x, wg, (), "VALID", feature_group_count=2, dimension_numbers=dn)
        grad = jax.grad(lambda w: jnp.sum(lax.conv_general_dilated(x, w, (), "VALID", dimension_numbers=dn) ** 2))(w)
        return dot, grouped, grad
    return f, (x, w, wg)


@program("conv_grad")
def _():
    r = rng("conv_grad")
    x = r.normal(size=(2, 4, 6, 6)).astype(np.float32)
    w = r.normal(size=(6, 2, 3, 3)).astype(np.float32)

    def loss(x, w):
        y = lax.conv_general_dilated(x, w, (2, 1), "SAME", feature_group_count=2, dimension_numbers=("NCHW", "OIHW", "NCHW"))
        return jnp.sum(jnp.tanh(y) ** 2)
    return jax.grad(loss, argnums=(0, 1)), (x, w)


@program("reductions")
def _():
    r = rng("reductions")
    x = r.normal(size=(6, 7)).astype(np.float32)
    x[2, 3] = np.nan
    x[4, 1] = x[4, 5] = 5.0
    n = r.integers(-50, 50, (6, 7)).astype(np.int32)

    def f(x, n):
        return (jnp.sum(x, axis=1), jnp.max(x), jnp.max(x, axis=0), jnp.min(x[:2], axis=1), jnp.prod(x[5]),
                jnp.argmax(x, axis=0), jnp.argmin(x, axis=1), jnp.argmax(n, axis=1), jnp.mean(x, axis=(0, 1)),
                jnp.sum(n), jnp.max(n, axis=0), jnp.min(n), jnp.prod(n[0]), jnp.any(x > 1, axis=0), jnp.all(n > -60),
                jax.nn.logsumexp(jnp.nan_to_num(x), axis=1), jnp.var(jnp.nan_to_num(x), axis=0))
    return f, (x, n)


@program("softmax")
def _():
    r = rng("softmax")
    x = (r.normal(size=(4, 10)) * 5).astype(np.float32)
    x[0, 0] = 80.0
    return (lambda x: (jax.nn.softmax(x, axis=-1), jax.nn.log_softmax(x, axis=0))), (x,)


@program("grad")
def _():
    r = rng("grad")
    w = r.normal(size=(5, 3)).astype(np.float32)
    x = r.normal(size=(4, 5)).astype(np.float32)
    y = r.normal(size=(4, 3)).astype(np.float32)

    def loss(w, x, y):
        return jnp.mean((jnp.tanh(x @ w) - y) ** 2) + 0.1 * jnp.sum(jnp.abs(w))
    return (lambda w, x, y: (jax.grad(loss)(w, x, y), jax.value_and_grad(loss, argnums=(0, 1))(w, x, y))), (w, x, y)


@program("vmap")
def _():
    r = rng("vmap")
    v = r.normal(size=(6, 4)).astype(np.float32)
    m = r.normal(size=(3, 4)).astype(np.float32)
    xs = r.normal(size=(6, 5)).astype(np.float32)
    idx = np.array([0, 4, 2, 9, -1, 3], np.int32)

    def one(v, x, i):
        return jnp.dot(m, v) + jnp.sum(v), x[i], x.at[i].add(10.0)
    return jax.vmap(one), (v, xs, idx)


@program("scan")
def _():
    r = rng("scan")
    xs = r.normal(size=(5, 3)).astype(np.float32)
    w = r.normal(size=(3, 3)).astype(np.float32)

    def f(xs, w):
        def step(carry, x):
            carry = jnp.tanh(carry @ w) * 0.9 + x
            return carry, jnp.sin(carry)
        return lax.scan(step, jnp.zeros((3,), f32), xs), lax.scan(step, jnp.ones((3,), f32), xs, reverse=True)
    return f, (xs, w)


@program("loops")
def _():
    x = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
    w = np.array([1.5, -0.5], np.float32)

    def f(x, w, n):
        a = lax.fori_loop(0, 10, lambda i, acc: acc * 0.9 + w * i.astype(f32), x)

        def cond(s):
            return jnp.logical_and(s[0] < 1000.0, s[1] < n)

        def body(s):
            return s[0] * 2.0 + jnp.sum(w), s[1] + 1
        b = lax.while_loop(cond, body, (jnp.float32(1.0), jnp.int32(0)))

        def outer(i, acc):
            return lax.fori_loop(0, i, lambda j, a: a + (i * j).astype(f32), acc)
        c = lax.fori_loop(0, 4, outer, jnp.float32(0))
        return a, b, c
    return f, (x, w, np.int32(7))


@program("cond_switch")
def _():
    x = np.array([0.5, -2.0, 3.0], np.float32)

    def f(p, i, x):
        a = lax.cond(p, lambda v: v * 2.0 + x[0], lambda v: v - 1.0, x)
        b = lax.switch(i, [jnp.sin, jnp.cos, lambda v: -v * x[1]], x)
        c = lax.switch(i + 5, [jnp.sin, jnp.cos, lambda v: -v], x)  # jax clamps the index
        d = lax.cond(p, lambda v: lax.fori_loop(0, 3, lambda k, a: a * v, v), lambda v: v, x)
        return a + b, c, d
    return f, (np.bool_(True), np.int32(2), x)


@program("random")
def _():
    def f(key):
        k1, k2, k3 = jax.random.split(key, 3)
        k4 = jax.random.fold_in(k3, 7)
        return (jax.random.normal(k1, (3, 2)), jax.random.uniform(k2, (4,), minval=-1.0, maxval=1.0),
                jax.random.randint(k3, (5,), 0, 10), jax.random.bernoulli(k4, 0.3, (6,)),
                jax.random.bits(k4, (3,)), jax.random.permutation(k2, 6), jax.random.key_data(k4))
    return f, (jax.random.key_data(jax.random.key(0)),)


@program("random_typed_key")
def _():
    def f(key, x):
        return (jax.random.normal(key, (2, 3), dtype=bf16), jax.random.uniform(key, (3,), dtype=f16),
                jax.random.categorical(key, x), jax.random.truncated_normal(key, -1.0, 1.0, (4,)),
                jax.random.gumbel(key, (2,)))
    return f, (jax.random.key(42), np.array([[0.1, 2.0, -1.0], [3.0, 0.0, 0.5]], np.float32))


@program("sort")
def _():
    x = np.array([[3.0, np.nan, -0.0, 0.0, -np.inf, 1.0],
                  [np.nan, 2.0, -np.nan, 0.0, -0.0, np.inf],
                  [5.0, 4.0, 3.0, 2.0, 1.0, 0.0],
                  [1.0, 1.0, -1.0, 1.0, -1.0, 1.0]], np.float32)
    n = np.array([[5, -1, 3, 3, 0, -7], [2, 2, 2, 1, 9, 0]], np.int32)

    def f(x, n):
        vals, idx = lax.top_k(x, 3)
        k, v = lax.sort((n[0], x[0]), num_keys=1)
        return (jnp.sort(x), jnp.argsort(x[:, 0]), vals, idx, jnp.sort(x, axis=0, descending=True), jnp.sort(n),
                jnp.argsort(n, axis=1, stable=True), k, v, jnp.sort(n, descending=True), lax.top_k(n, 2)[0],
                jnp.argsort(x, axis=1, descending=True))
    return f, (x, n)


@program("approx_top_k")
def _():
    # lax.approx_max_k / approx_min_k lower to custom_call "ApproxTopK" off
    # TPU; ties and a row of equal values check that the lower index wins.
    x = np.array([[3.0, 7.0, -1.0, 7.0, 0.5, -np.inf, 2.0],
                  [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                  [-2.0, 5.0, 4.0, 3.0, np.inf, -3.0, 0.0]], np.float32)

    def f(x):
        return (*lax.approx_max_k(x, 3), *lax.approx_min_k(x, 2), *lax.approx_max_k(x.T, 2, reduction_dimension=0))
    return f, (x,)


@program("tokens")
def _():
    # A token passed in, passed through, made, and joined (after_all).
    def f(x, t):
        t2 = lax.create_token()
        return x + 1, t, t2, lax.after_all(t, t2)
    return f, (np.arange(3, dtype=np.float32), lax.create_token())


@program("rbg")
def _():
    # rng_bit_generator: the rbg PRNG's bits and distributions, and the raw
    # generator's state and bits of each width. Its bits are each
    # implementation's own (numeric_test.go checks properties, not values).
    def f(k, state):
        new_state, b8 = lax.rng_bit_generator(state, (64,), dtype=jnp.uint8)
        _, b16 = lax.rng_bit_generator(state, (33,), dtype=jnp.uint16)
        _, b32 = lax.rng_bit_generator(new_state, (256,), dtype=jnp.uint32)
        return (new_state, b8, b16, b32, jax.random.bits(k, (7, 5)), jax.random.uniform(k, (4096,)),
                jax.random.normal(k, (4096,)))
    return f, (jax.random.key(0, impl="rbg"), np.array([1, 2, 3, 4], np.uint32))


@program("indexing")
def _():
    r = rng("indexing")
    x = r.normal(size=(5, 7)).astype(np.float32)
    idx = np.array([3, -1, 0, 3], np.int32)
    v = r.normal(size=(4, 7)).astype(np.float32)
    bad = np.array([1, 7, -9, 2], np.int32)

    def f(x, idx, v, bad, i):
        return (x[i], x[:, 2:5], x[idx], x[idx, idx], x[1:4:2, ::3], x[::-1], x[..., None, 1],
                x.at[idx].set(v), x.at[idx, 1].add(1.0), x.at[idx].mul(2.0), x.at[idx].min(v), x.at[idx].max(v),
                x.at[bad].set(v), x.at[bad, bad].add(100.0), x[bad], jnp.take(x, bad, axis=1, mode="clip"),
                jnp.take(x, bad, axis=0, mode="fill", fill_value=-1.0), x.at[bad].get(mode="fill", fill_value=7.0))
    return f, (x, idx, v, bad, np.int32(-2))


@program("dynamic_slice")
def _():
    x = np.arange(30, dtype=np.float32).reshape(6, 5)
    u = np.array([[100, 101], [102, 103]], np.float32)

    def f(x, u, i, j):
        return (lax.dynamic_slice(x, (i, j), (2, 3)), lax.dynamic_slice(x, (i + 10, j - 10), (2, 3)),
                lax.dynamic_slice(x, (-i, 2), (4, 1)), lax.dynamic_update_slice(x, u, (i, j)),
                lax.dynamic_update_slice(x, u, (i + 100, -j - 5)), lax.dynamic_update_slice(x, u, (-1, 4)),
                lax.dynamic_slice_in_dim(x, i * 3, 3, axis=0), lax.dynamic_index_in_dim(x, j + 99, axis=1))
    return f, (x, u, np.int32(2), np.int32(1))


@program("cumulative")
def _():
    r = rng("cumulative")
    x = r.normal(size=(4, 6)).astype(np.float32)
    n = r.integers(-5, 5, (7,)).astype(np.int32)

    def f(x, n):
        return (jnp.cumsum(x, axis=1), jnp.cumsum(x, axis=0), lax.cummax(x, axis=1), lax.cumprod(x, axis=0),
                lax.cumsum(x, axis=1, reverse=True), jnp.cumsum(n), lax.cummin(n), jnp.diff(x, axis=1),
                jnp.where(x > 0, x, 0.0), jnp.where(n % 2 == 0, size=7, fill_value=-1))
    return f, (x, n)


@program("pooling")
def _():
    r = rng("pooling")
    x = r.normal(size=(2, 6, 7, 3)).astype(np.float32)

    def maxpool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")

    def avgpool(x):
        return lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0

    def f(x):
        return (maxpool(x), avgpool(x), jax.grad(lambda x: jnp.sum(maxpool(x) ** 2))(x),
                jax.grad(lambda x: jnp.sum(jnp.sin(avgpool(x))))(x),
                lax.reduce_window(x, 0.0, lax.add, (1, 2, 1, 1), (1, 1, 1, 1), ((0, 0), (1, 1), (0, 0), (0, 0)),
                                  base_dilation=(1, 2, 1, 1)),
                lax.reduce_window(x, 1.0, lax.mul, (1, 2, 2, 1), (1, 1, 1, 1), "VALID"),
                lax.reduce_window(x, jnp.inf, lax.min, (1, 1, 3, 1), (1, 1, 1, 1), ((0, 0), (0, 0), (2, 0), (0, 0))))
    return f, (x,)


@program("mlp_adam")
def _():
    r = rng("mlp_adam")
    lr, b1, b2, eps = 1e-2, 0.9, 0.999, 1e-8

    def loss(params, x, y):
        (w1, c1), (w2, c2) = params
        h = jax.nn.relu(x @ w1 + c1)
        logits = h @ w2 + c2
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))

    def step(params, m, v, t, x, y):
        lval, g = jax.value_and_grad(loss)(params, x, y)
        m = jax.tree.map(lambda m_, g_: b1 * m_ + (1 - b1) * g_, m, g)
        v = jax.tree.map(lambda v_, g_: b2 * v_ + (1 - b2) * g_ * g_, v, g)
        mh = jax.tree.map(lambda m_: m_ / (1 - b1 ** t), m)
        vh = jax.tree.map(lambda v_: v_ / (1 - b2 ** t), v)
        params = jax.tree.map(lambda p, a, b: p - lr * a / (jnp.sqrt(b) + eps), params, mh, vh)
        return lval, params, m, v

    def arr(*s):
        return r.normal(size=s).astype(np.float32) * 0.5
    params = ((arr(4, 8), arr(8)), (arr(8, 3), arr(3)))
    zeros = jax.tree.map(np.zeros_like, params)
    x = arr(5, 4)
    y = np.eye(3, dtype=np.float32)[r.integers(0, 3, 5)]
    return step, (params, zeros, jax.tree.map(lambda a: np.abs(a) * 0.01, params), np.float32(3), x, y)


@program("uint64_internal", x64=True)
def _():
    a = np.array([1, 2, 0xFFFFFFFF, 0x80000000, 12345, 0], np.uint32)
    b = np.array([3, 0xFFFFFFFF, 0xFFFFFFFF, 7, 0, 1], np.uint32)
    x = np.array([1.5, -3.0, 1e19, 2e19, np.nan, 9.3e18], np.float32)

    def f(a, b, x):
        p = a.astype(jnp.uint64) * b.astype(jnp.uint64) * jnp.uint64(0x100000001)
        q = jnp.maximum(p, jnp.uint64(1) << jnp.uint64(63))
        return ((p >> jnp.uint64(32)).astype(u32), p.astype(u32), p.astype(jnp.float32), q < p, jnp.minimum(p, q).astype(u32),
                x.astype(jnp.uint64).astype(jnp.float64), jnp.max(p).astype(jnp.float64), jnp.sort(p).astype(u32))
    return f, (a, b, x)


@program("uint16_internal")
def _():
    a = np.array([0, 1, 65535, 32768, 300, 7, 40000, 2], np.int32)
    b = np.array([0, 3, 2, 32768, 65535, 0, 39999, 9], np.int32)
    x = np.array([-1.0, 0.5, 65535.9, 70000.0, np.nan, 32768.0, 3.7, -0.0], np.float32)

    def f(a, b, x):
        u, v = a.astype(jnp.uint16), b.astype(jnp.uint16)
        return ((u + v).astype(i32), (u * v).astype(i32), lax.div(u, v).astype(i32), lax.rem(u, v).astype(i32),
                jnp.maximum(u, v).astype(i32), jnp.minimum(u, v).astype(f32), u < v, u >= v, (u >> 3).astype(u32),
                lax.shift_right_arithmetic(u, jnp.uint16(1)).astype(i32), x.astype(jnp.uint16).astype(i32),
                jnp.sort(u).astype(i32), jnp.argmax(u), jnp.clip(u, jnp.uint16(5), jnp.uint16(40000)).astype(i32),
                lax.bitcast_convert_type(u, f16), u.astype(jnp.int16).astype(i32))
    return f, (a, b, x)


@program("int64", x64=True)
def _():
    mn = np.iinfo(np.int64).min
    a = np.array([7, -7, mn, mn, 2 ** 60 + 2 ** 36 + 1, -(2 ** 53) - 1, 5, 1 << 40], np.int64)
    b = np.array([0, 2, -1, 0, 3, -1, 64, 63], np.int64)
    d = np.array([1 + 2.0 ** -11 + 2.0 ** -40, 1e300, -0.0, 65519.99, 2.0 ** 63, -(2.0 ** 63) - 4096, np.nan, 1e-8], np.float64)

    def f(a, b, d):
        return (lax.div(a, b), lax.rem(a, b), a * b, lax.shift_left(a, b), lax.shift_right_arithmetic(a, b),
                lax.population_count(a), lax.clz(a), a.astype(jnp.float32), a.astype(jnp.float64), a.astype(i32),
                d.astype(jnp.float16), d.astype(jnp.float32), d.astype(jnp.int64), jnp.max(a), jnp.sort(a))
    return f, (a, b, d)


@program("float64", x64=True)
def _():
    x = np.array([1.0, 1e-300, np.pi, -0.0, 2.0 ** 60 + 1], np.float64)

    def f(x):
        return x * 3.0 + 1.0, jnp.exp(x / 1e3), jnp.sqrt(jnp.abs(x)), x.astype(jnp.float32), x.astype(jnp.int64) // 7
    return f, (x,)


@program("donation")
def _():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    y = np.array([4.0, 5.0], np.float32)
    return "donate", (lambda x, y: (x * 2, jnp.sum(y))), (x, y)


@program("sharding")
def _():
    x = np.array([1.0, -2.0, 3.0], np.float32)

    def f(x):
        s = jax.sharding.SingleDeviceSharding(jax.devices()[0])
        y = lax.with_sharding_constraint(x, s) * 2.0
        return lax.optimization_barrier((y, x)), sharding_call.bind(x), dim_size.bind(jnp.stack([x, -x]))
    return f, (x,)


@program("dce_sink")
def _():
    # jax's lax_test test_dce_sink_prevents_xla_dce: lax.dce_sink with
    # prevent_mlir_dce is a custom_call "dce_sink" with a side effect and
    # no results, here of an array, a pytree's leaves and an int4.
    x = np.array([1.0, -2.0, 3.0], np.float32)

    def f(x):
        y = x + 1
        lax.dce_sink(y, prevent_mlir_dce=True)
        lax.dce_sink((x * 2, {"n": jnp.arange(4)}), prevent_mlir_dce=True)
        lax.dce_sink(y.astype(ml_dtypes.int4), prevent_mlir_dce=True)
        return x - y
    return f, (x,)


@program("ppermute")
def _():
    # ppermute on a mesh of one device: to itself, and to no one.
    x = np.array([1.0, -2.0, 3.0, 4.0], np.float32)
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("i",))

    def on_mesh(perm):
        return jax.shard_map(lambda v: lax.ppermute(v, "i", perm=perm), mesh=mesh, in_specs=jax.P("i"), out_specs=jax.P("i"))

    def f(x):
        return on_mesh([(0, 0)])(x), on_mesh([])(x)
    return f, (x,)


@program("async_collectives")
def _():
    # jax's asynchronous collectives on a mesh of one device, each its
    # operand there: jax 0.12 writes them as custom calls
    # "all-gather-start" and "all-gather-done" and so on (this fixture);
    # jax 0.11 as async_start around the collective and async_done
    # (async_collectives_v011, generated with jax 0.11).
    from jax._src.lax import parallel

    x = np.arange(8, dtype=np.float32) - 3
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("i",))

    def body(v):
        outs = [parallel.all_gather_start(v, "i", tiled=True).done(),
                parallel.psum_start(v, "i").done(),
                parallel.psum_scatter_start(v, "i", tiled=True).done(),
                parallel.all_to_all_start(v, "i", 0, 0, tiled=True).done(),
                parallel.ppermute_start(v, "i", perm=[(0, 0)]).done()]
        return tuple(o * (k + 1) for k, o in enumerate(outs))

    def f(x):
        return jax.shard_map(body, mesh=mesh, in_specs=jax.P("i"), out_specs=jax.P("i"))(x)
    return f, (x,)


program("async_collectives_v011")(PROGRAMS["async_collectives"][0])


@program("reduce_precision")
def _():
    # Ties at each width, values past the narrower exponent's range both
    # ways, subnormals of the narrower format, NaN and infinities.
    r = rng("reduce_precision")
    x = np.concatenate([r.uniform(-3, 3, 24), SPECIAL, [1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-8, 65520.0, 70000.0, 6e-8, 3e-5,
                                                           2**-14, 2**-15, 1e-38, 2**-126, 1.5 * 2**-20, -1 - 2**-4]]).astype(np.float32)

    def f(x):
        outs = [lax.reduce_precision(x, e, m) for e, m in [(5, 10), (8, 7), (4, 3), (5, 2), (8, 0), (2, 1), (8, 23), (11, 23)]]
        h, bf = x.astype(jnp.float16), x.astype(jnp.bfloat16)
        outs += [lax.reduce_precision(h, 5, 3), lax.reduce_precision(h, 4, 2), lax.reduce_precision(bf, 8, 3), lax.reduce_precision(bf, 5, 2)]
        return tuple(outs)
    return f, (x,)


@program("window_dilation")
def _():
    # reduce_window with window_dilation, as jax's lax_test testReduceWindow*
    # (sum, max, a custom body, two inputs), with strides, padding and base
    # dilation beside it.
    r = rng("window_dilation")
    x = np.arange(8, dtype=np.float32)
    y = r.normal(size=(2, 7, 6)).astype(np.float32)
    i = r.integers(-9, 9, (7, 6)).astype(np.int32)

    def f(x, y, i):
        s1 = lax.reduce_window(x, 0.0, lax.add, (2,), (1,), "VALID", window_dilation=(2,))
        m = lax.reduce_window(y, -np.inf, lax.max, (1, 2, 3), (1, 2, 1), ((0, 0), (1, 2), (2, 0)),
                              window_dilation=(1, 3, 2))
        c = lax.reduce_window(i, np.int32(0), lambda a, b: (a + b) | (a & 0), (2, 2), (1, 1), "SAME", window_dilation=(2, 1))
        two = lax.reduce_window((y[0], i), (0.0, np.int32(0)), lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1])),
                                (3, 2), (2, 1), "VALID", base_dilation=(1, 2), window_dilation=(2, 2))
        return s1, m, c, two[0], two[1]
    return f, (x, y, i)


# Complex64 linear algebra, lowered for a platform without LAPACK as the
# linalg_* programs below are; the CPU's answers are LAPACK's c* routines.


def crand(r, *shape):
    return (r.uniform(-1, 1, shape) + 1j * r.uniform(-1, 1, shape)).astype(np.complex64)


def hpd(r, *shape):
    """m m^H + n I: Hermitian positive definite and well conditioned."""
    m = crand(r, *shape)
    return (m @ np.conj(np.swapaxes(m, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(np.complex64)


@program("linalg_complex_cholesky", platform="tpu")
def _():
    r = rng("linalg_complex_cholesky")
    a, one, big = hpd(r, 2, 5, 5), hpd(r, 1, 1), hpd(r, 12, 12)
    indefinite = np.array([[1, 2j], [-2j, 1]], np.complex64)

    def f(a, one, big, bad):
        return (jnp.linalg.cholesky(a), jnp.linalg.cholesky(one), jnp.linalg.cholesky(big, upper=True),
                jnp.linalg.cholesky(bad), lax.linalg.cholesky(a, symmetrize_input=False))
    return f, (a, one, big, indefinite)


@program("linalg_complex_triangular", platform="tpu")
def _():
    r = rng("linalg_complex_triangular")
    a = (crand(r, 2, 4, 4) + 3 * np.eye(4)).astype(np.complex64)
    b, c = crand(r, 2, 4, 3), crand(r, 2, 3, 4)

    def f(a, b, c):
        outs = []
        for lower in (True, False):
            for trans in (0, 1, 2):  # N, T and C (the conjugate transpose)
                for unit in (False, True):
                    outs.append(jax.scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit))
        for lower in (True, False):
            for transpose, conjugate in ((False, False), (True, False), (True, True), (False, True)):
                outs.append(lax.linalg.triangular_solve(a, c, left_side=False, lower=lower, transpose_a=transpose,
                                                        conjugate_a=conjugate))
        outs.append(lax.linalg.triangular_solve(a, b, left_side=True, lower=True, transpose_a=True, conjugate_a=True,
                                                unit_diagonal=True))
        return outs
    return f, (a, b, c)


@program("linalg_complex_qr", platform="tpu")
def _():
    r = rng("linalg_complex_qr")
    tall, wide, batch = crand(r, 5, 3), crand(r, 3, 5), crand(r, 2, 4, 4)
    one = np.array([[-2.5 + 1j]], np.complex64)

    def f(tall, wide, batch, one):
        return (*jnp.linalg.qr(tall), *jnp.linalg.qr(tall, mode="complete"), *jnp.linalg.qr(wide),
                *jnp.linalg.qr(batch), *jnp.linalg.qr(one), jnp.linalg.qr(wide, mode="r"))
    return f, (tall, wide, batch, one)


def _ceigh_outputs(implementation):
    def f(a, one, big):
        outs = []
        for x in (a, one, big):
            for lower in (True, False):
                v, w = lax.linalg.eigh(x, lower=lower, symmetrize_input=False, implementation=implementation)
                # Eigenvectors' phases are unspecified: what defines them.
                outs += [w, jnp.einsum("...ij,...j,...kj->...ik", v, w.astype(v.dtype), jnp.conj(v)),
                         jnp.einsum("...ji,...jk->...ik", jnp.conj(v), v)]
        return outs
    return f


@program("linalg_complex_eigh", platform="tpu")
def _():
    r = rng("linalg_complex_eigh")
    # Not Hermitian: each triangle names a different Hermitian matrix (the
    # diagonal's imaginary parts are not read).
    a = (2 * crand(r, 2, 5, 5)).astype(np.complex64)
    one = np.array([[3.0 + 0.5j]], np.complex64)
    big = crand(r, 12, 12)
    return _ceigh_outputs(lax.linalg.EighImplementation.JACOBI), (a, one, big), _ceigh_outputs(None)


# Programs the translation must refuse, each for one reason the Go test
# asserts; only their artifacts are written (error_NAME.mlir.bc).

@program("error_cholesky")
def _():
    return jnp.linalg.cholesky, (np.eye(3, dtype=np.float32) * 2,)



@program("unsigned_boundary", x64=True)
def _():
    # ui16 and ui64 into and out of main, as jax's lax_test, lax_vmap_op_test
    # and random_test pass them: int16 and int64 bits to the program.
    a = np.array([0, 1, 65535, 32768, 7, 40000], np.uint16)
    b = np.array([0, 2 ** 64 - 1, 2 ** 63, 5, 12345678901234, 1], np.uint64)

    def f(a, b):
        return (a + np.uint16(1), jnp.maximum(a, np.uint16(32769)), a > np.uint16(32767), b + b, b > np.uint64(2 ** 63 - 1),
                a.astype(jnp.uint64) * b, (b >> np.uint64(48)).astype(jnp.uint16))
    return f, (a, b)


# Linear algebra, lowered for a platform without LAPACK (see program).


def spd(r, *shape):
    """m m^T + n I: symmetric positive definite and well conditioned."""
    m = r.uniform(-1, 1, shape).astype(np.float32)
    return (m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1], dtype=np.float32)).astype(np.float32)


@program("linalg_cholesky", platform="tpu")
def _():
    r = rng("linalg_cholesky")
    a, one, big = spd(r, 2, 5, 5), spd(r, 1, 1), spd(r, 16, 16)
    indefinite = np.array([[1, 2], [2, 1]], np.float32)

    def f(a, one, big, bad):
        return (jnp.linalg.cholesky(a), jnp.linalg.cholesky(one), jnp.linalg.cholesky(big, upper=True),
                jnp.linalg.cholesky(bad), lax.linalg.cholesky(a, symmetrize_input=False))
    return f, (a, one, big, indefinite)


@program("linalg_triangular", platform="tpu")
def _():
    r = rng("linalg_triangular")
    a = (r.uniform(-1, 1, (2, 4, 4)) + 3 * np.eye(4)).astype(np.float32)
    b = r.uniform(-2, 2, (2, 4, 3)).astype(np.float32)
    c = r.uniform(-2, 2, (2, 3, 4)).astype(np.float32)

    def f(a, b, c):
        outs = []
        for lower in (True, False):
            for trans in (0, 1, 2):
                for unit in (False, True):
                    outs.append(jax.scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit))
        outs.append(lax.linalg.triangular_solve(a, c, left_side=False, lower=True, transpose_a=True))
        outs.append(lax.linalg.triangular_solve(a, c, left_side=False, lower=False, unit_diagonal=True))
        return outs
    return f, (a, b, c)


@program("linalg_qr", platform="tpu")
def _():
    r = rng("linalg_qr")
    tall, wide = r.uniform(-1, 1, (5, 3)).astype(np.float32), r.uniform(-1, 1, (3, 5)).astype(np.float32)
    batch, one = r.uniform(-1, 1, (2, 4, 4)).astype(np.float32), np.array([[-2.5]], np.float32)

    def f(tall, wide, batch, one):
        return (*jnp.linalg.qr(tall), *jnp.linalg.qr(tall, mode="complete"), *jnp.linalg.qr(wide),
                *jnp.linalg.qr(batch), *jnp.linalg.qr(one), jnp.linalg.qr(wide, mode="r"))
    return f, (tall, wide, batch, one)


def _eigh_outputs(implementation):
    def f(a, one, big):
        outs = []
        for x in (a, one, big):
            for lower in (True, False):
                v, w = lax.linalg.eigh(x, lower=lower, symmetrize_input=False, implementation=implementation)
                # Eigenvectors' signs are unspecified: what defines them.
                outs += [w, jnp.einsum("...ij,...j,...kj->...ik", v, w, v), jnp.einsum("...ji,...jk->...ik", v, v)]
        return outs
    return f


@program("linalg_eigh", platform="tpu")
def _():
    r = rng("linalg_eigh")
    # Not symmetric: each triangle names a different symmetric matrix.
    a = r.uniform(-2, 2, (2, 5, 5)).astype(np.float32)
    one = np.array([[3.0]], np.float32)
    big = r.uniform(-1, 1, (12, 12)).astype(np.float32)
    return _eigh_outputs(lax.linalg.EighImplementation.JACOBI), (a, one, big), _eigh_outputs(None)


@program("linalg_svd", platform="tpu")
def _():
    r = rng("linalg_svd")
    tall, wide = r.uniform(-1, 1, (5, 3)).astype(np.float32), r.uniform(-1, 1, (3, 5)).astype(np.float32)
    batch = r.uniform(-1, 1, (2, 4, 4)).astype(np.float32)

    def f(tall, wide, batch):
        outs = []
        for x in (tall, wide, batch):
            u, s, vh = jnp.linalg.svd(x, full_matrices=False)
            # Singular vectors' signs are unspecified: what defines them.
            outs += [s, jnp.linalg.svd(x, compute_uv=False), jnp.einsum("...ij,...j,...jk->...ik", u, s, vh),
                     jnp.einsum("...ji,...jk->...ik", u, u), jnp.einsum("...ij,...kj->...ik", vh, vh)]
        return outs
    return f, (tall, wide, batch)


# jax's CPU lowerings through LAPACK's FFI custom calls (lapack_sgeev_ffi,
# sgehrd, ssytrd, sgeqp3, sorgqr, sgees), which jax_plugins.metalplug
# registers for its platform too: lowered for "cpu".


def general(r, *shape):
    return r.uniform(-1, 1, shape).astype(np.float32)


@program("linalg_eig", platform="cpu")
def _():
    r = rng("linalg_eig")
    a, big = general(r, 2, 4, 4), general(r, 7, 7)
    rot = np.array([[0, -1], [1, 0]], np.float32)
    one = np.array([[-1.5]], np.float32)
    bad = np.array([[1, np.nan], [0, 1]], np.float32)
    coeffs = np.array([1, -6, 11, -6, 2.5], np.float32)

    def f(a, big, rot, one, bad, coeffs):
        w, vl, vr = lax.linalg.eig(a, compute_left_eigenvectors=True)
        # LAPACK's normalization (unit norm, largest component real) leaves
        # a sign per vector: what defines them, and their moduli.
        right = jnp.einsum("...ij,...jk->...ik", a, vr) - vr * w[..., None, :]
        left = jnp.einsum("...ji,...jk->...ik", vl.conj(), a) - vl.conj().swapaxes(-1, -2) * w[..., :, None]
        return (w, jnp.abs(vl), jnp.abs(vr), right, left, *jnp.linalg.eig(rot), *jnp.linalg.eig(one), jnp.linalg.eigvals(big),
                jnp.linalg.eigvals(bad), jnp.roots(coeffs, strip_zeros=False), jnp.poly(rot))
    return f, (a, big, rot, one, bad, coeffs)


@program("linalg_hessenberg", platform="cpu")
def _():
    r = rng("linalg_hessenberg")
    a, big, one = general(r, 2, 5, 5), general(r, 9, 9), np.array([[2.0]], np.float32)

    def f(a, big, one):
        h, q = jax.scipy.linalg.hessenberg(big, calc_q=True)
        return (*lax.linalg.hessenberg(a), *lax.linalg.hessenberg(one), h, q, q @ h @ q.T)
    return f, (a, big, one)


@program("linalg_tridiagonal", platform="cpu")
def _():
    r = rng("linalg_tridiagonal")
    # Not symmetric: each triangle names a different symmetric matrix.
    a, one = general(r, 2, 6, 6), np.array([[4.0]], np.float32)

    def f(a, one):
        return (*lax.linalg.tridiagonal(a, lower=True), *lax.linalg.tridiagonal(a, lower=False),
                *lax.linalg.tridiagonal(one, lower=True))
    return f, (a, one)


@program("linalg_qr_pivoted", platform="cpu")
def _():
    r = rng("linalg_qr_pivoted")
    tall, wide, sq = general(r, 6, 4), general(r, 3, 5), general(r, 4, 4)
    rank1 = np.outer(np.arange(1, 5), np.arange(1, 4)).astype(np.float32)

    def f(tall, wide, sq, rank1):
        return (*jax.scipy.linalg.qr(tall, pivoting=True), *jax.scipy.linalg.qr(wide, pivoting=True),
                *jax.scipy.linalg.qr(sq, pivoting=True, mode="economic"), *jax.scipy.linalg.qr(rank1, mode="r", pivoting=True))
    return f, (tall, wide, sq, rank1)


@program("linalg_schur", platform="cpu")
def _():
    r = rng("linalg_schur")
    a, one = general(r, 6, 6), np.array([[3.0]], np.float32)
    rot = np.array([[1, -2, 0], [2, 1, 0], [0, 0, 3]], np.float32)

    def f(a, one, rot):
        t, z = jax.scipy.linalg.schur(a)
        # Z's columns have signs of the algorithm's choosing (T's entries
        # follow): what defines them, and the moduli.
        return (jnp.abs(t), jnp.abs(z), z @ t @ z.T, z.T @ z, *jax.scipy.linalg.schur(one), jax.scipy.linalg.schur(rot)[0])
    return f, (a, one, rot)


# The complex64 routines jax's CPU lowers to (lapack_cgeev_ffi,
# lapack_chetrd_ffi), the IR's complex64 eig and tridiagonal.


@program("linalg_complex_eig", platform="cpu")
def _():
    r = rng("linalg_complex_eig")
    a, big = crand(r, 2, 4, 4), crand(r, 7, 7)
    rot = np.array([[0, -1], [1, 0]], np.complex64)
    one = np.array([[-1.5 + 2j]], np.complex64)
    bad = np.array([[1, np.nan], [0, 1j]], np.complex64)
    coeffs = np.array([1, -1 - 2j, 0, 3j, -2], np.complex64)

    def f(a, big, rot, one, bad, coeffs):
        w, vl, vr = lax.linalg.eig(a, compute_left_eigenvectors=True)
        # zgeev's normalization (unit norm, the largest component real and
        # positive) leaves no freedom for distinct eigenvalues: the vectors
        # themselves, and what defines them. rot's components tie in
        # modulus, so only their moduli.
        right = jnp.einsum("...ij,...jk->...ik", a, vr) - vr * w[..., None, :]
        left = jnp.einsum("...ji,...jk->...ik", vl.conj(), a) - vl.conj().swapaxes(-1, -2) * w[..., :, None]
        wr, vrot = jnp.linalg.eig(rot)
        return (w, vl, vr, right, left, wr, jnp.abs(vrot), *jnp.linalg.eig(one), *jnp.linalg.eig(big),
                jnp.linalg.eigvals(bad), jnp.roots(coeffs, strip_zeros=False), jnp.poly(a[0]))
    return f, (a, big, rot, one, bad, coeffs)


@program("linalg_complex_tridiagonal", platform="cpu")
def _():
    r = rng("linalg_complex_tridiagonal")
    # Not Hermitian: each triangle names a different Hermitian matrix (the
    # diagonal's imaginary parts are not read).
    a, big, one = 2 * crand(r, 2, 6, 6), crand(r, 12, 12), np.array([[4.0 + 1j]], np.complex64)

    def f(a, big, one):
        return (*lax.linalg.tridiagonal(a, lower=True), *lax.linalg.tridiagonal(a, lower=False),
                *lax.linalg.tridiagonal(big, lower=True), *lax.linalg.tridiagonal(one, lower=False))
    return f, (a, big, one)


# lu, svd and eigh as jax's CPU lowers them (lapack_{s,d}getrf_ffi,
# {s,d}gesdd and gesvd, {s,d}syevd and cheevd), which jax_plugins.metalplug
# registers for its platform in place of the platform-independent ones.
# Each program holds a float64 matrix too (x64).


@program("linalg_lu", x64=True, platform="cpu")
def _():
    r = rng("linalg_lu")
    sq, tall, wide, batch = general(r, 5, 5), general(r, 6, 4), general(r, 3, 5), general(r, 2, 4, 4)
    # Rank 2, its eliminations exact: U's last diagonal entry is zero
    # (getrf's info 3, which jax accepts).
    singular = np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], np.float32)
    zero, one = np.zeros((3, 3), np.float32), np.array([[-2.0]], np.float32)
    d = r.uniform(-1, 1, (4, 4))

    # Not solve or inv: lowered for the CPU, their triangular solves are
    # LAPACK's trsm, where metalplug gets stablehlo.triangular_solve.
    def f(sq, tall, wide, batch, singular, zero, one, d):
        outs = []
        for x in (sq, tall, wide, batch, singular, zero, one, d):
            outs += lax.linalg.lu(x)
        return (*outs, jnp.linalg.det(batch), *jnp.linalg.slogdet(sq), jnp.linalg.det(d), *jax.scipy.linalg.lu_factor(sq))
    return f, (sq, tall, wide, batch, singular, zero, one, d)


@program("linalg_svd_lapack", x64=True, platform="cpu")
def _():
    r = rng("linalg_svd_lapack")
    tall, wide, batch = general(r, 5, 3), general(r, 3, 5), general(r, 2, 4, 4)
    rank1 = np.outer(np.arange(1, 5), np.arange(1, 4)).astype(np.float32)
    d = r.uniform(-1, 1, (4, 3))

    def f(tall, wide, batch, rank1, d):
        outs = []
        for x in (tall, wide, batch, rank1, d):
            k = min(x.shape[-2:])
            for full in (False, True):
                u, s, vh = jnp.linalg.svd(x, full_matrices=full)
                # Singular vectors' signs are unspecified (and rank1's null
                # space): what defines them.
                outs += [s, jnp.einsum("...ij,...j,...jk->...ik", u[..., :k], s, vh[..., :k, :]),
                         jnp.einsum("...ji,...jk->...ik", u, u), jnp.einsum("...ij,...kj->...ik", vh, vh)]
            outs += [lax.linalg.svd(x, full_matrices=False, compute_uv=False),
                     lax.linalg.svd(x, full_matrices=True, compute_uv=False)]
            if hasattr(lax.linalg, "SvdAlgorithm"):  # gesvd, jax's CPU's for the QR algorithm
                outs.append(lax.linalg.svd(x, full_matrices=False, compute_uv=False, algorithm=lax.linalg.SvdAlgorithm.QR))
        return (*outs, jnp.linalg.pinv(tall), jnp.linalg.matrix_rank(rank1), jnp.linalg.norm(wide, 2),
                jnp.linalg.norm(batch, "nuc", axis=(-2, -1)), jnp.linalg.cond(batch))
    return f, (tall, wide, batch, rank1, d)


@program("linalg_eigh_lapack", x64=True, platform="cpu")
def _():
    r = rng("linalg_eigh_lapack")
    # Not symmetric (Hermitian): each triangle names a different matrix.
    a, one, big = r.uniform(-2, 2, (2, 5, 5)).astype(np.float32), np.array([[3.0]], np.float32), general(r, 12, 12)
    d, c = r.uniform(-1, 1, (6, 6)), (2 * crand(r, 2, 4, 4)).astype(np.complex64)
    eye = np.eye(4, dtype=np.float32)  # one eigenvalue, four times

    def f(a, one, big, d, c, eye):
        outs = []
        for x in (a, one, big, d, c, eye):
            for lower in (True, False):
                v, w = lax.linalg.eigh(x, lower=lower, symmetrize_input=False)
                # Eigenvectors' signs (phases) are unspecified: what defines them.
                outs += [w, jnp.einsum("...ij,...j,...kj->...ik", v, w.astype(v.dtype), jnp.conj(v)),
                         jnp.einsum("...ji,...jk->...ik", jnp.conj(v), v)]
        return (*outs, jnp.linalg.eigvalsh(big), jnp.linalg.eigvalsh(c, UPLO="U"))
    return f, (a, one, big, d, c, eye)


@program("error_linalg_cgetrf", platform="cpu")
def _():
    return lax.linalg.lu, (np.eye(3, dtype=np.complex64),)


@program("error_linalg_dgeev", x64=True, platform="cpu")
def _():
    return jnp.linalg.eigvals, (np.eye(3),)


@program("error_linalg_cgees", platform="cpu")
def _():
    return jax.scipy.linalg.schur, (np.eye(3, dtype=np.complex64),)


# Narrow types: bytes at main's boundary, float32 (or int8, uint8) inside.

import ml_dtypes  # noqa: E402

F8 = [ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e5m2fnuz,
      ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e4m3, ml_dtypes.float8_e3m4, ml_dtypes.float8_e8m0fnu]


@program("narrow_convert")
def _():
    # float32 to each 8-bit float over the specials, each format's edges
    # (largest finite, ties, subnormals, overflow), random values across the
    # exponent range and random bit patterns; and every code of each back
    # to float32, f16, bf16 and int32. XLA's CPU and ml_dtypes agree on all
    # of these but float32 subnormals to f8e8m0fnu, which are left out.
    r = rng("narrow_convert")
    edges = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 1.5, 3.0, 6.0, 2 ** -126, 1e-20, -1e-20,
             464, -464, 448, 480, 240, 248, 232, 30, 31, 57344, 61440, 65536, 15.5, 15.75, 16, 7.0, 7.5, 8.0, 6.5, -7.5]
    for t in F8:
        fi = ml_dtypes.finfo(t)
        for v in (float(fi.max), float(fi.smallest_subnormal), float(fi.tiny)):
            edges += [v, -v, v * 1.5, v * 0.5, v * 0.75, v * 1.25, v * 1.0625]
    rand = r.standard_normal(400) * np.exp2(r.integers(-24, 20, 400))
    bits = np.frombuffer(r.integers(0, 2 ** 32, 400, dtype=np.uint32).tobytes(), np.float32)
    x = np.concatenate([np.array(edges, np.float32), rand.astype(np.float32), bits])
    x = np.where(np.abs(x) < 2 ** -126, np.float32(0), x).astype(np.float32)  # no float32 subnormals
    codes = [np.arange(256, dtype=np.uint8).view(t) for t in F8]

    def f(x, *codes):
        outs = [x.astype(t) for t in F8]
        for c in codes:
            outs += [c.astype(f32), c.astype(f16), c.astype(bf16), c.astype(i32), lax.bitcast_convert_type(c, jnp.uint8)]
        outs += [codes[0].astype(ml_dtypes.float8_e4m3fn), codes[1].astype(ml_dtypes.float8_e5m2),
                 lax.bitcast_convert_type(np.arange(256, dtype=np.uint8), ml_dtypes.float8_e4m3fn)]
        return outs
    return f, (x, *codes)


@program("narrow_arith")
def _():
    r = rng("narrow_arith")
    e4, e5 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2
    a = np.concatenate([r.uniform(-20, 20, 28), [0, 448, -448, 1, 0.0078125]]).astype(e4)
    b = np.concatenate([r.uniform(-20, 20, 28), [0, 448, 448, 3, 0.0078125]]).astype(e4)
    c = r.uniform(-4, 4, (4, 8)).astype(e5)
    d = r.uniform(-4, 4, (8, 3)).astype(e5)
    m = r.uniform(-4, 4, (4, 8)).astype(e4)
    # Sums of f8 round at every step, in an order that is XLA's own: these
    # small integers' partial sums are all exact in f8e4m3fn.
    k = r.integers(-2, 3, 8).astype(e4)

    def f(a, b, c, d, m, k):
        return (a + b, a - b, a * b, a / b, jnp.maximum(a, b), a < b, -a, jnp.abs(a), jnp.exp(a / 8), jnp.sqrt(jnp.abs(a)),
                a * e4(2) + e4(0.5), jnp.where(a > 0, a, b), jnp.sum(k), c @ d,
                lax.dot_general(m, d, (((1,), (0,)), ((), ())), preferred_element_type=f32),
                jnp.cumsum(k), jnp.sort(a), a.astype(e5) * e5(3), jnp.floor(a), lax.reduce_precision(a.astype(f32), 4, 3))
    return f, (a, b, c, d, m, k)


@program("narrow_ints")
def _():
    r = rng("narrow_ints")
    s4, u4 = ml_dtypes.int4, ml_dtypes.uint4
    x = np.concatenate([r.integers(-8, 8, 12), [7, -8, -1, 0, 7, -8]]).astype(s4)
    y = np.concatenate([r.integers(-8, 8, 12), [1, -1, 3, 0, 7, 2]]).astype(s4)
    u = np.concatenate([r.integers(0, 16, 12), [15, 0, 8, 1, 15, 3]]).astype(u4)
    v = np.concatenate([r.integers(0, 16, 12), [1, 1, 2, 0, 15, 3]]).astype(u4)
    fl = np.array([-100, -8.5, -8, -1.5, 0, 0.5, 3.7, 7, 7.9, 100, np.nan, 15.5, 16, 20, -0.5, 2, 9, -3], np.float32)
    # XLA's CPU computes some int4 ops on the int8 it holds them in without
    # wrapping (population_count of int4 -1 is 8, uint4 15 >> 1 is 15 from
    # a parameter); those are left out.
    p = r.integers(-8, 8, (3, 6)).astype(s4)
    q = r.integers(-8, 8, (6, 2)).astype(s4)

    def f(x, y, u, v, fl, p, q):
        return (x + y, x - y, x * y, x // jnp.where(y == 0, s4(1), y), jnp.maximum(x, y), x < y, -x, ~x,
                x >> s4(1), lax.shift_right_logical(x, s4(1)), x << s4(2), x.astype(i32), x.astype(f32),
                u + v, u * v, u - v, u > v, ~u, u.astype(i32), x.astype(u4), u.astype(s4),
                fl.astype(s4), fl.astype(u4), lax.population_count(u), lax.clz(u),
                lax.dot_general(p.astype(i32), q.astype(i32), (((1,), (0,)), ((), ()))), jnp.sort(x),
                jnp.sum(x.astype(i32)), lax.bitcast_convert_type(x, u4), lax.rem(x, jnp.where(y == 0, s4(1), y)))
    return f, (x, y, u, v, fl, p, q)


@program("narrow_bitcast")
def _():
    # bitcast_convert between the sub-byte integers and wider types, both
    # ways (the cases jax 0.11's lax tests run): the narrow side has a last
    # dim of wide/narrow elements, the first the least significant bits; a
    # signed element with its top bit set is negative (int4 0xF is -1).
    r = rng("narrow_bitcast")
    s4, u4, s2, u2 = ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2
    a = r.integers(-8, 8, (16, 4)).astype(s4)
    b = np.zeros((0,), np.uint32)
    c = r.integers(0, 256, 64, dtype=np.uint8)
    d = r.integers(0, 16, (8, 8)).astype(u4)
    e = np.array([0, 0, 12, 3], np.int8).astype(s4)  # f16 0x3C00 is 1.0
    f = np.array(-1.7e-3, np.float32)
    g = np.array([0x7F, -0x6E], np.int8)
    h = r.integers(-8, 8, (2, 3, 4, 8)).astype(s4)
    h[..., 7] = np.clip(h[..., 7], 0, 7)  # no float32 NaN
    k = r.integers(-2, 2, (5, 4)).astype(s2)
    m = r.integers(0, 2 ** 16, 6, dtype=np.uint16)
    f4 = ml_dtypes.float4_e2m1fn
    n = np.array([0.5, -6, 1, 3, 0, -0.0, 2, 4], np.float32).astype(f4).reshape(4, 2)

    def fn(a, b, c, d, e, f, g, h, k, m, n):
        return (lax.bitcast_convert_type(a, jnp.int16), lax.bitcast_convert_type(b, u4), lax.bitcast_convert_type(c, u4),
                lax.bitcast_convert_type(d, jnp.int32), lax.bitcast_convert_type(e, f16), lax.bitcast_convert_type(f, u4),
                lax.bitcast_convert_type(g, s4), lax.bitcast_convert_type(h, f32), lax.bitcast_convert_type(k, jnp.uint8),
                lax.bitcast_convert_type(m, s2), lax.bitcast_convert_type(lax.bitcast_convert_type(a, jnp.int16), s4),
                lax.bitcast_convert_type(c, s4).astype(i32), lax.bitcast_convert_type(m, u2),
                lax.bitcast_convert_type(n, jnp.uint8), lax.bitcast_convert_type(c, f4))
    return fn, (a, b, c, d, e, f, g, h, k, m, n)


@program("error_f64_atan2", x64=True)
def _():
    return (lambda x: jnp.arctan2(x, x + 1)), (np.arange(3, dtype=np.float64),)


# ---------------------------------------------------------------------------


def tensor(a):
    a = np.asarray(a)
    if jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key):
        a = np.asarray(jax.random.key_data(a))
    a = np.array(a, order="C", copy=True)  # ascontiguousarray would make a scalar 1-d
    return {"dtype": a.dtype.name, "shape": list(a.shape), "data": base64.b64encode(a.tobytes()).decode()}


def leaves(tree):
    out = []
    for leaf in jax.tree.leaves(tree):
        if isinstance(leaf, jax.Array) and jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            leaf = jax.random.key_data(leaf)
        if isinstance(leaf, core.Token):  # no data: the IR's empty bool tensor
            leaf = np.zeros((0,), np.bool_)
        out.append(np.asarray(leaf))
    return out


def build(name):
    made = PROGRAMS[name][0]()
    donate = ()
    cpu_fn = None
    if made[0] == "donate":
        _, fn, args = made
        donate = (0, 1)
    elif len(made) == 3:
        fn, args, cpu_fn = made
    else:
        fn, args = made
    jitted = jax.jit(fn, keep_unused=True, donate_argnums=donate)
    platform = PROGRAMS[name][2]
    if platform:
        lowered = jitted.trace(*args).lower(lowering_platforms=(platform,))
    else:
        lowered = jitted.lower(*args)
    if cpu_fn is not None:
        jitted = jax.jit(cpu_fn, keep_unused=True)
    module = lowered.compiler_ir("stablehlo")
    code = _jax.mlir.serialize_portable_artifact(jax_mlir.module_to_bytecode(module), TARGET, True)
    ins = leaves(args)
    def on_device(a):
        return a if isinstance(a, core.Token) else jax.tree.map(jnp.asarray, a)
    outs = leaves(jitted(*[on_device(a) for a in args]))
    return code, ins, outs


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--only", default="", help="comma-separated program names")
    opts = ap.parse_args(argv)
    names = [n for n in opts.only.split(",") if n] or list(PROGRAMS)
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        ap.error(f"unknown programs: {', '.join(unknown)}")
    os.makedirs(opts.outdir, exist_ok=True)
    versions = {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "numpy": np.__version__, "vhlo": TARGET}
    for name in names:
        if PROGRAMS[name][1]:
            with jax.enable_x64(True):
                code, ins, outs = build(name)
        else:
            code, ins, outs = build(name)
        with open(os.path.join(opts.outdir, name + ".mlir.bc"), "wb") as f:
            f.write(code)
        if name.startswith("error_"):
            print(f"{name}: {len(code)} bytes")
            continue
        doc = {"name": name, "versions": versions, "inputs": [tensor(a) for a in ins], "outputs": [tensor(a) for a in outs]}
        with open(os.path.join(opts.outdir, name + ".json"), "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print(f"{name}: {len(code)} bytes, {len(ins)} inputs, {len(outs)} outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
