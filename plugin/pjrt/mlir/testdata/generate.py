#!/usr/bin/env python3
"""Writes the jax fixtures of plugin/pjrt/mlir: the bytes PJRT_Client_Compile
receives for a set of small jax programs, and the text jaxlib prints for them.

Usage: python generate.py OUTDIR [--only NAME[,NAME...]] [--stablehlo DIR [--skip-jax]]

For every program and target version this writes, into OUTDIR:

  NAME.mlir.bc     the portable artifact at VHLO 1.22.0 (jaxlib 0.12's
                   current), byte for byte what jaxlib hands a PJRT plugin:
                   serialize_portable_artifact(module_to_bytecode(m), v, True)
  NAME.vhlo.txt.gz the same artifact read back by jaxlib's own MLIR (which
                   registers the vhlo dialect) and printed in generic form with
                   locations: the oracle the Go golden test compares against
                   (gzip, since jax's locations make the text ten times the
                   size of the bytecode; read it with zcat)
  NAME.1_16_3.*    the same two files at VHLO 1.16.3 (what XLA serializes to
                   when a plugin declares no stablehlo_current_version), for
                   the programs listed in OLD_TARGET

With --stablehlo DIR (an openxla/stablehlo checkout) it also copies a few
of StableHLO's VHLO golden files into OUTDIR/stablehlo, each with

  STEM.mlir.bc       the golden file, as committed in stablehlo/tests/vhlo
  STEM.vhlo.txt.gz   jaxlib's generic print of it (gzip, to keep it small)
  STEM.ops.txt       the op names of its .mlir source, in order

It takes no other input and keeps no state, so a build target can run it as
`python generate.py plugin/pjrt/mlir/testdata`. It needs jax and jaxlib
installed (see README.md for the versions the checked-in files came from).
"""

import argparse
import gzip
import os
import re
import shutil
import sys

# Lowering needs no accelerator; keep jax from looking for one.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

# Locations carry source paths; strip the directory so fixtures do not depend
# on where the repository is checked out.
jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")

from jax._src.interpreters import mlir as jax_mlir  # noqa: E402
from jaxlib import _jax  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402

CURRENT = "1.22.0"
OLD = "1.16.3"

f32 = jnp.float32


def spec(shape, dtype=f32):
    return jax.ShapeDtypeStruct(shape, dtype)


# ---------------------------------------------------------------------------
# The programs. Each returns (function, example arguments); shapes are small
# so every fixture stays a few KB.


def elementwise():
    def f(x, y):
        a = jnp.sin(x) * jnp.exp(y) - jnp.log1p(jnp.abs(x)) / jnp.sqrt(y * y + 1.0)
        b = jnp.maximum(a, 0.5) + jnp.minimum(x, y) ** 2
        c = jnp.clip(jax.nn.sigmoid(b), 0.1, 0.9) + jnp.floor(x) - jnp.round(y)
        return jnp.tanh(c) * lax.rsqrt(jnp.cosh(x) + 2.0), jnp.power(jnp.abs(y), x)
    return f, (spec((4, 5)), spec((4, 5)))


def matmul():
    def f(x, w, b):
        return jnp.tanh(x @ w + b)
    return f, (spec((8, 16)), spec((16, 4)), spec((4,)))


def einsum():
    def f(a, b):
        return jnp.einsum("bij,bjk->bik", a, b), jnp.einsum("ij,ij->i", a[0], a[1])
    return f, (spec((2, 3, 4)), spec((2, 4, 5)))


