"""Inputs for the sweep: the OpDef says what each input is, and this table adds
what the OpDef cannot say: shapes that must agree, value ranges that keep the
math defined, host inputs (axes, shapes, permutations) that must be valid.

A recipe is a function of a Ctx that returns variants; each variant is one call
of the op (keyword arguments for tf.raw_ops) and is run on the CPU and on the
device with the same inputs. Shapes are small and deliberately not square and
not multiples of four. An op without an entry here falls back to inputs made
from its OpDef alone (generic), which suits ops whose inputs are all plain data
of the op's own dtype.

Ops whose answer is random are not compared with the CPU: their variants carry
a named property instead (prop=), checked on the device's output.
"""
import math

import numpy as np
import tensorflow as tf
from tensorflow.python.framework import op_def_registry

from dispatch import call


class NoRecipe(Exception):
    pass


class V:
    """One call of the op. Keyword arguments named like an input of the op are
    its inputs (numpy arrays, Python values, or lists of them for list
    inputs); the rest are attrs.

    tol scales float32's tolerance (ops that accumulate get more); acc says
    the op sums many terms (default: tol >= 4), so that float16 and bfloat16,
    whose CPU kernels round as they accumulate, are allowed an error relative
    to the output's largest magnitude rather than to each element's;
    out_check maps an output index or name to "skip" or "shape" for outputs the
    op leaves implementation-defined; deterministic=False is for stateful
    random ops, whose two runs may differ; prop=(name, fn) replaces the CPU
    comparison by a property fn(run1, run2, inputs) -> (ok, detail); ref=(name,
    fn) computes the reference another way on the CPU, fn(kwargs) -> outputs;
    wide=True computes the CPU's reference in float64 (else float32) for
    floating inputs, for variants at model sizes, where the CPU's own float32
    and narrower kernels, rounding as they accumulate thousands of terms, are
    further from the exact answer than the tolerance.
    """

    def __init__(self, name, tol=1.0, acc=None, out_check=None, deterministic=True, prop=None, ref=None, wide=False, **kw):
        self.name = name
        self.ref = ref
        self.wide = wide
        self.tol = tol
        self.acc = tol >= 4 if acc is None else acc
        self.out_check = out_check or {}
        self.deterministic = deterministic
        self.prop_name, self.prop = prop if prop else (None, None)
        self.kw = kw
        self.inputs, self.attrs = {}, {}

    def check_name(self):
        return self.prop_name or (self.ref[0] if self.ref else "vs CPU")

    def resolve(self, ctx):
        names = {a.name for a in ctx.od.input_arg}
        for k, v in self.kw.items():
            (self.inputs if k in names else self.attrs)[k] = v
        # Type attrs that no input carries (Cast's DstT, ArgMax's
        # output_type, RandomUniform's dtype) come from the case itself.
        carried = set()
        for a in ctx.od.input_arg:
            carried |= {a.type_attr, a.type_list_attr, a.number_attr}
        for at in ctx.od.attr:
            if at.type == "type" and at.name not in carried and at.name in ctx.case.types and at.name not in self.attrs:
                self.attrs[at.name] = tf.dtypes.as_dtype(ctx.case.types[at.name])
        return self


class Ctx:
    """What a recipe knows: the op, its dtypes and a seeded generator."""

    def __init__(self, case, od, rng):
        self.case, self.od, self.rng, self.op = case, od, rng, case.op
        self.types = {}
        for at in od.attr:
            if at.type != "type":
                continue
            if at.name in case.types:
                self.types[at.name] = case.types[at.name]
            elif at.HasField("default_value"):
                self.types[at.name] = tf.dtypes.as_dtype(at.default_value.type).name
        main = case.types.get("T") or self.types.get("T") or next(iter(case.types.values()), None) or "float32"
        self.T = tf.dtypes.as_dtype(main)

    def dt(self, attr, default=None):
        if attr not in self.types:
            if default is None:
                raise NoRecipe("attr %s is neither constrained nor defaulted" % attr)
            return tf.dtypes.as_dtype(default)
        return tf.dtypes.as_dtype(self.types[attr])

    def argdt(self, name):
        """The dtype of input name: its type attr's, or the fixed one."""
        for a in self.od.input_arg:
            if a.name == name:
                return self.dt(a.type_attr) if a.type_attr else tf.dtypes.as_dtype(a.type)
        raise NoRecipe("no input %r" % name)

    @property
    def is_float(self):
        return self.T.is_floating

    @property
    def is_int(self):
        return self.T.is_integer

    @property
    def is_bool(self):
        return self.T == tf.bool

    @property
    def is_complex(self):
        return self.T.is_complex

    def x(self, *shape, lo=None, hi=None, dtype=None, nonzero=False):
        """Random data of the case's dtype (or dtype): standard normal floats,
        or uniform in [lo, hi]; integers in [lo, hi] (default -9..9, 0..9 if
        unsigned); nonzero keeps values away from 0 for divisors."""
        dt = tf.dtypes.as_dtype(dtype) if dtype is not None else self.T
        shape = tuple(shape)
        npdt = dt.as_numpy_dtype
        if dt == tf.bool:
            return self.rng.random(shape) < 0.5
        if dt.is_integer:
            lo = (0 if dt.is_unsigned else -9) if lo is None else int(math.ceil(lo))
            hi = 9 if hi is None else int(math.floor(hi))
            lo, hi = max(lo, dt.min), min(hi, dt.max)
            v = self.rng.integers(lo, hi + 1, size=shape)
            if nonzero:
                v = np.where(v == 0, 1 if hi >= 1 else -1, v)
            return v.astype(npdt)
        if dt.is_complex:
            return (self.rng.standard_normal(shape) + 1j * self.rng.standard_normal(shape)).astype(npdt)
        if lo is None:
            v = self.rng.standard_normal(shape)
            if nonzero:
                v = np.sign(v + 1e-12) * (np.abs(v) + 0.5)
        else:
            v = self.rng.uniform(lo, hi, size=shape)
            if nonzero:
                v = np.where(np.abs(v) < 0.25, 0.25 * np.sign(v + 1e-12), v)
        return v.astype(npdt)

    def of(self, values, dtype=None):
        """Exact values in the case's dtype (or dtype)."""
        dt = tf.dtypes.as_dtype(dtype) if dtype is not None else self.T
        return np.array(values, dtype=np.float64 if (dt.is_floating and dt != tf.float64) else None).astype(dt.as_numpy_dtype)

    def specials(self, dtype=None):
        """Values where rounding, signs and IEEE specials matter."""
        dt = tf.dtypes.as_dtype(dtype) if dtype is not None else self.T
        if dt.is_integer:
            lo = 0 if dt.is_unsigned else -7
            return self.of(list(range(lo, lo + 12)), dt)
        if dt == tf.bool:
            return np.array([True, False, True, True])
        return self.of([0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1.0, -1.0, 3.7, -3.7, np.inf, -np.inf, np.nan], dt)


def i32(v):
    return np.array(v, dtype=np.int32)


def i64(v):
    return np.array(v, dtype=np.int64)


def variants_for(ctx):
    fn = RECIPES.get(ctx.op)
    if fn is None:
        fn = generic
    vs = fn(ctx)
    if not vs:
        raise NoRecipe("the recipe has no variant for %s" % ctx.case.label)
    import sizes  # here, not at the top: sizes imports this module

    return [v.resolve(ctx) for v in vs + sizes.variants(ctx)]


def generic(c):
    """Inputs from the OpDef alone: every input a 3x4 tensor of its dtype,
    list inputs two of them. Ops that need anything more need a recipe."""
    kw = {}
    for a in c.od.input_arg:
        if a.type_list_attr:
            raise NoRecipe("input %r is a list of types; the OpDef alone cannot make it" % a.name)
        dt = c.dt(a.type_attr) if a.type_attr else tf.dtypes.as_dtype(a.type)
        if a.type_attr and a.type_attr not in c.types:
            raise NoRecipe("the type of input %r (attr %s) is not fixed by the registration" % (a.name, a.type_attr))
        if a.number_attr:
            kw[a.name] = [c.x(3, 4, dtype=dt), c.x(3, 4, dtype=dt)]
        else:
            kw[a.name] = c.x(3, 4, dtype=dt)
    for at in c.od.attr:
        if at.type != "type" and not at.HasField("default_value") and at.name not in {a.number_attr for a in c.od.input_arg}:
            raise NoRecipe("no recipe, and attr %r has no default" % at.name)
    return [V("generic 3x4", **kw)]


# ---------------------------------------------------------------------------
# Elementwise families


def unary(lo=None, hi=None, specials=False, tol=1.0, nonzero=False, empty=True):
    """Unary elementwise: a 3-D tensor, a scalar, an empty tensor, and, where
    the op defines them, the special values."""

    def recipe(c):
        name = c.od.input_arg[0].name
        dt = c.argdt(name)
        lo_, hi_ = lo, hi
        if dt.is_integer and lo is not None:
            lo_, hi_ = int(math.ceil(lo)), int(math.floor(hi))
        vs = [
            V("2x3x5", tol=tol, acc=False, **{name: c.x(2, 3, 5, lo=lo_, hi=hi_, nonzero=nonzero, dtype=dt)}),
            V("scalar", tol=tol, acc=False, **{name: c.x(lo=lo_, hi=hi_, nonzero=nonzero, dtype=dt)}),
        ]
        if empty:
            vs.append(V("empty 0x3", **{name: c.x(0, 3, lo=lo_, hi=hi_, dtype=dt)}))
        if specials:
            vs.append(V("specials", tol=tol, acc=False, **{name: c.specials(dt)}))
        return vs

    return recipe


def binary(xlo=None, xhi=None, ylo=None, yhi=None, nonzero_y=False, tol=1.0, names=None, empty=True):
    """Binary broadcasting elementwise: equal shapes, numpy broadcasting
    (4x1x3 with 5x1), a scalar operand and an empty operand."""

    def recipe(c):
        nx, ny = names or (c.od.input_arg[0].name, c.od.input_arg[1].name)

        dx, dy = c.argdt(nx), c.argdt(ny)

        def xs(*s):
            return c.x(*s, lo=xlo, hi=xhi, dtype=dx)

        def ys(*s):
            return c.x(*s, lo=ylo, hi=yhi, nonzero=nonzero_y, dtype=dy)

        vs = [
            V("3x4 with 3x4", tol=tol, acc=False, **{nx: xs(3, 4), ny: ys(3, 4)}),
            V("broadcast 4x1x3 with 5x1", tol=tol, acc=False, **{nx: xs(4, 1, 3), ny: ys(5, 1)}),
            V("2x3 with scalar", tol=tol, acc=False, **{nx: xs(2, 3), ny: ys()}),
        ]
        if empty:
            vs.append(V("empty 0x3 with 3", tol=tol, acc=False, **{nx: xs(0, 3), ny: ys(3)}))
        return vs

    return recipe


def grad_pair(first, second, lo=None, hi=None):
    """Activation gradients: (gradients, features/outputs) of one shape."""

    def recipe(c):
        return [
            V("3x7", **{first: c.x(3, 7), second: c.x(3, 7, lo=lo, hi=hi)}),
            V("empty 0x2", **{first: c.x(0, 2), second: c.x(0, 2, lo=lo, hi=hi)}),
        ]

    return recipe


def approximate_equal(c):
    # Same shapes only; y is x nudged by about the tolerance either way.
    x = c.x(3, 4)
    nudge = c.x(3, 4, lo=-2e-5, hi=2e-5, dtype=tf.float64)
    return [V("3x4 near x", x=x, y=(x.astype(np.float64) + nudge).astype(x.dtype), tolerance=1e-5),
            V("tolerance 0.5", x=x, y=c.x(3, 4), tolerance=0.5)]


def compare_op(c):
    vs = binary()(c)
    if c.op in ("Equal", "NotEqual"):
        vs.append(V("incompatible shapes, no error", x=c.x(2, 3), y=c.x(4), incompatible_shape_error=False))
        vs.append(V("equal values", x=c.specials(), y=c.specials()))
    return vs


def logical(c):
    return [
        V("3x4 with 3x4", x=c.x(3, 4, dtype=tf.bool), y=c.x(3, 4, dtype=tf.bool)),
        V("broadcast 4x1x3 with 5x1", x=c.x(4, 1, 3, dtype=tf.bool), y=c.x(5, 1, dtype=tf.bool)),
        V("empty 0x3 with scalar", x=c.x(0, 3, dtype=tf.bool), y=np.array(True)),
    ]