def conv():
    def f(x, w):
        y = lax.conv_general_dilated(
            x, w, window_strides=(1, 2), padding="SAME", rhs_dilation=(2, 1),
            dimension_numbers=("NCHW", "OIHW", "NCHW"))
        z = lax.conv_general_dilated(
            jnp.transpose(x, (0, 2, 3, 1)), jnp.transpose(w, (2, 3, 1, 0)),
            window_strides=(1, 1), padding=((1, 1), (0, 0)),
            dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return y, z
    return f, (spec((1, 3, 8, 8)), spec((4, 3, 3, 3)))


def reductions():
    def f(x):
        return jnp.sum(x, axis=1), jnp.max(x), jnp.argmax(x, axis=0), jnp.mean(x, axis=(0, 1))
    return f, (spec((6, 7)),)


def grad_loss():
    def loss(w, x, y):
        return jnp.mean((jnp.tanh(x @ w) - y) ** 2)
    return jax.grad(loss), (spec((5, 3)), spec((4, 5)), spec((4, 3)))


def vmap_dot():
    def f(v, m):
        return jnp.dot(m, v) + jnp.sum(v)
    return jax.vmap(f, in_axes=(0, None)), (spec((6, 4)), spec((3, 4)))


def scan():
    def f(xs):
        def step(carry, x):
            carry = carry * 0.9 + x
            return carry, jnp.sin(carry)
        return lax.scan(step, jnp.zeros((3,), f32), xs)
    return f, (spec((5, 3)),)


def fori_loop():
    def f(x):
        return lax.fori_loop(0, 10, lambda i, acc: acc * 1.5 + i.astype(f32), x)
    return f, (spec((2, 2)),)


def while_loop():
    def f(x):
        def cond(s):
            return jnp.logical_and(s[0] < 100.0, s[1] < 7)
        def body(s):
            return s[0] * 2.0 + 1.0, s[1] + 1
        return lax.while_loop(cond, body, (x, jnp.int32(0)))
    return f, (spec(()),)


def cond_switch():
    def f(p, i, x):
        a = lax.cond(p, lambda v: v * 2.0, lambda v: v - 1.0, x)
        b = lax.switch(i, [jnp.sin, jnp.cos, lambda v: -v], x)
        return a + b
    return f, (spec((), jnp.bool_), spec((), jnp.int32), spec((3,)))


def random():
    def f(key):
        k1, k2 = jax.random.split(key)
        return jax.random.normal(k1, (3, 2)), jax.random.uniform(k2, (4,), minval=-1.0, maxval=1.0)
    return f, (jax.random.key_data(jax.random.key(0)),)


def random_typed_key():
    # A typed key as an argument is what makes jax emit sdy.mesh,
    # sdy.sharding_constraint and builtin.unrealized_conversion_cast around
    # the VHLO ops, even on one device.
    def f(key):
        return jax.random.bernoulli(key, 0.3, (5,)), jax.random.randint(key, (2,), 0, 10)
    return f, (jax.random.key(0),)


def sharding():
    def f(x):
        s = jax.sharding.SingleDeviceSharding(jax.devices()[0])
        return lax.with_sharding_constraint(x, s) * 2.0
    return f, (spec((3,)),)


def sort():
    def f(x):
        vals, idx = lax.top_k(x, 3)
        return jnp.sort(x), jnp.argsort(x[:, 0]), vals, idx
    return f, (spec((4, 6)),)


def indexing():
    def f(x, idx, v):
        g = x[idx]
        s = x.at[idx].set(v)
        a = x.at[idx, 1].add(1.0)
        return g, s, a, x[1:3, ::2]
    return f, (spec((5, 4)), spec((2,), jnp.int32), spec((2, 4)))


def dynamic_slice():
    def f(x, i, u):
        y = lax.dynamic_slice(x, (i, 0), (2, 3))
        return y, lax.dynamic_update_slice(x, u, (0, i))
    return f, (spec((6, 5)), spec((), jnp.int32), spec((2, 2)))


def mlp_adam():
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8

    def loss(params, x, y):
        (w1, b1_), (w2, b2_) = params
        h = jax.nn.relu(x @ w1 + b1_)
        logits = h @ w2 + b2_
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))

    def step(params, m, v, t, x, y):
        g = jax.grad(loss)(params, x, y)
        m = jax.tree.map(lambda m_, g_: b1 * m_ + (1 - b1) * g_, m, g)
        v = jax.tree.map(lambda v_, g_: b2 * v_ + (1 - b2) * g_ * g_, v, g)
        mh = jax.tree.map(lambda m_: m_ / (1 - b1 ** t), m)
        vh = jax.tree.map(lambda v_: v_ / (1 - b2 ** t), v)
        params = jax.tree.map(lambda p, a, b: p - lr * a / (jnp.sqrt(b) + eps), params, mh, vh)
        return params, m, v

    p = ((spec((4, 8)), spec((8,))), (spec((8, 3)), spec((3,))))
    return step, (p, p, p, spec(()), spec((2, 4)), spec((2, 3)))


def float16():
    def f(x, y):
        return (jnp.exp(x) * y + jnp.float16(0.5)).astype(jnp.float16), jnp.sum(x * y)
    return f, (spec((3, 4), jnp.float16), spec((3, 4), jnp.float16))


def bfloat16():
    def f(x, w):
        return jax.nn.gelu(x @ w).astype(jnp.bfloat16), (x @ w).astype(f32)
    return f, (spec((2, 8), jnp.bfloat16), spec((8, 4), jnp.bfloat16))


def int_bool():
    def f(a, b, m):
        c = (a << 2) ^ (b >> 1) | (a & b)
        d = jnp.where(m, a // (jnp.abs(b) + 1), a % 3)
        e = jnp.logical_not(m) | (a > b)
        u = lax.shift_right_logical(a.astype(jnp.uint32), jnp.uint32(3))
        return c, d, e, u, lax.population_count(a), (~a).astype(jnp.int8), a.astype(f32)
    return f, (spec((4,), jnp.int32), spec((4,), jnp.int32), spec((4,), jnp.bool_))


def constants():
    def f(x):
        c_f32 = jnp.array([1.0, -2.5, 3.25, 0.1], f32)
        c_i8 = jnp.array([-128, 0, 7, 127], jnp.int8)
        c_u8 = jnp.array([0, 1, 200, 255], jnp.uint8)
        c_i16 = jnp.array([-3, 30000, 5, 6], jnp.int16)
        c_u32 = jnp.array([1, 2, 3, 4000000000], jnp.uint32)
        c_bool = jnp.array([True, False, True, True])
        c_f16 = jnp.array([0.5, 1.5, -2.0, 65504.0], jnp.float16)
        c_bf16 = jnp.array([0.5, 1.5, -2.0, 3.0e38], jnp.bfloat16)
        c_c64 = jnp.array([1 + 2j, 3 - 4j, 0j, -1j], jnp.complex64)
        # A captured numpy array stays a dense constant (arange would become
        # an iota); above 100 elements MLIR prints it as hex.
        big = jnp.asarray(np.arange(120, dtype=np.float32).reshape(4, 30) / 7)
        ones = jnp.ones((4, 30), f32)
        nan = jnp.array([jnp.nan, jnp.inf, -jnp.inf, -0.0], f32)
        tot = (x + c_f32 + c_i8 + c_u8 + c_i16 + c_u32.astype(f32) + c_f16 + c_bf16
               + jnp.where(c_bool, 1.0, 0.0) + jnp.real(c_c64 * x) + nan)
        return tot, big * ones + x[0], jnp.full((3,), 7, jnp.int32), jnp.zeros((2, 2), jnp.bool_)
    return f, (spec((4,)),)


def constants_x64():
    def f(x):
        c_f64 = jnp.array([1.0, 1e-300, np.pi, -0.0], jnp.float64)
        c_i64 = jnp.array([-(2 ** 62), 1, 2, 3], jnp.int64)
        c_u64 = jnp.array([2 ** 64 - 1, 0, 1, 2], jnp.uint64)
        return x * c_f64 + c_i64.astype(jnp.float64) + c_u64.astype(jnp.float64), jnp.float64(0.1) + x
    return f, (spec((4,), jnp.float64),)


def short_locations():
    # Lowered with jax_include_full_tracebacks_in_locations off (see
    # SHORT_LOCATIONS): plain file:line:col locations, no call sites.
    def f(x):
        return jnp.sin(x) * 2.0
    return f, (spec((3,)),)


PROGRAMS = {
    "elementwise": elementwise,
    "matmul": matmul,
    "einsum": einsum,
    "conv": conv,
    "reductions": reductions,
    "grad_loss": grad_loss,
    "vmap_dot": vmap_dot,
    "scan": scan,
    "fori_loop": fori_loop,
    "while_loop": while_loop,
    "cond_switch": cond_switch,
    "random": random,
    "random_typed_key": random_typed_key,
    "sharding": sharding,
    "sort": sort,
    "indexing": indexing,
    "dynamic_slice": dynamic_slice,
    "mlp_adam": mlp_adam,
    "float16": float16,
    "bfloat16": bfloat16,
    "int_bool": int_bool,
    "constants": constants,
    "constants_x64": constants_x64,
    "short_locations": short_locations,
}

# Programs also written at the version XLA serializes to by default.
OLD_TARGET = ["elementwise", "scan"]

X64 = {"constants_x64"}

SHORT_LOCATIONS = {"short_locations"}


def artifact(fn, args, target):
    lowered = jax.jit(fn).lower(*args)
    module = lowered.compiler_ir("stablehlo")
    return _jax.mlir.serialize_portable_artifact(
        jax_mlir.module_to_bytecode(module), target, True)


def vhlo_text(code):
    # jax's MLIR context registers the vhlo dialect, so parsing the artifact
    # as plain MLIR gives the VHLO ops exactly as the bytes encode them.
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(code)
        return module.operation.get_asm(
            print_generic_op_form=True, enable_debug_info=True,
            assume_verified=True)


def write_gz(path, text):
    # mtime=0 keeps the bytes the same from run to run.
    with open(path, "wb") as f:
        data = bytearray(gzip.compress(text.encode(), compresslevel=9, mtime=0))
        data[9] = 255  # the OS byte, which Python versions set differently: "unknown"
        f.write(bytes(data))


def write(outdir, stem, code):
    with open(os.path.join(outdir, stem + ".mlir.bc"), "wb") as f:
        f.write(code)
    write_gz(os.path.join(outdir, stem + ".vhlo.txt.gz"), vhlo_text(code))


# StableHLO golden files, one per bytecode format version they use (0, 3,
# 4 and 6), plus a tiny one.
GOLDEN = [
    "stablehlo_legalize_to_vhlo.0_9_0",
    "stablehlo_legalize_to_vhlo.0_12_0",
    "stablehlo_legalize_to_vhlo.0_14_0",
    "stablehlo_legalize_to_vhlo.1_20_0",
    "vhlo_emit_version_api.1_1_0",
]

# An op name in a .mlir source: a dialect-qualified name, quoted (generic
# form) or not (pretty form), that is not an attribute (#...), a type
# (!...), a symbol (@...) or a dictionary key (name = ...).
OP_NAME = re.compile(
    r'(?<![#!\w.@])"?\b((?:stablehlo|func|chlo|sdy)\.[a-z_0-9-]+)\b"?(?=[\s(])(?!\s*=)')


def source_ops(mlir_text):
    lines = [line.split("//", 1)[0] for line in mlir_text.split("\n")]
    return [m.group(1) for m in OP_NAME.finditer("\n".join(lines))]


def golden(checkout, outdir):
    src = os.path.join(checkout, "stablehlo", "tests", "vhlo")
    dst = os.path.join(outdir, "stablehlo")
    os.makedirs(dst, exist_ok=True)
    for stem in GOLDEN:
        bc = os.path.join(src, stem + ".mlir.bc")
        shutil.copyfile(bc, os.path.join(dst, stem + ".mlir.bc"))
        with open(bc, "rb") as f:
            text = vhlo_text(f.read())
        write_gz(os.path.join(dst, stem + ".vhlo.txt.gz"), text)
        with open(os.path.join(src, stem + ".mlir")) as f:
            ops = source_ops(f.read())
        with open(os.path.join(dst, stem + ".ops.txt"), "w") as f:
            f.write("\n".join(ops) + "\n")
        print(f"stablehlo/{stem}: {len(ops)} ops in the source")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--stablehlo", metavar="DIR", help="openxla/stablehlo checkout to copy golden files from")
    ap.add_argument("--skip-jax", action="store_true", help="only copy the golden files")
    opts = ap.parse_args(argv)
    if opts.stablehlo:
        golden(opts.stablehlo, opts.outdir)
    if opts.skip_jax:
        return 0
    names = [n for n in opts.only.split(",") if n] or list(PROGRAMS)
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        ap.error(f"unknown programs: {', '.join(unknown)}")
    os.makedirs(opts.outdir, exist_ok=True)
    for name in names:
        fn, args = PROGRAMS[name]()
        targets = [(name, CURRENT)]
        if name in OLD_TARGET:
            targets.append((name + "." + OLD.replace(".", "_"), OLD))
        for stem, target in targets:
            if name in X64:
                with jax.enable_x64(True):
                    fn, args = PROGRAMS[name]()
                    code = artifact(fn, args, target)
            elif name in SHORT_LOCATIONS:
                old = jax.config.jax_include_full_tracebacks_in_locations
                jax.config.update("jax_include_full_tracebacks_in_locations", False)
                try:
                    code = artifact(fn, args, target)
                finally:
                    jax.config.update("jax_include_full_tracebacks_in_locations", old)
            else:
                code = artifact(fn, args, target)
            write(opts.outdir, stem, code)
            print(f"{stem}: {len(code)} bytes (VHLO {target})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