def int_div(c):
    # Mixed signs on purpose: truncation and flooring differ there. Zero is
    # never a divisor: integer division by zero is an error on the CPU.
    if c.is_int:
        lo = 0 if c.T.is_unsigned else -20
        return [
            V("3x4 with 3x4, mixed signs", x=c.x(3, 4, lo=lo, hi=20), y=c.x(3, 4, lo=lo // 4, hi=5, nonzero=True)),
            V("broadcast 4x1x3 with 5x1", x=c.x(4, 1, 3, lo=lo, hi=20), y=c.x(5, 1, lo=lo // 4, hi=5, nonzero=True)),
            V("empty 0x3 with 3", x=c.x(0, 3), y=c.x(3, lo=1, hi=5)),
        ]
    return binary(nonzero_y=True)(c)


def pow_op(c):
    if c.is_int:
        lo = 0 if c.T.is_unsigned else -3
        return [
            V("3x4 with 3x4", x=c.x(3, 4, lo=lo, hi=3), y=c.x(3, 4, lo=0, hi=4)),
            V("broadcast 4x1x3 with 5x1", x=c.x(4, 1, 3, lo=lo, hi=3), y=c.x(5, 1, lo=0, hi=3)),
        ]
    if c.is_complex:
        return binary(tol=10)(c)
    return [
        V("3x4 with 3x4", tol=4, acc=False, x=c.x(3, 4, lo=0.1, hi=3), y=c.x(3, 4, lo=-2, hi=2)),
        V("broadcast 4x1x3 with 5x1", tol=4, acc=False, x=c.x(4, 1, 3, lo=0.1, hi=3), y=c.x(5, 1, lo=-2, hi=2)),
        V("negative base, integer exponent", tol=4, acc=False, x=c.x(2, 3, lo=-3, hi=-0.1), y=c.of([[2, 3, -1], [0, 1, 2]])),
        V("empty 0x3 with scalar", x=c.x(0, 3), y=c.of(2)),
    ]


def shift(c):
    """Amounts within the width, and past it either way: TensorFlow clamps
    them to [0, bits-1]; the extremes of the dtype shift too."""
    bits = c.T.size * 8
    lo, hi = c.T.min, c.T.max
    vs = [
        V("3x4 shifts within width", x=c.x(3, 4, lo=-100, hi=100), y=c.x(3, 4, lo=0, hi=bits - 1)),
        V("broadcast scalar shift", x=c.x(2, 5, lo=-100, hi=100), y=c.of(3)),
        V("extremes, amounts 0 and bits-1", x=c.of([lo, hi, lo, hi, 1]), y=c.of([0, 0, bits - 1, bits - 1, bits - 1])),
        V("amounts past the width", x=c.of([lo, hi, 5, 77, 1, hi]), y=c.of([bits, bits + 3, hi, bits * 2, hi, bits])),
    ]
    if not c.T.is_unsigned:
        vs.append(V("negative amounts", x=c.of([lo, hi, -5, 77]), y=c.of([-1, -3, lo, -bits])))
    return vs


def int_unary(c):
    """Integer unary (Invert, PopulationCount): unary(specials) and the
    dtype's extremes."""
    vs = unary(specials=True)(c)
    vs.append(V("extremes", x=c.of([c.T.min, c.T.max, c.T.min + 1, c.T.max - 1, 0, -1 if not c.T.is_unsigned else 1])))
    return vs


def bitwise(c):
    return [
        V("3x4 with 3x4", x=c.x(3, 4, lo=-100, hi=100), y=c.x(3, 4, lo=-100, hi=100)),
        V("broadcast 4x1x3 with 5x1", x=c.x(4, 1, 3, lo=-100, hi=100), y=c.x(5, 1, lo=-100, hi=100)),
        V("extremes", x=c.of([c.T.min, c.T.max, c.T.min, c.T.max]), y=c.of([c.T.max, c.T.min, c.T.min, 1])),
        V("empty 0x3 with 3", x=c.x(0, 3), y=c.x(3)),
    ]


def select(c):
    vs = [
        V("condition of t's shape", condition=c.x(3, 4, dtype=tf.bool), t=c.x(3, 4), e=c.x(3, 4)),
        V("scalar condition", condition=np.array(False), t=c.x(2, 3), e=c.x(2, 3)),
        V("empty", condition=c.x(0, 2, dtype=tf.bool), t=c.x(0, 2), e=c.x(0, 2)),
    ]
    if c.op == "Select":
        vs.append(V("vector condition over the first dim", condition=c.x(3, dtype=tf.bool), t=c.x(3, 4, 2), e=c.x(3, 4, 2)))
    else:
        vs.append(V("broadcast condition 4x1, t 1x3, e 3", condition=c.x(4, 1, dtype=tf.bool), t=c.x(1, 3), e=c.x(3)))
    return vs


def add_n(c):
    return [
        V("one input", inputs=[c.x(3, 4)]),
        V("three 2x3x5", tol=2, inputs=[c.x(2, 3, 5), c.x(2, 3, 5), c.x(2, 3, 5)]),
        V("empty", inputs=[c.x(0, 3), c.x(0, 3)]),
    ]


def clip(c):
    lo, hi = (c.of(-2), c.of(3)) if not c.T.is_unsigned else (c.of(2), c.of(6))
    return [
        V("scalar bounds", t=c.x(3, 5), clip_value_min=lo, clip_value_max=hi),
        V("bounds of t's shape", t=c.x(2, 3), clip_value_min=c.x(2, 3, lo=-3 if not c.T.is_unsigned else 0, hi=0),
          clip_value_max=c.x(2, 3, lo=1, hi=4)),
        V("empty", t=c.x(0, 4), clip_value_min=lo, clip_value_max=hi),
    ]


def cast(c):
    src = c.dt("SrcT")
    dst = c.dt("DstT")
    vs = []
    # In range of both dtypes, so that no case relies on out-of-range
    # conversion, which C++ leaves undefined.
    if src == tf.bool:
        vs.append(V("3x4", x=c.x(3, 4, dtype=tf.bool)))
    else:
        lo = 0 if (dst.is_unsigned or src.is_unsigned or dst == tf.bool) else -100
        hi = 100
        if src.is_integer:
            vs.append(V("3x4 in range", x=c.x(3, 4, lo=lo, hi=hi, dtype=src)))
        else:
            vs.append(V("3x4 in range, fractions", x=c.x(3, 4, lo=lo, hi=hi, dtype=src)))
            if dst.is_floating:
                vs.append(V("specials", x=c.of([0.0, -0.0, 1.0 / 3, 65504.0, 1e-8, np.inf, -np.inf, np.nan], dtype=src)))
            elif dst != tf.bool:
                vs.append(V("truncation toward zero", x=c.of([0.5, -0.5, 1.99, -1.99, 7.5, 0.0], dtype=src) if lo < 0
                            else c.of([0.5, 1.99, 7.5, 0.0], dtype=src)))
            else:
                vs.append(V("zero and non-zero", x=c.of([0.0, -0.0, 0.25, -3.0, np.nan], dtype=src)))
    vs.append(V("empty", x=c.x(0, 2, dtype=src)))
    return vs


# ---------------------------------------------------------------------------
# Matrix products


def matmul(c):
    return [
        V("5x7 by 7x3", tol=10, a=c.x(5, 7), b=c.x(7, 3)),
        V("transpose_a, transpose_b", tol=10, a=c.x(7, 5), b=c.x(3, 7), transpose_a=True, transpose_b=True),
        V("transpose_b", tol=10, a=c.x(4, 6), b=c.x(2, 6), transpose_b=True),
        V("inner dim 0", a=c.x(3, 0), b=c.x(0, 2)),
        V("1x1", a=c.x(1, 1), b=c.x(1, 1)),
    ]


def batch_matmul(c):
    vs = [
        V("3x5x4 by 3x4x6", tol=10, x=c.x(3, 5, 4), y=c.x(3, 4, 6)),
        V("adj_x, adj_y", tol=10, x=c.x(3, 5, 4), y=c.x(3, 6, 5), adj_x=True, adj_y=True),
        V("empty batch", x=c.x(0, 2, 3), y=c.x(0, 3, 2)),
    ]
    if c.op != "BatchMatMul":
        vs.append(V("broadcast batch 2x1x4x5 by 3x5x6", tol=10, x=c.x(2, 1, 4, 5), y=c.x(3, 5, 6)))
    if c.op == "BatchMatMulV3":
        # A kernel may constrain Ta alone: Tb and Tout then follow it.
        ta = c.dt("Ta")
        tb = c.dt("Tb", ta)
        vs = [
            V("3x5x4 by 3x4x6", tol=10, x=c.x(3, 5, 4, dtype=ta), y=c.x(3, 4, 6, dtype=tb)),
            V("adj_x, adj_y", tol=10, x=c.x(3, 5, 4, dtype=ta), y=c.x(3, 6, 5, dtype=tb), adj_x=True, adj_y=True),
            V("broadcast batch 2x1x4x5 by 3x5x6", tol=10, x=c.x(2, 1, 4, 5, dtype=ta), y=c.x(3, 5, 6, dtype=tb)),
        ]
        if "Tout" not in c.case.types:
            for v in vs:
                v.kw["Tout"] = ta
    return vs


def einsum(c):
    return [
        V("matmul ij,jk->ik", tol=10, inputs=[c.x(4, 5), c.x(5, 3)], equation="ij,jk->ik"),
        V("batch bij,bjk->bik", tol=10, inputs=[c.x(2, 4, 5), c.x(2, 5, 3)], equation="bij,bjk->bik"),
        V("transpose ijk->kji", inputs=[c.x(2, 3, 4)], equation="ijk->kji"),
        V("reduce ij->i", tol=4, inputs=[c.x(3, 5)], equation="ij->i"),
        V("outer i,j->ij", inputs=[c.x(3), c.x(4)], equation="i,j->ij"),
        V("broadcast ...ij,jk->...ik", tol=10, inputs=[c.x(2, 3, 4, 5), c.x(5, 2)], equation="...ij,jk->...ik"),
    ]


# The activations _FusedConv2D and _FusedMatMul may end with after their
# BiasAdd (fused_ops ["BiasAdd", activation]); None is ["BiasAdd"] alone.
FUSED_ACTIVATIONS = (None, "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid")


def fused_ops(act):
    return ["BiasAdd"] + ([act] if act else [])


def fused_attrs(act):
    """fused_ops for act; LeakyRelu gets a slope other than the default."""
    kw = {"fused_ops": fused_ops(act)}
    if act == "LeakyRelu":
        kw["leakyrelu_alpha"] = 0.3
    return kw


def unfused_ref(op):
    """A reference for a fused op where the CPU's fused kernel lacks the
    fusion or gets it wrong: the product (Conv2D for _FusedConv2D, MatMul for
    _FusedMatMul), BiasAdd and the activation as TensorFlow's own ops."""

    def ref(kwargs):
        kw = dict(kwargs)
        fmt = kw.get("data_format", "NHWC")
        if op == "_FusedConv2D":
            y = tf.raw_ops.Conv2D(input=kw["input"], filter=kw["filter"], strides=kw["strides"], padding=kw["padding"],
                                  explicit_paddings=kw.get("explicit_paddings", []), data_format=fmt,
                                  dilations=kw.get("dilations", [1, 1, 1, 1]))
        else:
            y = tf.raw_ops.MatMul(a=kw["a"], b=kw["b"], transpose_a=kw.get("transpose_a", False), transpose_b=kw.get("transpose_b", False))
        y = tf.raw_ops.BiasAdd(value=y, bias=kw["args"][0], data_format=fmt)
        for act in kw["fused_ops"][1:]:
            if act == "LeakyRelu":
                y = tf.raw_ops.LeakyRelu(features=y, alpha=kw.get("leakyrelu_alpha", 0.2))
            elif act in ("Tanh", "Sigmoid"):
                y = getattr(tf.raw_ops, act)(x=y)
            else:
                y = getattr(tf.raw_ops, act)(features=y)
        return [y.numpy()]

    return ("vs CPU unfused", ref)


def fused_matmul(c):
    """Each fused_ops variant, with the transposes spread over them; the
    CPU's _FusedMatMul has every one, in every dtype."""
    shapes = [
        ("4x6 by 6x3", (4, 6), (6, 3), {}),
        ("transpose_b", (5, 7), (3, 7), {"transpose_b": True}),
        ("transpose_a", (6, 4), (6, 5), {"transpose_a": True}),
        ("transpose_a, transpose_b", (7, 3), (2, 7), {"transpose_a": True, "transpose_b": True}),
    ]
    vs = []
    for i, act in enumerate(FUSED_ACTIVATIONS):
        name, sa, sb, tr = shapes[i % len(shapes)]
        n = sb[0] if tr.get("transpose_b") else sb[1]
        vs.append(V("%s, %s" % ("+".join(fused_ops(act)), name), tol=10, a=c.x(*sa), b=c.x(*sb), args=[c.x(n)], **tr, **fused_attrs(act)))
    # On an inner dimension of 0, TensorFlow 2.21's CPU _FusedMatMul returns
    # zeros, without the bias (and crashes with oneDNN on): the reference is
    # the unfused ops, whose answer is relu(bias) in every row.
    vs.append(V("BiasAdd+Relu, inner dim 0", ref=unfused_ref(c.op), a=c.x(3, 0), b=c.x(0, 2), args=[c.x(2)], **fused_attrs("Relu")))
    vs.append(V("BiasAdd+Relu, empty batch", a=c.x(0, 4), b=c.x(4, 2), args=[c.x(2)], **fused_attrs("Relu")))
    return vs


# ---------------------------------------------------------------------------
# Neural-network ops


def image(c, n=2, h=9, w=10, ch=3):
    """An NHWC batch with odd spatial sizes."""
    return c.x(n, h, w, ch)


def channels_first_ref(op, data_keys, size_keys=(), out_transpose=True):
    """A reference for a channels-first call (NCHW, NCDHW) on a CPU that only
    runs channels-last: move channels last in the data inputs, the shape
    vectors (input_sizes, orig_input_shape) and the per-dim attrs, run, and
    move them back in the outputs (not in a filter, whose layout is fixed)."""

    def ref(kwargs):
        kw = dict(kwargs)
        rank = len(kw[data_keys[0]].shape)
        to_last = [0] + list(range(2, rank)) + [1]
        to_first = [0, rank - 1] + list(range(1, rank - 1))
        kw["data_format"] = "NHWC" if rank == 4 else "NDHWC"
        for k in data_keys:
            kw[k] = tf.transpose(kw[k], to_last)
        for k in size_keys:
            kw[k] = tf.constant(kw[k].numpy()[to_last])
        for k in ("strides", "ksize", "dilations"):
            v = kw.get(k)
            if isinstance(v, list) and len(v) == rank:
                kw[k] = [v[i] for i in to_last]
            elif isinstance(v, tf.Tensor) and v.shape == (rank,):
                kw[k] = tf.constant(v.numpy()[to_last])
        if kw.get("explicit_paddings"):
            p = kw["explicit_paddings"]
            kw["explicit_paddings"] = [x for i in to_last for x in p[2 * i:2 * i + 2]]
        outs = tf.nest.flatten(call(op, op_def_registry.get(op), kw))
        return [tf.transpose(o, to_first).numpy() if (out_transpose and len(o.shape) == rank) else o.numpy() for o in outs]

    return ("vs CPU via channels-last", ref)


def dilated_ref(op):
    """A reference for a dilated convolution on a CPU that runs none: the
    same convolution with the filter's taps spread apart by zeros, which is
    what dilation means. For the filter gradient, the gradient of that spread
    filter, sampled back at the taps."""

    def ref(kwargs):
        kw = dict(kwargs)
        rates = kw.pop("dilations")
        fmt = kw.get("data_format", "NHWC")
        spatial = rates[1:-1] if fmt.startswith("N") and not fmt.startswith("NC") else rates[2:]

        def spread(f):
            f = np.asarray(f)
            shape = list(f.shape)
            for i, r in enumerate(spatial):
                shape[i] = (f.shape[i] - 1) * r + 1
            out = np.zeros(shape, dtype=f.dtype)
            out[tuple(slice(None, None, r) for r in spatial)] = f
            return out

        if "filter_sizes" in kw:
            sizes = kw["filter_sizes"].numpy().copy()
            for i, r in enumerate(spatial):
                sizes[i] = (sizes[i] - 1) * r + 1
            kw["filter_sizes"] = tf.constant(sizes)
            out = getattr(tf.raw_ops, op)(**kw).numpy()
            return [out[tuple(slice(None, None, r) for r in spatial)]]
        kw["filter"] = tf.constant(spread(kw["filter"].numpy()))
        return [getattr(tf.raw_ops, op)(**kw).numpy()]

    return ("vs CPU via a spread filter", ref)


def first(x):
    """NHWC (or NDHWC) data as NCHW (NCDHW)."""
    rank = x.ndim
    return np.ascontiguousarray(np.transpose(x, [0, rank - 1] + list(range(1, rank - 1))))


def conv2d(c):
    x = image(c)
    vs = [
        V("SAME 3x3", tol=10, input=x, filter=c.x(3, 3, 3, 4), strides=[1, 1, 1, 1], padding="SAME"),
        V("VALID strides 2x3", tol=10, input=x, filter=c.x(3, 2, 3, 4), strides=[1, 2, 3, 1], padding="VALID"),
        V("SAME strided even kernel", tol=10, input=x, filter=c.x(4, 4, 3, 2), strides=[1, 2, 2, 1], padding="SAME"),
        V("dilations 2", tol=10, input=x, filter=c.x(3, 3, 3, 4), strides=[1, 1, 1, 1], padding="SAME", dilations=[1, 2, 2, 1]),
        V("dilations 2x3, VALID", tol=10, input=x, filter=c.x(2, 3, 3, 2), strides=[1, 1, 1, 1], padding="VALID", dilations=[1, 2, 3, 1]),
        V("EXPLICIT padding", tol=10, input=x, filter=c.x(2, 3, 3, 2), strides=[1, 1, 1, 1], padding="EXPLICIT",
          explicit_paddings=[0, 0, 1, 2, 0, 1, 0, 0]),
        V("1x1 filter", tol=10, input=c.x(1, 4, 5, 6), filter=c.x(1, 1, 6, 3), strides=[1, 1, 1, 1], padding="VALID"),
        V("empty batch", input=c.x(0, 5, 5, 3), filter=c.x(3, 3, 3, 2), strides=[1, 1, 1, 1], padding="SAME"),
    ]
    vs.append(V("NCHW strided", tol=10, input=c.x(2, 3, 7, 8), filter=c.x(3, 3, 3, 4), strides=[1, 1, 2, 1], padding="SAME",
                data_format="NCHW", ref=channels_first_ref("Conv2D", ["input"])))
    vs.append(V("NCHW EXPLICIT", tol=10, input=c.x(1, 3, 6, 5), filter=c.x(2, 2, 3, 2), strides=[1, 1, 1, 1], padding="EXPLICIT",
                explicit_paddings=[0, 0, 0, 0, 1, 0, 2, 1], data_format="NCHW", ref=channels_first_ref("Conv2D", ["input"])))
    return vs


def conv2d_backprop_input(c):
    f = c.x(3, 3, 3, 4)
    dy_same = c.x(2, 7, 8, 4)
    dy_valid = c.x(2, 3, 3, 4)
    return [
        V("SAME", tol=10, input_sizes=i32([2, 7, 8, 3]), filter=f, out_backprop=dy_same, strides=[1, 1, 1, 1], padding="SAME"),
        V("VALID strided", tol=10, input_sizes=i32([2, 7, 8, 3]), filter=f, out_backprop=dy_valid, strides=[1, 2, 2, 1], padding="VALID"),
        V("dilations 2", tol=10, input_sizes=i32([2, 7, 8, 3]), filter=f, out_backprop=dy_same, strides=[1, 1, 1, 1], padding="SAME",
          dilations=[1, 2, 2, 1], ref=dilated_ref(c.op)),
        V("EXPLICIT", tol=10, input_sizes=i32([1, 5, 6, 3]), filter=f, out_backprop=c.x(1, 4, 6, 4), strides=[1, 1, 1, 1],
          padding="EXPLICIT", explicit_paddings=[0, 0, 0, 1, 1, 1, 0, 0]),
        V("NCHW", tol=10, input_sizes=i32([2, 3, 7, 8]), filter=f, out_backprop=first(c.x(2, 4, 4, 4)), strides=[1, 1, 2, 2],
          padding="SAME", data_format="NCHW", ref=channels_first_ref(c.op, ["out_backprop"], ["input_sizes"])),
    ]


def conv2d_backprop_filter(c):
    x = image(c, h=7, w=8)
    return [
        V("SAME", tol=20, input=x, filter_sizes=i32([3, 3, 3, 4]), out_backprop=c.x(2, 7, 8, 4), strides=[1, 1, 1, 1], padding="SAME"),
        V("VALID strided", tol=20, input=x, filter_sizes=i32([3, 3, 3, 4]), out_backprop=c.x(2, 3, 3, 4), strides=[1, 2, 2, 1], padding="VALID"),
        V("dilations 2", tol=20, input=x, filter_sizes=i32([3, 3, 3, 4]), out_backprop=c.x(2, 7, 8, 4), strides=[1, 1, 1, 1], padding="SAME",
          dilations=[1, 2, 2, 1], ref=dilated_ref(c.op)),
        V("NCHW", tol=20, input=first(x), filter_sizes=i32([3, 3, 3, 4]), out_backprop=first(c.x(2, 4, 4, 4)), strides=[1, 1, 2, 2],
          padding="SAME", data_format="NCHW", ref=channels_first_ref(c.op, ["input", "out_backprop"], out_transpose=False)),
    ]


def depthwise(c):
    x = image(c, h=7, w=8)
    return [
        V("SAME multiplier 2", tol=10, input=x, filter=c.x(3, 3, 3, 2), strides=[1, 1, 1, 1], padding="SAME"),
        V("VALID strided", tol=10, input=x, filter=c.x(2, 3, 3, 1), strides=[1, 2, 2, 1], padding="VALID"),
        V("dilations 2", tol=10, input=x, filter=c.x(2, 2, 3, 2), strides=[1, 1, 1, 1], padding="SAME", dilations=[1, 2, 2, 1],
          ref=dilated_ref(c.op)),
        V("NCHW", tol=10, input=first(x), filter=c.x(3, 3, 3, 2), strides=[1, 1, 1, 1], padding="SAME", data_format="NCHW",
          ref=channels_first_ref(c.op, ["input"])),
    ]


def depthwise_backprop_input(c):
    return [
        V("SAME multiplier 2", tol=10, input_sizes=i32([2, 7, 8, 3]), filter=c.x(3, 3, 3, 2), out_backprop=c.x(2, 7, 8, 6),
          strides=[1, 1, 1, 1], padding="SAME"),
    ]


def depthwise_backprop_filter(c):
    return [
        V("SAME multiplier 2", tol=20, input=image(c, h=7, w=8), filter_sizes=i32([3, 3, 3, 2]), out_backprop=c.x(2, 7, 8, 6),
          strides=[1, 1, 1, 1], padding="SAME"),
    ]


def conv3d(c):
    return [
        V("SAME", tol=10, input=c.x(2, 4, 5, 6, 3), filter=c.x(2, 3, 3, 3, 4), strides=[1, 1, 1, 1, 1], padding="SAME"),
        V("VALID strided", tol=10, input=c.x(1, 5, 6, 7, 2), filter=c.x(2, 2, 3, 2, 3), strides=[1, 2, 1, 2, 1], padding="VALID"),
        V("dilations 2", tol=10, input=c.x(1, 5, 6, 6, 2), filter=c.x(2, 2, 2, 2, 3), strides=[1, 1, 1, 1, 1], padding="SAME",
          dilations=[1, 2, 1, 2, 1], ref=dilated_ref(c.op)),
        V("NCDHW", tol=10, input=first(c.x(2, 4, 5, 6, 3)), filter=c.x(2, 3, 3, 3, 4), strides=[1, 1, 1, 1, 1], padding="SAME",
          data_format="NCDHW", ref=channels_first_ref("Conv3D", ["input"])),
    ]


def conv3d_backprop_input(c):
    f = c.x(2, 3, 2, 3, 4)
    return [
        V("SAME", tol=10, input_sizes=i32([2, 4, 5, 6, 3]), filter=f, out_backprop=c.x(2, 4, 5, 6, 4), strides=[1, 1, 1, 1, 1], padding="SAME"),
        V("VALID strided", tol=10, input_sizes=i64([1, 5, 6, 7, 3]), filter=f, out_backprop=c.x(1, 2, 2, 3, 4), strides=[1, 2, 2, 2, 1],
          padding="VALID"),
        V("NCDHW", tol=10, input_sizes=i32([2, 3, 4, 5, 6]), filter=f, out_backprop=first(c.x(2, 4, 5, 6, 4)), strides=[1, 1, 1, 1, 1],
          padding="SAME", data_format="NCDHW", ref=channels_first_ref(c.op, ["out_backprop"], ["input_sizes"])),
    ]


def conv3d_backprop_filter(c):
    x = c.x(2, 4, 5, 6, 3)
    return [
        V("SAME", tol=20, input=x, filter_sizes=i32([2, 3, 2, 3, 4]), out_backprop=c.x(2, 4, 5, 6, 4), strides=[1, 1, 1, 1, 1], padding="SAME"),
        V("VALID strided", tol=20, input=x, filter_sizes=i32([2, 3, 2, 3, 4]), out_backprop=c.x(2, 2, 2, 3, 4), strides=[1, 2, 2, 2, 1],
          padding="VALID"),
        V("NCDHW", tol=20, input=first(x), filter_sizes=i32([2, 3, 2, 3, 4]), out_backprop=first(c.x(2, 4, 5, 6, 4)), strides=[1, 1, 1, 1, 1],
          padding="SAME", data_format="NCDHW", ref=channels_first_ref(c.op, ["input", "out_backprop"], out_transpose=False)),
    ]


def fused_conv2d(c):
    """Each fused_ops variant, with the convolution geometries spread over
    them. The CPU's _FusedConv2D (oneDNN off, as the sweep runs) has no Tanh
    or Sigmoid fusion, checked against the unfused ops, and runs only NHWC,
    so NCHW goes through channels-last. Its float16 kernel rejects half
    inputs: that dtype is checked against the CPU in float32."""
    x = image(c)
    geometry = [
        ("SAME 3x3", dict(input=x, filter=c.x(3, 3, 3, 4), strides=[1, 1, 1, 1], padding="SAME")),
        ("VALID strides 2x3", dict(input=x, filter=c.x(3, 2, 3, 4), strides=[1, 2, 3, 1], padding="VALID")),
        ("dilations 2", dict(input=x, filter=c.x(3, 3, 3, 2), strides=[1, 1, 1, 1], padding="SAME", dilations=[1, 2, 2, 1])),
        ("EXPLICIT padding", dict(input=x, filter=c.x(2, 3, 3, 2), strides=[1, 1, 1, 1], padding="EXPLICIT",
                                  explicit_paddings=[0, 0, 1, 2, 0, 1, 0, 0])),
        ("NCHW strided", dict(input=c.x(2, 3, 7, 8), filter=c.x(3, 3, 3, 4), strides=[1, 1, 2, 1], padding="SAME", data_format="NCHW")),
        ("SAME strided even kernel", dict(input=x, filter=c.x(4, 4, 3, 2), strides=[1, 2, 2, 1], padding="SAME")),
        ("1x1 filter", dict(input=c.x(1, 4, 5, 6), filter=c.x(1, 1, 6, 3), strides=[1, 1, 1, 1], padding="VALID")),
    ]
    vs = []
    for i, act in enumerate(FUSED_ACTIVATIONS):
        name, kw = geometry[i % len(geometry)]
        out = kw["filter"].shape[-1]
        ref = None
        if act in ("Tanh", "Sigmoid"):
            ref = unfused_ref(c.op)
        elif kw.get("data_format") == "NCHW":
            ref = channels_first_ref(c.op, ["input"])
        vs.append(V("%s, %s" % ("+".join(fused_ops(act)), name), tol=10, ref=ref, args=[c.x(out)], host_args=[], num_args=1,
                    **kw, **fused_attrs(act)))
    vs.append(V("BiasAdd+Relu, empty batch", input=c.x(0, 5, 5, 3), filter=c.x(3, 3, 3, 2), args=[c.x(2)], host_args=[], num_args=1,
                strides=[1, 1, 1, 1], padding="SAME", **fused_attrs("Relu")))
    vs.append(V("BiasAdd+Elu, NCHW VALID", tol=10, input=c.x(1, 3, 6, 5), filter=c.x(2, 2, 3, 2), args=[c.x(2)], host_args=[], num_args=1,
                strides=[1, 1, 1, 1], padding="VALID", data_format="NCHW", ref=channels_first_ref(c.op, ["input"]), **fused_attrs("Elu")))
    return vs


def pool(c):
    key = c.od.input_arg[0].name
    x = image(c)
    vs = [
        V("SAME 3x3 stride 2", tol=2, **{key: x}, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME"),
        V("VALID 2x3 stride 2x1", tol=2, **{key: x}, ksize=[1, 2, 3, 1], strides=[1, 2, 1, 1], padding="VALID"),
        V("VALID window of the whole image", tol=2, **{key: c.x(1, 4, 5, 2)}, ksize=[1, 4, 5, 1], strides=[1, 1, 1, 1], padding="VALID"),
        V("empty batch", **{key: c.x(0, 4, 4, 2)}, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
    ]
    vs.append(V("NCHW", tol=2, **{key: c.x(2, 3, 6, 7)}, ksize=[1, 1, 2, 2], strides=[1, 1, 2, 2], padding="SAME", data_format="NCHW",
                ref=channels_first_ref(c.op, [key])))
    return vs


def pool3d(c):
    x = c.x(2, 4, 5, 6, 3)
    return [
        V("SAME 2x3x3 stride 2", tol=2, input=x, ksize=[1, 2, 3, 3, 1], strides=[1, 2, 2, 2, 1], padding="SAME"),
        V("VALID 2x2x2 stride 1x2x1", tol=2, input=x, ksize=[1, 2, 2, 2, 1], strides=[1, 1, 2, 1, 1], padding="VALID"),
        V("NCDHW", tol=2, input=first(x), ksize=[1, 1, 2, 2, 2], strides=[1, 1, 2, 2, 2], padding="SAME", data_format="NCDHW",
          ref=channels_first_ref(c.op, ["input"])),
    ]


def pool3d_grad(c):
    vs = []
    for name, ks, st, pad in (("SAME 2x3x3 stride 2", [1, 2, 3, 3, 1], [1, 2, 2, 2, 1], "SAME"),
                              ("VALID 2x2x2", [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID")):
        x = distinct(c, 2, 3, 5, 4, 2)
        y = maxpool_out(x, ks, st, pad, op="MaxPool3D")
        if c.op == "MaxPool3DGrad":
            vs.append(V(name, tol=2, orig_input=x, orig_output=y, grad=c.x(*y.shape), ksize=ks, strides=st, padding=pad))
        else:
            vs.append(V(name, tol=2, orig_input_shape=i32(x.shape), grad=c.x(*y.shape), ksize=ks, strides=st, padding=pad))
    return vs


def pool_v2(c):
    x = image(c)
    return [
        V("SAME 3x3 stride 2", input=x, ksize=i32([1, 3, 3, 1]), strides=i32([1, 2, 2, 1]), padding="SAME"),
        V("VALID 2x2", input=x, ksize=i32([1, 2, 2, 1]), strides=i32([1, 2, 2, 1]), padding="VALID"),
    ]


def maxpool_out(x, ksize, strides, padding, op="MaxPool"):
    """The pooled values, computed in float32 (the CPU lacks some narrow
    dtypes; a max is exact in any of them)."""
    with tf.device("/device:CPU:0"):
        y = getattr(tf.raw_ops, op)(input=tf.constant(x.astype(np.float32)), ksize=ksize, strides=strides, padding=padding)
        return y.numpy().astype(x.dtype)


def distinct(c, *shape, dtype=None):
    """Data without ties: max-pool gradients route to one maximum, and which
    of equal ones is TensorFlow's choice, documented as not guaranteed."""
    dt = tf.dtypes.as_dtype(dtype) if dtype is not None else c.T
    n = int(np.prod(shape))
    p = c.rng.permutation(n)
    if dt.is_integer:
        v = p if dt.is_unsigned else p - n // 2
    else:
        # Sixteenths of integers: exact in bfloat16's 8 significant bits for
        # up to 256 values, so rounding to the dtype makes no ties.
        if n > 256:
            raise NoRecipe("distinct(): %d values cannot all be distinct in bfloat16" % n)
        v = (p - n // 2) / 16.0
    return v.reshape(shape).astype(dt.as_numpy_dtype)


def maxpool_grad(c):
    vs = []
    for name, ks, st, pad in (("SAME 3x3 stride 2", [1, 3, 3, 1], [1, 2, 2, 1], "SAME"), ("VALID 2x2", [1, 2, 2, 1], [1, 2, 2, 1], "VALID")):
        x = distinct(c, 2, 7, 6, 3)
        y = maxpool_out(x, ks, st, pad)
        if c.op == "MaxPoolGrad":
            vs.append(V(name, tol=2, orig_input=x, orig_output=y, grad=c.x(*y.shape), ksize=ks, strides=st, padding=pad))
        elif c.op == "MaxPoolGradV2":
            vs.append(V(name, tol=2, orig_input=x, orig_output=y, grad=c.x(*y.shape), ksize=i32(ks), strides=i32(st), padding=pad))
    if c.op == "MaxPoolGrad":
        x = distinct(c, 2, 7, 6, 3)
        y = maxpool_out(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        vs.append(V("NCHW", tol=2, orig_input=first(x), orig_output=first(y), grad=first(c.x(*y.shape)), ksize=[1, 1, 2, 2],
                    strides=[1, 1, 2, 2], padding="SAME", data_format="NCHW",
                    ref=channels_first_ref(c.op, ["orig_input", "orig_output", "grad"])))
    return vs


def avgpool_grad(c):
    return [
        V("SAME 3x3 stride 2", tol=2, orig_input_shape=i32([2, 7, 8, 3]), grad=c.x(2, 4, 4, 3), ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME"),
        V("VALID 2x2", tol=2, orig_input_shape=i32([2, 7, 8, 3]), grad=c.x(2, 3, 4, 3), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
        V("NCHW", tol=2, orig_input_shape=i32([2, 3, 7, 8]), grad=c.x(2, 3, 4, 4), ksize=[1, 1, 3, 3], strides=[1, 1, 2, 2], padding="SAME",
          data_format="NCHW", ref=channels_first_ref(c.op, ["grad"], ["orig_input_shape"])),
    ]


def bias_add(c):
    vs = [
        V("NHWC 2x3x4x5", value=c.x(2, 3, 4, 5), bias=c.x(5)),
        V("2-D", value=c.x(4, 3), bias=c.x(3)),
        V("empty batch", value=c.x(0, 3), bias=c.x(3)),
    ]
    if c.op == "BiasAdd":
        vs.append(V("NCHW 2x5x3x4", value=c.x(2, 5, 3, 4), bias=c.x(5), data_format="NCHW"))
    return vs


def bias_add_grad(c):
    return [
        V("NHWC 2x3x4x5", tol=4, out_backprop=c.x(2, 3, 4, 5)),
        V("NCHW 2x5x3x4", tol=4, out_backprop=c.x(2, 5, 3, 4), data_format="NCHW"),
        V("2-D", tol=4, out_backprop=c.x(6, 3)),
    ]


def softmax(c):
    key = c.od.input_arg[0].name
    return [
        V("3x7", **{key: c.x(3, 7)}),
        V("large logits 2x3x5", tol=2, **{key: c.x(2, 3, 5) * c.of(20)}),
        V("one class", **{key: c.x(4, 1)}),
        V("empty batch", **{key: c.x(0, 5)}),
    ]


def xent(c):
    labels = tf.nn.softmax(c.x(4, 5, dtype=tf.float32)).numpy().astype(c.T.as_numpy_dtype)
    return [
        V("4x5", tol=2, features=c.x(4, 5), labels=labels),
        V("broadcast labels 1x5", tol=2, features=c.x(3, 5), labels=labels[:1]),
    ]


def sparse_xent(c):
    lt = c.dt("Tlabels") if "Tlabels" in c.types else tf.int64
    return [
        V("4x5", tol=2, features=c.x(4, 5), labels=c.x(4, lo=0, hi=4, dtype=lt)),
        V("large logits", tol=2, features=c.x(3, 6) * c.of(20), labels=c.x(3, lo=0, hi=5, dtype=lt)),
    ]


def leaky_relu(c):
    return [
        V("default alpha", features=c.x(3, 5)),
        V("alpha 0.01", features=c.x(2, 3, 4), alpha=0.01),
        V("empty", features=c.x(0, 3)),
    ]


def leaky_relu_grad(c):
    return [V("alpha 0.3", gradients=c.x(3, 5), features=c.x(3, 5), alpha=0.3)]


def l2loss(c):
    return [V("3x4x5", tol=4, t=c.x(3, 4, 5)), V("scalar", t=c.x()), V("empty", t=c.x(0, 3))]


def lrn(c):
    return [V("defaults", tol=4, input=image(c)), V("radius 2", tol=4, input=image(c), depth_radius=2, bias=2.0, alpha=0.5, beta=0.75),
            V("radius 1, beta 1, 11 channels", tol=4, input=image(c, ch=11), depth_radius=1, alpha=0.1, beta=1.0),
            V("radius past the channels", tol=4, input=image(c, ch=4), depth_radius=6, bias=0.5, alpha=0.2)]


def lrn_grad(c):
    """The gradient at the CPU's own forward output, for each attribute set
    of lrn()."""
    vs = []
    for name, ch, kw in (("defaults", 3, {}), ("radius 2", 3, dict(depth_radius=2, bias=2.0, alpha=0.5, beta=0.75)),
                         ("radius 1, beta 1, 11 channels", 11, dict(depth_radius=1, alpha=0.1, beta=1.0))):
        x = image(c, ch=ch)
        with tf.device("/device:CPU:0"):
            y = tf.raw_ops.LRN(input=x, **kw).numpy()
        vs.append(V(name, tol=10, input_grads=image(c, ch=ch), input_image=x, output_image=y, **kw))
    return vs


def batch_norm(c):
    U = c.dt("U") if "U" in c.types else c.T
    ch = 4
    x = c.x(2, 5, 6, ch)
    scale, offset = c.x(ch, dtype=U), c.x(ch, dtype=U)
    mean, var = c.x(ch, dtype=U), c.x(ch, lo=0.5, hi=2.0, dtype=U)
    empty = c.x(0, dtype=U)
    reserve = {"reserve_space_1": "skip", "reserve_space_2": "skip", "reserve_space_3": "skip"}
    vs = [
        V("training NHWC", tol=10, out_check=reserve, x=x, scale=scale, offset=offset, mean=empty, variance=empty, is_training=True),
        V("training, exponential_avg_factor 0.5", tol=10, out_check=reserve, x=x, scale=scale, offset=offset, mean=mean, variance=var,
          is_training=True, exponential_avg_factor=0.5),
        V("inference NHWC", tol=10, out_check=reserve, x=x, scale=scale, offset=offset, mean=mean, variance=var, is_training=False),
        V("training NCHW", tol=10, out_check=reserve, x=c.x(2, ch, 5, 6), scale=scale, offset=offset, mean=empty, variance=empty,
          is_training=True, data_format="NCHW"),
        V("inference NCHW, epsilon 0.01", tol=10, out_check=reserve, x=c.x(2, ch, 5, 6), scale=scale, offset=offset, mean=mean,
          variance=var, is_training=False, data_format="NCHW", epsilon=0.01),
    ]
    if c.op == "FusedBatchNormV3":  # the older forms' data_format has no NDHWC
        vs.append(V("training 5-D NDHWC", tol=10, out_check=reserve, x=c.x(2, 3, 2, 3, ch), scale=scale, offset=offset, mean=empty,
                    variance=empty, is_training=True, data_format="NDHWC"))
    return vs


def batch_norm_grad(c):
    """The CPU's convention for the saved statistics: reserve_space_1 is the
    batch mean, reserve_space_2 the batch variance."""
    U = c.dt("U") if "U" in c.types else c.T
    ch = 3
    x = c.x(2, 4, 5, ch)
    xf = x.astype(np.float64)
    mean = xf.mean(axis=(0, 1, 2)).astype(U.as_numpy_dtype)
    var = xf.var(axis=(0, 1, 2)).astype(U.as_numpy_dtype)
    kw = dict(y_backprop=c.x(2, 4, 5, ch), x=x, scale=c.x(ch, dtype=tf.float32 if c.op == "FusedBatchNormGradV3" else U),
              reserve_space_1=mean, reserve_space_2=var)
    if c.op == "FusedBatchNormGradV3":
        kw["reserve_space_3"] = c.x(0, dtype=U)
    out = {"reserve_space_3": "skip", "reserve_space_4": "skip", "reserve_space_5": "skip"}
    xc = first(x)
    kwc = dict(kw, y_backprop=first(kw["y_backprop"]), x=xc)
    return [
        V("training", tol=20, out_check=out, is_training=True, **kw),
        V("inference", tol=20, out_check=out, is_training=False, **kw),
        V("training NCHW", tol=20, out_check=out, is_training=True, data_format="NCHW", **kwc),
    ]


# ---------------------------------------------------------------------------
# Reductions


def reduction(lo=None, hi=None, tol=4.0, empty=True, int_range=None):
    def recipe(c):
        key = c.od.input_arg[0].name
        dt = c.argdt(key)
        lo_, hi_ = (int_range if (int_range and dt.is_integer) else (lo, hi))

        def x(*s):
            return c.x(*s, lo=lo_, hi=hi_, dtype=dt)

        vs = [
            V("3x4x5 axes [0, -1]", tol=tol, **{key: x(3, 4, 5)}, reduction_indices=i32([0, -1])),
            V("axis 1, keep_dims", tol=tol, **{key: x(3, 4, 5)}, reduction_indices=i32(1), keep_dims=True),
            V("all axes, int64 axis", tol=tol, **{key: x(2, 3, 4)}, reduction_indices=i64([0, 1, 2])),
            V("no axes", **{key: x(2, 3)}, reduction_indices=i32([])),
        ]
        if empty:
            vs.append(V("empty input, axis 0", **{key: x(0, 3)}, reduction_indices=i32([0])))
        return vs

    return recipe


def arg_reduce(c):
    # Distinct values: which of equal extremes wins is not guaranteed by
    # TensorFlow's documentation, so no case depends on it.
    x = distinct(c, 3, 4, 5)
    return [
        V("3x4x5 axis 1", input=x, dimension=i32(1)),
        V("axis -1", input=x, dimension=i32(-1)),
        V("int64 axis 0", input=x, dimension=i64(0)),
        V("1-D", input=distinct(c, 7), dimension=i32(0)),
    ]


def cumulative(c):
    lo, hi = (0.5, 1.5) if c.op == "Cumprod" else (None, None)
    if c.is_int and c.op == "Cumprod":
        lo, hi = (0 if c.T.is_unsigned else -2), 2
    vs = [
        V("axis 1", tol=4, x=c.x(3, 5, 2, lo=lo, hi=hi), axis=i32(1)),
        V("axis -1 exclusive", tol=4, x=c.x(3, 4, lo=lo, hi=hi), axis=i32(-1), exclusive=True),
        V("axis 0 reverse", tol=4, x=c.x(4, 3, lo=lo, hi=hi), axis=i32(0), reverse=True),
        V("exclusive reverse", tol=4, x=c.x(2, 6, lo=lo, hi=hi), axis=i32(1), exclusive=True, reverse=True),
        V("empty", x=c.x(0, 3, lo=lo, hi=hi), axis=i32(0)),
    ]
    if c.op == "CumulativeLogsumexp":
        # Terms 80 apart: exp of their differences under- and overflows
        # unless each step subtracts its maximum.
        vs.append(V("spread values, 11 long", tol=4, x=c.x(2, 11, lo=-80, hi=80), axis=i32(1)))
    return vs


# ---------------------------------------------------------------------------
# Data movement


def reshape(c):
    return [
        V("3x4x5 to 5x-1", tensor=c.x(3, 4, 5), shape=i32([5, -1])),
        V("to scalar", tensor=c.x(1, 1), shape=i32([])),
        V("int64 shape", tensor=c.x(6), shape=i64([2, 1, 3])),
        V("empty", tensor=c.x(0, 4), shape=i32([4, 0])),
        V("empty with -1", tensor=c.x(0, 4), shape=i32([2, 0, -1])),
    ]


def transpose(c):
    return [
        V("perm 2,0,1", x=c.x(2, 3, 4), perm=i32([2, 0, 1])),
        V("2-D", x=c.x(3, 5), perm=i32([1, 0])),
        V("identity perm, int64", x=c.x(2, 3), perm=i64([0, 1])),
        V("rank 5", x=c.x(2, 1, 3, 2, 2), perm=i32([4, 2, 0, 3, 1])),
        V("empty", x=c.x(0, 3, 2), perm=i32([1, 2, 0])),
    ]


def identity_like(c):
    key = c.od.input_arg[0].name
    return [V("2x3x4", **{key: c.x(2, 3, 4)}), V("scalar", **{key: c.x()}), V("empty", **{key: c.x(0, 2)})]


def identity_n(c):
    return [V("two tensors", input=[c.x(2, 3), c.x(4)])]


def concat(c):
    vs = [
        V("axis 0", values=[c.x(2, 3), c.x(4, 3), c.x(1, 3)], axis=i32(0)),
        V("axis -1", values=[c.x(2, 3, 1), c.x(2, 3, 4)], axis=i32(-1)),
        V("an empty piece, int64 axis", values=[c.x(2, 0), c.x(2, 3)], axis=i64(1)),
    ]
    if c.op == "Concat":
        vs = [V(v.name, values=v.kw["values"], concat_dim=i32(int(v.kw["axis"]))) for v in vs]
    return vs


def pack(c):
    return [
        V("axis 0", values=[c.x(2, 3), c.x(2, 3), c.x(2, 3)]),
        V("axis -1", values=[c.x(2, 3), c.x(2, 3)], axis=-1),
        V("scalars", values=[c.x(), c.x()]),
    ]


def unpack(c):
    return [
        V("axis 0", value=c.x(3, 2, 4), num=3),
        V("axis -1", value=c.x(2, 3), num=3, axis=-1),
    ]


def split(c):
    return [
        V("axis 1 in 3", split_dim=i32(1), value=c.x(2, 6, 2), num_split=3),
        V("axis -1 in 2", split_dim=i32(-1), value=c.x(3, 4), num_split=2),
    ]


def split_v(c):
    return [
        V("sizes 1,3,2 on axis 1", value=c.x(2, 6, 2), size_splits=i64([1, 3, 2]), split_dim=i32(1), num_split=3),
        V("inferred size -1, axis -1", value=c.x(3, 7), size_splits=i32([2, -1]), split_dim=i32(-1), num_split=2),
        V("a zero size", value=c.x(4, 3), size_splits=i64([0, 4]), split_dim=i32(0), num_split=2),
    ]


def slice_op(c):
    return [
        V("2-D", input=c.x(5, 6), begin=i32([1, 2]), size=i32([3, 3])),
        V("size -1", input=c.x(3, 4, 5), begin=i64([0, 1, 2]), size=i64([-1, 2, -1])),
        V("empty result", input=c.x(4, 3), begin=i32([2, 0]), size=i32([0, 3])),
    ]


def strided_slice(c):
    x = c.x(5, 6, 4)
    return [
        V("strides 2,1,-1", input=x, begin=i32([0, 1, 3]), end=i32([5, 4, 0]), strides=i32([2, 1, -1])),
        V("begin and end masks", input=x, begin=i32([1, 0, 1]), end=i32([0, 3, 0]), strides=i32([1, 1, 2]), begin_mask=2, end_mask=5),
        V("shrink axis 0, new axis", input=x, begin=i32([2, 0, 0]), end=i32([3, 0, 0]), strides=i32([1, 1, 1]),
          shrink_axis_mask=1, new_axis_mask=2, end_mask=4),
        V("ellipsis", input=x, begin=i32([0, 1]), end=i32([0, 3]), strides=i32([1, 1]), ellipsis_mask=1),
        V("negative indices, int64", input=x, begin=i64([-4, -1, 0]), end=i64([-1, -7, 4]), strides=i64([1, -2, 1])),
        V("empty result", input=x, begin=i32([3, 0, 0]), end=i32([3, 6, 4]), strides=i32([1, 1, 1])),
    ]


def strided_slice_grad(c):
    return [
        V("strides 2,1,-1", shape=i32([5, 6, 4]), begin=i32([0, 1, 3]), end=i32([5, 4, 0]), strides=i32([2, 1, -1]), dy=c.x(3, 3, 3)),
        V("shrink axis 0", shape=i32([5, 6, 4]), begin=i32([2, 0, 0]), end=i32([3, 6, 4]), strides=i32([1, 1, 1]),
          shrink_axis_mask=1, dy=c.x(6, 4)),
    ]


def pad(c):
    vs = [
        V("2-D", input=c.x(3, 4), paddings=i32([[1, 2], [0, 3]])),
        V("3-D, int64 paddings", input=c.x(2, 3, 2), paddings=i64([[0, 1], [2, 0], [1, 1]])),
        V("empty input", input=c.x(0, 2), paddings=i32([[1, 1], [0, 0]])),
    ]
    if c.op == "PadV2":
        for v in vs:
            v.kw["constant_values"] = c.of(3)
    if c.op == "MirrorPad":
        return [
            V("REFLECT", input=c.x(4, 5), paddings=i32([[1, 2], [3, 0]]), mode="REFLECT"),
            V("SYMMETRIC", input=c.x(3, 4, 2), paddings=i64([[0, 3], [2, 1], [1, 2]]), mode="SYMMETRIC"),
        ]
    return vs


def tile(c):
    return [
        V("2-D", input=c.x(2, 3), multiples=i32([2, 3])),
        V("3-D, int64", input=c.x(2, 1, 3), multiples=i64([1, 4, 2])),
        V("zero multiple", input=c.x(2, 3), multiples=i32([0, 2])),
    ]


def broadcast_to(c):
    return [
        V("3 to 4x3", input=c.x(3), shape=i32([4, 3])),
        V("2x1x3 to 2x5x3, int64", input=c.x(2, 1, 3), shape=i64([2, 5, 3])),
        V("scalar to 2x2", input=c.x(), shape=i32([2, 2])),
        V("to empty", input=c.x(1, 3), shape=i32([0, 3])),
    ]


def expand_dims(c):
    return [
        V("axis 0", input=c.x(3, 4), dim=i32(0)),
        V("axis -1, int64", input=c.x(3, 4), dim=i64(-1)),
        V("scalar", input=c.x(), dim=i32(0)),
    ]


def squeeze(c):
    return [
        V("all unit dims", input=c.x(1, 3, 1, 4)),
        V("axis -2", input=c.x(1, 3, 1, 4), squeeze_dims=[-2]),
        V("empty", input=c.x(0, 1, 2), squeeze_dims=[1]),
    ]


def reverse(c):
    return [
        V("axis 1", tensor=c.x(3, 4, 2), axis=i32([1])),
        V("axes 0,-1, int64", tensor=c.x(3, 4, 2), axis=i64([0, -1])),
        V("no axes", tensor=c.x(3, 2), axis=i32([])),
    ]


def roll(c):
    ts = c.dt("Tshift", tf.int32).as_numpy_dtype
    ta = c.dt("Taxis", tf.int32).as_numpy_dtype
    return [
        V("shift 2 on axis 1", input=c.x(3, 5), shift=np.array(2, ts), axis=np.array(1, ta)),
        V("negative shifts, two axes", input=c.x(4, 3, 2), shift=np.array([-1, 5], ts), axis=np.array([0, -1], ta)),
        V("shifts past the size, a repeated axis", input=c.x(3, 7), shift=np.array([9, -23, 4], ts), axis=np.array([1, 1, 0], ta)),
        V("empty dim", input=c.x(0, 4), shift=np.array([1, 2], ts), axis=np.array([0, 1], ta)),
    ]


def reverse_sequence(c):
    lt = c.dt("Tlen", tf.int64).as_numpy_dtype
    return [
        V("seq_dim 1, batch_dim 0", input=c.x(4, 6, 2), seq_lengths=np.array([6, 0, 3, 1], lt), seq_dim=1, batch_dim=0),
        V("seq_dim 0, batch_dim 2", input=c.x(5, 3, 3), seq_lengths=np.array([2, 5, 4], lt), seq_dim=0, batch_dim=2),
        V("2-D, batch after seq", input=c.x(7, 3), seq_lengths=np.array([7, 1, 4], lt), seq_dim=0, batch_dim=1),
    ]


def space_batch(c):
    """Block shapes of one to three spatial dims (not all square), with
    paddings or crops on both sides, and trailing dims after the spatial
    ones."""
    if c.op == "SpaceToBatchND":
        return [
            V("2-D blocks 2x3, padded", input=c.x(2, 5, 4, 3), block_shape=i32([2, 3]), paddings=i32([[1, 0], [0, 2]])),
            V("1-D block 3, int64", input=c.x(1, 7, 2), block_shape=i64([3]), paddings=i64([[1, 1]])),
            V("3-D blocks 2x1x2", input=c.x(2, 2, 3, 4, 1), block_shape=i32([2, 1, 2]), paddings=i32([[0, 0], [0, 0], [1, 1]])),
        ]
    if c.op == "BatchToSpaceND":
        return [
            V("2-D blocks 2x3, cropped", input=c.x(12, 3, 2, 3), block_shape=i32([2, 3]), crops=i32([[1, 0], [0, 2]])),
            V("1-D block 3, int64", input=c.x(3, 3, 2), block_shape=i64([3]), crops=i64([[1, 1]])),
            V("3-D blocks 2x1x2", input=c.x(8, 2, 3, 3, 1), block_shape=i32([2, 1, 2]), crops=i32([[0, 0], [0, 0], [1, 1]])),
        ]
    if c.op == "SpaceToBatch":
        return [V("block 2, padded", input=c.x(2, 5, 4, 3), paddings=i32([[1, 0], [1, 1]]), block_size=2),
                V("block 3", input=c.x(1, 6, 3, 2), paddings=i64([[0, 0], [0, 0]]), block_size=3)]
    return [V("block 2, cropped", input=c.x(8, 3, 3, 2), crops=i32([[1, 0], [0, 1]]), block_size=2),
            V("block 3", input=c.x(9, 2, 1, 2), crops=i64([[0, 0], [0, 0]]), block_size=3)]


def gather_v2(c):
    it = c.dt("Tindices") if "Tindices" in c.types else tf.int32
    return [
        V("axis 0", params=c.x(5, 3), indices=c.x(4, lo=0, hi=4, dtype=it), axis=i32(0)),
        V("axis -1, 2-D indices", params=c.x(3, 6), indices=c.x(2, 2, lo=0, hi=5, dtype=it), axis=i32(-1)),
        V("batch_dims 1", params=c.x(2, 5, 3), indices=c.x(2, 4, lo=0, hi=4, dtype=it), axis=i64(1), batch_dims=1),
        V("repeated indices, scalar index", params=c.x(4, 3), indices=np.array(2, dtype=it.as_numpy_dtype), axis=i32(0)),
        V("empty indices", params=c.x(4, 3), indices=np.zeros((0,), dtype=it.as_numpy_dtype), axis=i32(0)),
    ]


def gather_nd(c):
    it = c.dt("Tindices") if "Tindices" in c.types else tf.int32
    return [
        V("full index", params=c.x(4, 5), indices=np.array([[0, 1], [3, 4], [2, 2]], dtype=it.as_numpy_dtype)),
        V("slices", params=c.x(4, 5, 2), indices=np.array([[1], [3], [1]], dtype=it.as_numpy_dtype)),
        V("batched index", params=c.x(3, 4), indices=np.array([[[0, 0], [2, 3]], [[1, 1], [0, 3]]], dtype=it.as_numpy_dtype)),
    ]


def scatter_nd(c):
    it = c.dt("Tindices") if "Tindices" in c.types else tf.int32
    nd = it.as_numpy_dtype
    return [
        V("rows", indices=np.array([[1], [3]], dtype=nd), updates=c.x(2, 4), shape=np.array([5, 4], dtype=nd)),
        V("elements, repeated indices add", indices=np.array([[0, 1], [2, 2], [0, 1]], dtype=nd), updates=c.x(3), shape=np.array([3, 3], dtype=nd)),
    ]


def tensor_scatter(c):
    it = c.dt("Tindices") if "Tindices" in c.types else tf.int32
    nd = it.as_numpy_dtype
    # Repeated indices only where the combination is order-free.
    rep = c.op != "TensorScatterUpdate"
    idx = np.array([[0, 1], [2, 2], [0, 1]] if rep else [[0, 1], [2, 2], [1, 0]], dtype=nd)
    key = "input" if c.op == "ScatterNdNonAliasingAdd" else "tensor"
    return [
        V("rows", **{key: c.x(5, 4)}, indices=np.array([[1], [3]], dtype=nd), updates=c.x(2, 4)),
        V("elements" + (", repeated indices" if rep else ""), **{key: c.x(3, 3)}, indices=idx, updates=c.x(3)),
    ]


def one_hot(c):
    ti = c.dt("TI", tf.int64)
    idx = [0, 2, 1, 5] + ([] if ti.is_unsigned else [-1])
    return [
        V("axis -1, an index out of range", indices=np.array(idx, dtype=ti.as_numpy_dtype), depth=i32(4), on_value=c.of(1), off_value=c.of(0)),
        V("axis 0, 2-D", indices=np.array([[0, 3], [1, 2]], dtype=ti.as_numpy_dtype), depth=i32(4), on_value=c.of(5), off_value=c.of(2), axis=0),
    ]


def fill(c):
    return [
        V("2x3", dims=i32([2, 3]), value=c.x()),
        V("int64 dims", dims=i64([4]), value=c.x()),
        V("empty", dims=i32([0, 3]), value=c.x()),
    ]


def zeros_like(c):
    return [V("2x3", x=c.x(2, 3)), V("empty", x=c.x(0, 2))]


def range_op(c):
    t = c.dt("Tidx")
    if t.is_integer:
        return [
            V("0..10 by 3", start=c.of(0, t), limit=c.of(10, t), delta=c.of(3, t)),
            V("descending", start=c.of(5, t) if not t.is_unsigned else c.of(9, t), limit=c.of(-4, t) if not t.is_unsigned else c.of(1, t), delta=c.of(-2, t)),
            V("empty", start=c.of(3, t), limit=c.of(3, t), delta=c.of(1, t)),
        ]
    return [
        V("0..2 by 0.3", start=c.of(0, t), limit=c.of(2, t), delta=c.of(0.3, t)),
        V("descending", start=c.of(1, t), limit=c.of(-1.5, t), delta=c.of(-0.5, t)),
    ]


def linspace(c):
    nt = c.dt("Tidx", tf.int32).as_numpy_dtype
    return [
        V("7 points", start=c.of(-1.0), stop=c.of(2.0), num=np.array(7, nt)),
        V("1 point", start=c.of(3.0), stop=c.of(5.0), num=np.array(1, nt)),
        V("descending, 100 points", start=c.of(4.5), stop=c.of(-3.3), num=np.array(100, nt)),
        V("2 points, equal ends", start=c.of(0.7), stop=c.of(0.7), num=np.array(2, nt)),
    ]


def cross(c):
    lo, hi = (0, 5) if c.T.is_unsigned else (None, None)
    return [
        V("4x3", a=c.x(4, 3, lo=lo, hi=hi), b=c.x(4, 3, lo=lo, hi=hi)),
        V("2x5x3", a=c.x(2, 5, 3, lo=lo, hi=hi), b=c.x(2, 5, 3, lo=lo, hi=hi)),
        V("one vector", a=c.x(3, lo=lo, hi=hi), b=c.x(3, lo=lo, hi=hi)),
    ]


def matrix_band_part(c):
    t = c.dt("Tindex") if "Tindex" in c.types else tf.int64
    nd = t.as_numpy_dtype
    return [
        V("lower 1, upper 2", input=c.x(2, 4, 5), num_lower=np.array(1, nd), num_upper=np.array(2, nd)),
        V("lower triangle", input=c.x(4, 4), num_lower=np.array(-1, nd), num_upper=np.array(0, nd)),
        V("upper triangle, tall", input=c.x(3, 5, 3), num_lower=np.array(0, nd), num_upper=np.array(-1, nd)),
        V("whole band, wide", input=c.x(2, 7), num_lower=np.array(2, nd), num_upper=np.array(7, nd)),
        V("empty batch", input=c.x(0, 3, 3), num_lower=np.array(1, nd), num_upper=np.array(0, nd)),
    ]


def depth_space(c):
    if c.op == "DepthToSpace":
        return [V("block 2", input=c.x(2, 3, 4, 8), block_size=2),
                V("block 3, 18 channels", input=c.x(1, 2, 3, 18), block_size=3),
                V("NCHW block 2", input=first(c.x(2, 3, 2, 12)), block_size=2, data_format="NCHW",
                  ref=channels_first_ref(c.op, ["input"]))]
    return [V("block 2", input=c.x(2, 4, 6, 3), block_size=2),
            V("block 3", input=c.x(1, 6, 3, 5), block_size=3),
            V("NCHW block 2", input=first(c.x(2, 4, 2, 3)), block_size=2, data_format="NCHW",
              ref=channels_first_ref(c.op, ["input"]))]


def resize(c):
    """Up and down, to sizes that are not multiples of the image's, in each
    of the three sampling conventions (the default, align_corners,
    half_pixel_centers)."""
    x = c.x(2, 5, 4, 3)
    modes = [("", {}), (", align_corners", {"align_corners": True}), (", half_pixel_centers", {"half_pixel_centers": True})]
    vs = []
    for name, kw in modes:
        vs.append(V("5x4 up to 7x9" + name, images=x, size=i32([7, 9]), **kw))
        vs.append(V("5x4 down to 3x2" + name, images=x, size=i32([3, 2]), **kw))
    vs.append(V("to 1x1", images=x, size=i32([1, 1])))
    vs.append(V("empty batch", images=c.x(0, 3, 3, 2), size=i32([5, 4])))
    return vs


def resize_grad(c):
    modes = [("", {}), (", align_corners", {"align_corners": True}), (", half_pixel_centers", {"half_pixel_centers": True})]
    vs = []
    for name, kw in modes:
        for (gh, gw), (h, w) in (((7, 9), (5, 4)), ((3, 2), (5, 4))):
            label = "%dx%d back to %dx%d%s" % (gh, gw, h, w, name)
            if c.op == "ResizeNearestNeighborGrad":
                vs.append(V(label, tol=4, grads=c.x(2, gh, gw, 3), size=i32([h, w]), **kw))
            else:
                vs.append(V(label, tol=4, grads=c.x(2, gh, gw, 3, dtype=tf.float32), original_image=c.x(2, h, w, 3), **kw))
    return vs


def top_k(c):
    # Ties are documented: the lower index comes first. One variant has them.
    x = distinct(c, 3, 7)
    return [
        V("k 3", input=x, k=i32(3)),
        V("k = n, 1-D", input=distinct(c, 6), k=i32(6)),
        V("k 0", input=x, k=i32(0)),
        V("ties, lower index first", input=c.of([[1, 3, 3, 0, 3], [2, 2, 2, 2, 2]]), k=i32(3)),
    ]


def in_top_k(c):
    """Distinct predictions, ties at the target (which count as in the top
    k: only strictly greater ones push it out), a target out of range and a
    row with a non-finite prediction (both false)."""
    nd = c.T.as_numpy_dtype
    ties = np.array([[1, 3, 3, 0, 3], [2, 2, 2, 2, 2], [0, 1, np.inf, 2, 3], [5, 4, 3, 2, 1]], dtype=np.float32)
    return [
        V("k 2", predictions=distinct(c, 4, 5, dtype=tf.float32), targets=np.array([0, 1, 4, 2], dtype=nd), k=np.array(2, dtype=nd)),
        V("ties, inf, target out of range, k 1", predictions=ties, targets=np.array([1, 3, 4, 5], dtype=nd), k=np.array(1, dtype=nd)),
        V("k 0 and k past the classes", predictions=distinct(c, 3, 4, dtype=tf.float32), targets=np.array([0, 3, 2], dtype=nd),
          k=np.array(0, dtype=nd)),
        V("k 7", predictions=distinct(c, 3, 4, dtype=tf.float32), targets=np.array([0, 3, 2], dtype=nd), k=np.array(7, dtype=nd)),
    ]


def where(c):
    dt = c.dt("T") if "T" in c.types else tf.bool
    return [
        V("3x4", input=c.x(3, 4, dtype=dt)),
        V("none true", input=np.zeros((2, 3), dtype=dt.as_numpy_dtype)),
        V("1-D", input=c.x(7, dtype=dt)),
    ]


def segment(c):
    """Sorted ids with a gap (an empty segment) and a leading empty one;
    unsorted ids with a dropped one (-1), 2-D ids, segments nobody names,
    and an int64 num_segments. Products stay near 1 so that no segment
    overflows the narrow floats."""
    it = c.dt("Tindices") if "Tindices" in c.types else tf.int32
    nd = it.as_numpy_dtype
    lo, hi = (0.5, 1.5) if c.op.endswith("Prod") else (None, None)
    if c.is_int:
        lo, hi = (-3, 3) if c.op.endswith("Prod") else (-20, 20)

    def x(*s):
        return c.x(*s, lo=lo, hi=hi)

    if c.op.startswith("Unsorted"):
        return [
            V("6 rows into 4", tol=2, data=x(6, 3), segment_ids=np.array([3, 0, 1, 3, 0, 3], dtype=nd), num_segments=i32(4)),
            V("a dropped id (-1), an empty segment", tol=2, data=x(5), segment_ids=np.array([0, -1, 2, 2, 0], dtype=nd), num_segments=i32(4)),
            V("2-D ids, int64 num_segments", tol=2, data=x(2, 3, 2), segment_ids=np.array([[1, 0, 4], [4, 4, 1]], dtype=nd),
              num_segments=i64(6)),
            V("empty data", data=x(0, 3), segment_ids=np.zeros((0,), dtype=nd), num_segments=i32(2)),
        ]
    return [
        V("sorted ids with a gap", tol=2, data=x(6, 3), segment_ids=np.array([0, 0, 1, 3, 3, 3], dtype=nd)),
        V("empty first segments, 3-D data", tol=2, data=x(4, 2, 3), segment_ids=np.array([2, 2, 2, 4], dtype=nd)),
        V("one row per segment", data=x(5), segment_ids=np.array([0, 1, 2, 3, 4], dtype=nd)),
        V("empty data", data=x(0, 3), segment_ids=np.zeros((0,), dtype=nd)),
    ]


def diag_ops(c):
    """The band's shapes (square, tall, wide; one diagonal or several, above
    and below the main one) and, for the V3 ops, every alignment."""
    if c.op == "Diag":
        return [V("1-D", diagonal=c.x(4)), V("2-D", diagonal=c.x(2, 3))]
    if c.op == "DiagPart":
        return [V("4x4", input=c.x(4, 4)), V("2x3x2x3", input=c.x(2, 3, 2, 3))]
    if c.op in ("MatrixDiag",):
        return [V("batch", diagonal=c.x(2, 4)), V("one element", diagonal=c.x(1)), V("empty batch", diagonal=c.x(0, 3))]
    if c.op in ("MatrixDiagPart",):
        return [V("batch, wide", input=c.x(2, 4, 5)), V("tall", input=c.x(5, 3))]
    if c.op in ("MatrixSetDiag",):
        return [V("batch, wide", input=c.x(2, 4, 5), diagonal=c.x(2, 4)), V("tall", input=c.x(5, 3), diagonal=c.x(3))]
    aligns = [None] if c.op.endswith("V2") else [None, "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"]

    def aligned(vs):
        out = []
        for i, v in enumerate(vs):
            a = aligns[i % len(aligns)]
            if a:
                v.kw["align"] = a
                v.name += ", " + a
            out.append(v)
        return out

    if c.op in ("MatrixDiagV2", "MatrixDiagV3"):
        return aligned([
            V("main diagonal", diagonal=c.x(2, 4), k=i32(0), num_rows=i32(-1), num_cols=i32(-1), padding_value=c.of(0)),
            V("band -1..1, 4x5", diagonal=c.x(3, 4), k=i32([-1, 1]), num_rows=i32(4), num_cols=i32(5), padding_value=c.of(7)),
            V("band -2..1, rows inferred", diagonal=c.x(2, 4, 4), k=i32([-2, 1]), num_rows=i32(-1), num_cols=i32(4), padding_value=c.of(3)),
            V("superdiagonals 1..2, square", diagonal=c.x(2, 3), k=i32([1, 2]), num_rows=i32(-1), num_cols=i32(-1), padding_value=c.of(1)),
            V("one subdiagonal -2, 6x3", diagonal=c.x(3), k=i32(-2), num_rows=i32(6), num_cols=i32(3), padding_value=c.of(0)),
        ])
    if c.op in ("MatrixDiagPartV2", "MatrixDiagPartV3"):
        return aligned([
            V("main diagonal", input=c.x(2, 4, 5), k=i32(0), padding_value=c.of(0)),
            V("band -1..2", input=c.x(4, 5), k=i32([-1, 2]), padding_value=c.of(9)),
            V("band -3..0, tall", input=c.x(2, 6, 3), k=i32([-3, 0]), padding_value=c.of(1)),
            V("superdiagonals 1..3, wide", input=c.x(3, 6), k=i32([1, 3]), padding_value=c.of(5)),
            V("one superdiagonal 2", input=c.x(2, 4, 4), k=i32(2), padding_value=c.of(0)),
        ])
    if c.op in ("MatrixSetDiagV2", "MatrixSetDiagV3"):
        def band(lo, hi, m, n):
            length = min(m + min(hi, 0), n - max(lo, 0))
            return (length,) if lo == hi else (hi - lo + 1, length)
        return aligned([
            V("main diagonal", input=c.x(2, 4, 5), diagonal=c.x(2, 4), k=i32(0)),
            V("band 0..1", input=c.x(4, 5), diagonal=c.x(*band(0, 1, 4, 5)), k=i32([0, 1])),
            V("band -2..1, tall", input=c.x(2, 6, 4), diagonal=c.x(2, *band(-2, 1, 6, 4)), k=i32([-2, 1])),
            V("superdiagonals 1..3, wide", input=c.x(3, 7), diagonal=c.x(*band(1, 3, 3, 7)), k=i32([1, 3])),
            V("one subdiagonal -1", input=c.x(5, 5), diagonal=c.x(*band(-1, -1, 5, 5)), k=i32(-1)),
        ])
    raise NoRecipe("no diag recipe for %s" % c.op)


def invert_permutation(c):
    return [V("permutation of 6", x=c.rng.permutation(6).astype(c.T.as_numpy_dtype))]


def unique(c):
    return [V("repeats", x=c.of([3, 1, 3, 2, 1, 5, 3]) if not c.is_bool else np.array([True, False, True]))]


def broadcast_args(c):
    nd = c.T.as_numpy_dtype
    return [V("4x1x3 with 5x1", s0=np.array([4, 1, 3], nd), s1=np.array([5, 1], nd))]


# ---------------------------------------------------------------------------
# Complex numbers and FFT


def fft(rank):
    def recipe(c):
        shape = {1: (3, 8), 2: (2, 4, 6), 3: (2, 3, 4, 4)}[rank]
        odd = {1: (2, 5), 2: (5, 3), 3: (2, 3, 3)}[rank]
        dt = c.argdt("input")
        return [V("%s" % "x".join(map(str, shape)), tol=10, input=c.x(*shape, dtype=dt)), V("odd sizes", tol=10, input=c.x(*odd, dtype=dt))]

    return recipe


def rfft(rank):
    def recipe(c):
        rt = c.dt("Treal") if "Treal" in c.types else tf.float32
        lengths = {1: [8], 2: [4, 6], 3: [2, 4, 4]}[rank]
        shape = (2,) + tuple(lengths)
        return [
            V("even lengths", tol=10, input=c.x(*shape, dtype=rt), fft_length=i32(lengths)),
            V("odd last length, cropped", tol=10, input=c.x(*shape, dtype=rt), fft_length=i32(lengths[:-1] + [lengths[-1] - 1])),
        ]

    return recipe


def irfft(rank):
    def recipe(c):
        ct = c.dt("Tcomplex") if "Tcomplex" in c.types else tf.complex64
        lengths = {1: [8], 2: [4, 6], 3: [2, 4, 4]}[rank]
        rt = tf.float32 if ct == tf.complex64 else tf.float64
        real = c.x(*((2,) + tuple(lengths)), dtype=rt)
        spec = np.fft.rfftn(real.astype(np.float64), axes=list(range(-rank, 0))).astype(ct.as_numpy_dtype)
        return [
            V("spectrum of a real signal", tol=10, input=spec, fft_length=i32(lengths)),
            V("odd length", tol=10, input=spec, fft_length=i32(lengths[:-1] + [lengths[-1] - 1])),
        ]

    return recipe


# ---------------------------------------------------------------------------
# Random numbers


def _uniform_prop(lo, hi):
    def prop(run1, run2, inputs):
        x = run1[0].astype(np.float64)
        if x.size == 0:
            return False, "no values"
        mean, std = x.mean(), x.std()
        want_mean, want_std = (lo + hi) / 2, (hi - lo) / math.sqrt(12)
        detail = "min %.4g max %.4g mean %.4f (want %.4f) std %.4f (want %.4f)" % (x.min(), x.max(), mean, want_mean, std, want_std)
        ok = x.min() >= lo and x.max() < hi and abs(mean - want_mean) < 0.01 * (hi - lo) and abs(std - want_std) < 0.01 * (hi - lo)
        if np.array_equal(run1[0], run2[0]):
            return False, detail + "; two draws are identical"
        return ok, detail

    return prop


def _normal_prop(run1, run2, inputs):
    x = run1[0].astype(np.float64)
    mean, std = x.mean(), x.std()
    detail = "mean %.4f std %.4f (want 0, 1)" % (mean, std)
    if not np.isfinite(x).all():
        return False, "non-finite values; " + detail
    if np.array_equal(run1[0], run2[0]):
        return False, detail + "; two draws are identical"
    return abs(mean) < 0.02 and abs(std - 1) < 0.02, detail


TRUNC_STD = 0.8796256610342398  # std of the standard normal truncated to (-2, 2)


def _truncated_prop(run1, run2, inputs):
    x = run1[0].astype(np.float64)
    mean, std = x.mean(), x.std()
    detail = "min %.4f max %.4f mean %.4f std %.4f (want |x| <= 2, 0, %.4f)" % (x.min(), x.max(), mean, std, TRUNC_STD)
    if np.array_equal(run1[0], run2[0]):
        return False, detail + "; two draws are identical"
    return np.abs(x).max() <= 2.0 and abs(mean) < 0.02 and abs(std - TRUNC_STD) < 0.02, detail


def random_uniform(c):
    dt = c.dt("dtype")
    n = 100000
    return [V("100000 draws", deterministic=False, prop=("uniform in [0, 1): range, mean, std", _uniform_prop(0.0, 1.0)),
              shape=np.array([n], dtype=c.dt("T", tf.int32).as_numpy_dtype), dtype=dt),
            V("empty", deterministic=False, prop=("empty shape", lambda r1, r2, i: (r1[0].shape == (0, 3), "shape %s" % (r1[0].shape,))),
              shape=np.array([0, 3], dtype=c.dt("T", tf.int32).as_numpy_dtype), dtype=dt)]


def random_normal(c):
    return [V("100000 draws", deterministic=False, prop=("standard normal: mean, std", _normal_prop),
              shape=np.array([100, 1000], dtype=c.dt("T", tf.int32).as_numpy_dtype), dtype=c.dt("dtype"))]


def truncated_normal(c):
    return [V("100000 draws", deterministic=False, prop=("truncated normal: |x| <= 2, mean, std", _truncated_prop),
              shape=np.array([100000], dtype=c.dt("T", tf.int32).as_numpy_dtype), dtype=c.dt("dtype"))]


def random_uniform_int(c):
    out = c.dt("Tout")
    lo, hi = -3, 7
    if out.is_unsigned:
        lo, hi = 2, 12

    def prop(run1, run2, inputs):
        x = run1[0].astype(np.int64)
        counts = np.bincount(x - lo, minlength=hi - lo) if x.min() >= lo else None
        detail = "min %d max %d" % (x.min(), x.max())
        if counts is None or x.max() >= hi or len(counts) != hi - lo:
            return False, detail + " (want [%d, %d))" % (lo, hi)
        expect = x.size / (hi - lo)
        worst_dev = float(np.abs(counts - expect).max() / expect)
        detail += ", largest bucket deviation %.3f" % worst_dev
        if np.array_equal(run1[0], run2[0]):
            return False, detail + "; two draws are identical"
        return worst_dev < 0.05, detail

    return [V("100000 draws in [lo, hi)", deterministic=False, prop=("uniform integers in [minval, maxval): range, every value, frequencies", prop),
              shape=np.array([100000], dtype=c.dt("T", tf.int32).as_numpy_dtype), minval=c.of(lo, out), maxval=c.of(hi, out))]


def multinomial(c):
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    logits = np.log(np.tile(probs, (2, 1))).astype(c.T.as_numpy_dtype)

    def prop(run1, run2, inputs):
        x = run1[0]
        if x.min() < 0 or x.max() > 3:
            return False, "class out of range: min %d max %d" % (x.min(), x.max())
        freq = np.bincount(x.ravel(), minlength=4) / x.size
        detail = "frequencies %s (want %s)" % (np.round(freq, 3).tolist(), probs.tolist())
        return bool(np.abs(freq - probs).max() < 0.02), detail

    return [V("20000 draws from 4 classes", deterministic=False, prop=("class frequencies follow the logits", prop),
              logits=logits, num_samples=i32(10000))]


ALG_PHILOX = 1


def stateless(c):
    """Stateless random ops are functions of their seed: uniform and integer
    draws must be exactly the CPU's numbers. Normal and truncated-normal draws
    go through Box-Muller, and TensorFlow's CPU kernel calls the C library's
    logf, sinf and cosf, which are not correctly rounded: the device computes
    them correctly rounded, so those match within float32 tolerance (a few
    ulps) rather than bit for bit."""
    dt = c.dt("dtype", tf.float32)
    shape_t = c.dt("Tshape", tf.int32) if c.op.endswith("V2") else c.dt("T", tf.int32)
    shp = np.array([7, 9], dtype=shape_t.as_numpy_dtype)
    seed_t = c.dt("Tseed", tf.int64)
    seed = np.array([17, 42], dtype=seed_t.as_numpy_dtype)
    exact = 1.0 if "Normal" in c.op and dt in (tf.float32,) else 0.0
    if c.op.endswith("V2") or c.op in ("StatelessRandomUniformFullIntV2", "StatelessRandomUniformIntV2"):
        kw = dict(shape=shp, key=np.array([0x12345678], dtype=np.uint64), counter=np.array([7, 0], dtype=np.uint64), alg=i32(ALG_PHILOX))
    else:
        kw = dict(shape=shp, seed=seed)
    if "minval" in {a.name for a in c.od.input_arg}:
        lo, hi = (2, 40) if dt.is_unsigned else (-20, 33)
        kw.update(minval=c.of(lo, dt), maxval=c.of(hi, dt))
    big = dict(kw)
    big["shape"] = np.array([1000], dtype=shape_t.as_numpy_dtype)
    return [V("7x9", tol=exact, **kw), V("1000 values", tol=exact, **big)]


def stateless_key_counter(c):
    seed_t = c.dt("Tseed") if "Tseed" in c.types else tf.int64
    return [V("seed 17,42", seed=np.array([17, 42], dtype=seed_t.as_numpy_dtype))]


def stateless_multinomial(c):
    seed_t = c.dt("Tseed") if "Tseed" in c.types else tf.int64
    return [V("2x4 logits", logits=c.x(2, 4), num_samples=i32(50), seed=np.array([3, 9], dtype=seed_t.as_numpy_dtype))]


# ---------------------------------------------------------------------------
# The table

RECIPES = {}


def _add(fn, *ops):
    for op in ops:
        RECIPES[op] = fn


def zero_guarded(guard, **kw):
    """Xlogy, Xdivy and MulNoNan: binary(...) and a variant whose guarding
    operand (x, or MulNoNan's y) holds zeros against zeros, infinities and
    NaNs in the other, where the answer is 0."""

    def recipe(c):
        vs = binary(**kw)(c)
        zeros = c.of([0.0, 0.0, -0.0, 0.0, 1.5, -2.0, 0.0, 0.75], c.T)
        other = c.of([0.0, np.inf, np.nan, -1.0, 0.5, 2.0, 3.0, 4.0], c.T)
        kws = dict(x=zeros, y=other) if guard == "x" else dict(x=other, y=zeros)
        vs.append(V("zeros in %s against specials" % guard, tol=kw.get("tol", 1.0), acc=False, **kws))
        return vs

    return recipe


def erfc(c):
    """unary(specials) and the tail, where erfc is small and 1 - erf(x)
    would keep none of its digits."""
    vs = unary(specials=True)(c)
    vs.append(V("tail 0.5..9", acc=False, x=c.x(4, 6, lo=0.5, hi=9)))
    return vs


def atan2(c):
    """binary() and every pairing of signed zeros, infinities, NaN and
    finite values of both signs, where the quadrant is decided."""
    vs = binary(ylo=-3, yhi=3)(c)
    vals = [0.0, -0.0, 1.0, -1.0, 0.3, -2.5, np.inf, -np.inf, np.nan]
    ys, xs = np.meshgrid(vals, vals, indexing="ij")
    vs.append(V("specials, every pairing", acc=False, y=c.of(ys.ravel()), x=c.of(xs.ravel())))
    return vs


def round_op(c):
    vs = unary(specials=True)(c)
    if c.is_int:
        # TensorFlow 2.21's CPU Round returns 0 for every integer (checked
        # by hand: Round([1, -6, 5]) on int32 is [0, 0, 0]); integers are
        # already round, so the answer is the input.
        for v in vs:
            v.ref = ("identity: the CPU's integer Round returns zeros", lambda kw: [kw["x"].numpy()])
    return vs


# Unary math, with the domain that keeps each defined.
_add(round_op, "Round")
_add(unary(specials=True), "Neg", "Abs", "Sign", "Floor", "Ceil", "Rint", "IsNan", "IsInf", "IsFinite",
     "Relu", "Relu6", "Elu", "Selu", "Softsign", "Sigmoid", "Tanh", "Erf", "Atan", "Asinh", "OnesLike")
_add(int_unary, "Invert", "PopulationCount")
_add(erfc, "Erfc")
_add(unary(specials=True, tol=2), "Square")
_add(unary(lo=-5, hi=5, tol=2), "Exp", "Expm1", "Sinh", "Cosh", "Softplus")
_add(unary(lo=-4, hi=4, tol=2), "Sin", "Cos")
_add(unary(lo=-1.2, hi=1.2, tol=4), "Tan")
_add(unary(lo=0.05, hi=5, tol=2), "Log", "Sqrt", "Rsqrt")
_add(unary(lo=-0.9, hi=5, tol=2), "Log1p")
_add(unary(nonzero=True, tol=2), "Reciprocal", "Inv")
_add(unary(lo=-0.95, hi=0.95, tol=4, specials=True), "Asin", "Acos", "Atanh")
_add(unary(lo=1.05, hi=6, tol=4, specials=True), "Acosh")

# Binary math.
_add(binary(), "Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum", "SquaredDifference")
_add(zero_guarded("y"), "MulNoNan")
_add(atan2, "Atan2")
_add(binary(nonzero_y=True, tol=2), "RealDiv", "DivNoNan")
_add(int_div, "Div", "FloorDiv", "FloorMod", "TruncateDiv", "TruncateMod", "Mod")
_add(pow_op, "Pow")
_add(zero_guarded("x", ylo=0.05, yhi=5, tol=2), "Xlogy", "Xdivy")
_add(zero_guarded("x", ylo=-0.9, yhi=5, tol=2), "Xlog1py")
_add(approximate_equal, "ApproximateEqual")
_add(compare_op, "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual")
_add(logical, "LogicalAnd", "LogicalOr")
_add(unary(specials=True), "LogicalNot")
_add(bitwise, "BitwiseAnd", "BitwiseOr", "BitwiseXor")
_add(shift, "LeftShift", "RightShift")
_add(select, "Select", "SelectV2")
_add(add_n, "AddN")
_add(clip, "ClipByValue")
_add(cast, "Cast")

# Activation gradients.
_add(grad_pair("gradients", "features"), "ReluGrad", "Relu6Grad", "SoftplusGrad", "SoftsignGrad")
_add(grad_pair("gradients", "outputs"), "EluGrad", "SeluGrad")
_add(grad_pair("y", "dy"), "SigmoidGrad", "TanhGrad")
_add(grad_pair("y", "dy", lo=0.2, hi=3), "RsqrtGrad", "SqrtGrad", "ReciprocalGrad", "InvGrad")
_add(leaky_relu, "LeakyRelu")
_add(leaky_relu_grad, "LeakyReluGrad")

# Products and convolutions.
_add(matmul, "MatMul")
_add(batch_matmul, "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")
_add(einsum, "Einsum")
_add(fused_matmul, "_FusedMatMul")
_add(conv2d, "Conv2D")
_add(conv2d_backprop_input, "Conv2DBackpropInput")
_add(conv2d_backprop_filter, "Conv2DBackpropFilter")
_add(depthwise, "DepthwiseConv2dNative")
_add(depthwise_backprop_input, "DepthwiseConv2dNativeBackpropInput")
_add(depthwise_backprop_filter, "DepthwiseConv2dNativeBackpropFilter")
_add(conv3d, "Conv3D")
_add(conv3d_backprop_input, "Conv3DBackpropInputV2")
_add(conv3d_backprop_filter, "Conv3DBackpropFilterV2")
_add(pool3d, "MaxPool3D", "AvgPool3D")
_add(pool3d_grad, "MaxPool3DGrad", "AvgPool3DGrad")
_add(fused_conv2d, "_FusedConv2D")
_add(pool, "MaxPool", "AvgPool")
_add(pool_v2, "MaxPoolV2")
_add(maxpool_grad, "MaxPoolGrad", "MaxPoolGradV2")
_add(avgpool_grad, "AvgPoolGrad")
_add(bias_add, "BiasAdd", "BiasAddV1")
_add(bias_add_grad, "BiasAddGrad")
_add(softmax, "Softmax", "LogSoftmax")
_add(xent, "SoftmaxCrossEntropyWithLogits")
_add(sparse_xent, "SparseSoftmaxCrossEntropyWithLogits")
_add(l2loss, "L2Loss")
_add(lrn, "LRN")
_add(lrn_grad, "LRNGrad")
_add(batch_norm, "FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")
_add(batch_norm_grad, "FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3")

# Reductions and scans.
_add(reduction(), "Sum", "Mean", "Max", "Min", "EuclideanNorm")
_add(reduction(lo=0.5, hi=1.5, int_range=(-2, 2)), "Prod")
_add(reduction(), "All", "Any")
_add(arg_reduce, "ArgMax", "ArgMin")
_add(cumulative, "Cumsum", "Cumprod", "CumulativeLogsumexp")
_add(segment, "SegmentSum", "SegmentMax", "SegmentMin", "SegmentMean", "SegmentProd",
     "UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd")

# Data movement.
_add(reshape, "Reshape")
_add(transpose, "Transpose", "ConjugateTranspose")
_add(identity_like, "Identity", "Snapshot", "StopGradient", "PreventGradient", "DeepCopy")
_add(identity_n, "IdentityN")
_add(concat, "ConcatV2", "Concat")
_add(pack, "Pack")
_add(unpack, "Unpack")
_add(split, "Split")
_add(split_v, "SplitV")
_add(slice_op, "Slice")
_add(strided_slice, "StridedSlice")
_add(strided_slice_grad, "StridedSliceGrad")
_add(pad, "Pad", "PadV2", "MirrorPad")
_add(tile, "Tile")
_add(broadcast_to, "BroadcastTo")
_add(expand_dims, "ExpandDims")
_add(squeeze, "Squeeze")
_add(reverse, "ReverseV2")
_add(roll, "Roll")
_add(reverse_sequence, "ReverseSequence")
_add(space_batch, "SpaceToBatchND", "BatchToSpaceND", "SpaceToBatch", "BatchToSpace")
_add(gather_v2, "GatherV2")
_add(gather_nd, "GatherNd")
_add(scatter_nd, "ScatterNd")
_add(tensor_scatter, "TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub", "TensorScatterMax", "TensorScatterMin",
     "ScatterNdNonAliasingAdd")
_add(one_hot, "OneHot")
_add(fill, "Fill")
_add(zeros_like, "ZerosLike")
_add(range_op, "Range")
_add(linspace, "LinSpace")
_add(cross, "Cross")
_add(matrix_band_part, "MatrixBandPart")
_add(depth_space, "DepthToSpace", "SpaceToDepth")
_add(resize, "ResizeNearestNeighbor", "ResizeBilinear")
_add(resize_grad, "ResizeNearestNeighborGrad", "ResizeBilinearGrad")
_add(top_k, "TopKV2")
_add(in_top_k, "InTopKV2")
_add(where, "Where")
_add(diag_ops, "Diag", "DiagPart", "MatrixDiag", "MatrixDiagPart", "MatrixSetDiag", "MatrixDiagV2", "MatrixDiagV3",
     "MatrixDiagPartV2", "MatrixDiagPartV3", "MatrixSetDiagV2", "MatrixSetDiagV3")
_add(invert_permutation, "InvertPermutation")
_add(unique, "Unique")
_add(broadcast_args, "BroadcastArgs", "BroadcastGradientArgs")

# FFT.
_add(fft(1), "FFT", "IFFT")
_add(fft(2), "FFT2D", "IFFT2D")
_add(fft(3), "FFT3D", "IFFT3D")
_add(rfft(1), "RFFT")
_add(rfft(2), "RFFT2D")
_add(rfft(3), "RFFT3D")
_add(irfft(1), "IRFFT")
_add(irfft(2), "IRFFT2D")
_add(irfft(3), "IRFFT3D")

# Random numbers: stateful ones by property, stateless ones exactly.
_add(random_uniform, "RandomUniform")
_add(random_normal, "RandomStandardNormal")
_add(truncated_normal, "TruncatedNormal")
_add(random_uniform_int, "RandomUniformInt")
_add(multinomial, "Multinomial")
_add(stateless, "StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal", "StatelessRandomUniformInt",
     "StatelessRandomUniformFullInt", "StatelessRandomUniformV2", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2",
     "StatelessRandomUniformIntV2", "StatelessRandomUniformFullIntV2")
_add(stateless_key_counter, "StatelessRandomGetKeyCounter", "StatelessRandomGetKeyCounterAlg")
_add(stateless_multinomial, "StatelessMultinomial")


def _merge_families():
    """Each op family may keep its recipes in a file of its own,
    sweep/py/recipes_<family>.py, with a RECIPES dict like this module's; they
    are merged here, last, so that they can import anything above. An op in
    two tables is an error, not a silent override."""
    import glob
    import importlib
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, "recipes_*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        family = importlib.import_module(name)
        for op, fn in family.RECIPES.items():
            if op in RECIPES:
                raise ValueError("%s: the recipe for %s is already in another table" % (name, op))
            RECIPES[op] = fn


_merge_families()
