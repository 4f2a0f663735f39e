"""Recipes of the special functions, the fake-quantization ops and the
complex-number ops (plugin/tf/lower/special.go, quant.go, complex.go)."""
import numpy as np

from recipes import V, binary

RECIPES = {}


def _add(fn, *ops):
    for op in ops:
        RECIPES[op] = fn


# ---------------------------------------------------------------------------
# Complex numbers


def _complex_specials(c):
    """Every pairing of signed zeros, infinities, NaN and finite parts of
    both signs, so that quadrants, signs and NaN payloads are decided."""
    vals = [0.0, -0.0, 1.0, -1.0, 0.3, -2.5, 3e38, 1e-30, np.inf, -np.inf, np.nan]
    re, im = np.meshgrid(vals, vals, indexing="ij")
    return _complex(re.ravel(), im.ravel())


def _complex(re, im):
    """complex64 from its parts, as they are: re + 1j*im would turn an
    infinite part into NaNs."""
    z = np.empty(np.shape(re), np.complex64)
    z.real, z.imag = re, im
    return z


def complex_unary(c):
    key = c.od.input_arg[0].name
    return [V("2x3", **{key: c.x(2, 3)}), V("scalar", **{key: c.x()}), V("empty 0x3", **{key: c.x(0, 3)}),
            V("specials, every pairing of parts", **{key: _complex_specials(c)})]


def complex_op(c):
    vals = np.array([0.0, -0.0, 1.5, -2.5, 1e-30, np.inf, -np.inf, np.nan], np.float32)
    re, im = np.meshgrid(vals, vals, indexing="ij")
    return [V("2x3", real=c.x(2, 3), imag=c.x(2, 3)), V("broadcast 4x1x3 with 5x1", real=c.x(4, 1, 3), imag=c.x(5, 1)),
            V("scalar imag", real=c.x(2, 3), imag=c.x()), V("empty 0x3 with 3", real=c.x(0, 3), imag=c.x(3)),
            V("specials, every pairing", real=re.ravel(), imag=im.ravel())]


_add(complex_unary, "ComplexAbs", "Real", "Imag", "Conj", "Angle")
_add(complex_op, "Complex")


# ---------------------------------------------------------------------------
# Fake quantization and quantize-and-dequantize


def _nudge(lo, hi, num_bits=8, narrow_range=False):
    """fake_quant_ops_functor.h's Nudge in float32: the range's ends after
    the zero point is made an integer."""
    f = np.float32
    qmin, qmax = f(1 if narrow_range else 0), f((1 << num_bits) - 1)
    scale = f(f(hi) - f(lo)) / f(qmax - qmin)
    zp = f(qmin - f(lo) / scale)
    zp = qmin if zp < qmin else qmax if zp > qmax else f(np.floor(zp + f(0.5)) if zp - np.floor(zp) >= 0.5 else np.floor(zp))
    return f(f(qmin - zp) * scale), f(f(qmax - zp) * scale), scale


def _fq_inputs(c, lo, hi, shape, **bits):
    """Values across and past the range, its nudged ends and their
    neighbours (where the gradients' masks switch), grid points and either
    side of the midpoints between them (where rounding decides), zeros,
    infinities and NaN; the rest random."""
    nmin, nmax, scale = _nudge(lo, hi, **bits)
    f = np.float32
    k = np.arange(0, 6, dtype=np.float32)
    edge = [nmin, nmax, np.nextafter(nmin, f(-np.inf)), np.nextafter(nmax, f(np.inf)), np.nextafter(nmin, f(0)), np.nextafter(nmax, f(0))]
    # A nudged end at 0 has subnormal neighbours, whose side of it depends
    # on the platform flushing subnormals (TensorFlow's CPU kernels do, the
    # model of MPSGraph does not): the smallest normal float decides the
    # mask the same way everywhere.
    tiny = np.finfo(f).tiny
    edge = [f(np.copysign(tiny, v)) if v != 0 and abs(v) < tiny else v for v in edge]
    # Not the midpoints themselves: there the CPU's vectorised and scalar
    # loops disagree (FakeQuantWithMinMaxArgs(-6, 6) rounds -5.9529414 to
    # -5.929412 as one of 17 elements and to -5.9764705 alone), so a
    # midpoint's answer depends on where it sits in the tensor. A
    # twentieth of a step either side of each (more than an ulp of the
    # value, even at 16 bits) decides the rounding.
    grid = list(nmin + k * scale) + list(nmin + (k + f(0.45)) * scale) + list(nmin + (k + f(0.55)) * scale)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 2 * lo - 1.3, 2 * hi + 1.3]
    vals = np.array(edge + grid + special, np.float32)
    n = int(np.prod(shape))
    rest = c.x(max(n - len(vals), 0), lo=2 * lo - 1, hi=2 * hi + 1, dtype=np.float32)
    return c.rng.permutation(np.concatenate([vals, rest]))[:n].reshape(shape).astype(np.float32)


_FQ_RANGES = [
    ("defaults [-6, 6], 8 bits", -6.0, 6.0, {}),
    ("[-1, 2], 8 bits, narrow", -1.0, 2.0, {"num_bits": 8, "narrow_range": True}),
    ("[-0.37, 0.81], 4 bits", -0.37, 0.81, {"num_bits": 4}),
    ("[-10, 0.001], 16 bits (zero point past 255)", -10.0, 0.001, {"num_bits": 16}),
    ("[0.5, 4] (the range moves to hold 0), 2 bits", 0.5, 4.0, {"num_bits": 2}),
    ("[-5, -1], 9 bits, narrow", -5.0, -1.0, {"num_bits": 9, "narrow_range": True}),
]


def fake_quant_args(c):
    grad = c.op.endswith("Gradient")
    vs = []
    for name, lo, hi, bits in _FQ_RANGES:
        kw = dict(min=lo, max=hi, **bits)
        x = _fq_inputs(c, lo, hi, (5, 9), **bits)
        if grad:
            kw["gradients"] = _gradients(c, x.shape)
        vs.append(V(name, inputs=x, **kw))
    empty = dict(gradients=c.x(0, 3, dtype=np.float32)) if grad else {}
    vs.append(V("empty 0x3", inputs=c.x(0, 3, dtype=np.float32), **empty))
    vs.append(V("scalar", inputs=c.x(dtype=np.float32), **(dict(gradients=c.x(dtype=np.float32)) if grad else {})))
    return vs


def _gradients(c, shape):
    """Gradients with NaN and infinities among them: the CPU multiplies by
    its 0/1 mask, so these show where the mask is 0."""
    g = c.x(*shape, dtype=np.float32).ravel()
    g[:3] = [np.nan, np.inf, -np.inf]
    return c.rng.permutation(g).reshape(shape)


def fake_quant_vars(c):
    grad = c.op.endswith("Gradient")
    per = "PerChannel" in c.op
    vs = []
    for name, lo, hi, bits in _FQ_RANGES:
        if per:
            shape = (2, 3, 2, 4) if len(vs) % 2 else (7, 4)
            x = np.stack([_fq_inputs(c, lo * (1 + j / 2), hi * (1 + j / 3), shape[:-1], **bits) for j in range(4)], axis=-1)
            mn = np.array([lo * (1 + j / 2) for j in range(4)], np.float32)
            mx = np.array([hi * (1 + j / 3) for j in range(4)], np.float32)
        else:
            x = _fq_inputs(c, lo, hi, (5, 9), **bits)
            mn, mx = np.float32(lo), np.float32(hi)
        kw = dict(inputs=x, min=mn, max=mx, **bits)
        if grad:
            kw["gradients"] = _gradients(c, x.shape)
        vs.append(V(name, **kw))
    if per:
        x = _fq_inputs(c, -1.0, 2.0, (5,))
        vs.append(V("rank 1", inputs=x, min=c.of([-1, -2, -0.5, 0, -3], np.float32), max=c.of([2, 1, 0.5, 4, 0.25], np.float32),
                    **(dict(gradients=_gradients(c, x.shape)) if grad else {})))
        e = c.x(0, 3, dtype=np.float32)
        vs.append(V("empty 0x3", inputs=e, min=c.of([-1, -2, -3], np.float32), max=c.of([1, 2, 3], np.float32),
                    **(dict(gradients=e) if grad else {})))
    else:
        e = c.x(0, 3, dtype=np.float32)
        vs.append(V("empty 0x3", inputs=e, min=np.float32(-1), max=np.float32(1), **(dict(gradients=e) if grad else {})))
    return vs


def qdq(c):
    """Signed and unsigned, narrow, given ranges (clamped) and ranges from
    the input, both rounding modes, per-tensor and per-channel."""
    v3 = c.op == "QuantizeAndDequantizeV3"
    x = c.x(4, 6, lo=-3, hi=5)
    x.ravel()[:6] = [0.0, -0.0, 2.5, -2.5, 0.5, -1.5]
    ties = c.of(np.arange(-8, 9) * 0.5 * (2.0 / 127), np.float32)  # signed 8 bits over [-2, 2]: exact ties
    cases = [
        ("signed, range given", x, -2.0, 3.0, dict(signed_input=True, num_bits=8, range_given=True)),
        ("signed, narrow, range given", x, -2.0, 3.0, dict(signed_input=True, num_bits=8, range_given=True, narrow_range=True)),
        ("unsigned, range given, negatives clamp to 0", x, -1.0, 4.0, dict(signed_input=False, num_bits=8, range_given=True)),
        ("signed, range from the input", x, 0.0, 0.0, dict(signed_input=True, num_bits=8, range_given=False)),
        ("unsigned, 4 bits, range from the input", np.abs(x), 0.0, 0.0, dict(signed_input=False, num_bits=4, range_given=False)),
        ("exact ties, range given", ties, -2.0, 2.0, dict(signed_input=True, num_bits=8, range_given=True)),
        ("range within the positives (min side has no scale)", x, 0.5, 4.0, dict(signed_input=True, num_bits=8, range_given=True)),
        ("30 bits", x, -2.0, 3.0, dict(signed_input=True, num_bits=30, range_given=True)),
        ("infinities, range given", c.of([np.inf, -np.inf, 1.0, -1.0], np.float32), -2.0, 3.0, dict(signed_input=True, num_bits=8, range_given=True)),
    ]
    vs = []
    for name, inp, lo, hi, kw in cases:
        kw = dict(kw)
        if v3:
            kw["num_bits"] = np.int32(kw["num_bits"])
        vs.append(V(name, input=inp, input_min=np.float32(lo), input_max=np.float32(hi), **kw))
        if not v3 and "ties" in name:
            vs.append(V(name + ", HALF_UP", input=inp, input_min=np.float32(lo), input_max=np.float32(hi), round_mode="HALF_UP", **kw))
    bits = np.int32(8) if v3 else 8
    if v3:
        # V2's and V4's kernels in TensorFlow 2.21 reject a given range
        # with an axis: "input_min must be a scalar" for vectors, "Shape
        # must be rank 1" for scalars.
        vs.append(V("per channel, axis 1, range given", input=x, input_min=c.of([-2, -1, -0.5, 0, -3, -2], np.float32),
                    input_max=c.of([3, 1, 0.5, 4, 2, 0], np.float32), axis=1, range_given=True, num_bits=bits))
    y = c.x(2, 3, 4, lo=-3, hi=5)
    vs.append(V("per channel, axis 1 of 3, range from the input", input=y, input_min=c.of([0, 0, 0], np.float32),
                input_max=c.of([0, 0, 0], np.float32), axis=1, range_given=False, num_bits=bits))
    vs.append(V("empty, range given", input=c.x(0, 3), input_min=np.float32(-1), input_max=np.float32(1), range_given=True, num_bits=bits))
    return vs


def qdq_grad(c):
    x = c.x(4, 6, lo=-3, hi=5)
    x.ravel()[:4] = [-2.0, 3.0, np.nextafter(np.float32(3), np.float32(9)), np.nan]
    g = _gradients(c, x.shape)
    return [V("per tensor", gradients=g, input=x, input_min=np.float32(-2), input_max=np.float32(3)),
            V("per channel, axis 0", gradients=g, input=x, input_min=c.of([-2, -1, 0, -3], np.float32),
              input_max=c.of([3, 1, 0.5, 4], np.float32), axis=0),
            V("per channel, axis 1 of 3", gradients=c.x(2, 3, 4), input=c.x(2, 3, 4), input_min=c.of([-1, -0.5, 0], np.float32),
              input_max=c.of([1, 0.5, 2], np.float32), axis=1),
            V("empty", gradients=c.x(0, 3), input=c.x(0, 3), input_min=np.float32(-1), input_max=np.float32(1))]


_add(fake_quant_args, "FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxArgsGradient")
_add(fake_quant_vars, "FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxVarsGradient", "FakeQuantWithMinMaxVarsPerChannel",
     "FakeQuantWithMinMaxVarsPerChannelGradient")
_add(qdq, "QuantizeAndDequantizeV2", "QuantizeAndDequantizeV3", "QuantizeAndDequantizeV4")
_add(qdq_grad, "QuantizeAndDequantizeV4Grad")


# ---------------------------------------------------------------------------
# Special functions


def _special_unary(lo, hi, extra, tol=1.0):
    """A random 3-D tensor over the function's interesting range, a scalar,
    an empty tensor, the generic specials (signed zeros, half-integers,
    infinities, NaN) and the function's own edges: poles, zeros, the ends
    of its domain and the switches between its approximations."""

    def recipe(c):
        vs = [V("2x3x5 in [%g, %g]" % (lo, hi), tol=tol, acc=False, x=c.x(2, 3, 5, lo=lo, hi=hi)),
              V("scalar", tol=tol, acc=False, x=c.x(lo=lo, hi=hi)), V("empty 0x3", x=c.x(0, 3)),
              V("specials", tol=tol, acc=False, x=c.specials())]
        vals = [v for v in extra if c.T == np.float32 or abs(v) < 6e4]
        vs.append(V("edges", tol=tol, acc=False, x=c.of(vals)))
        return vs

    return recipe


_POLES = [-1.0, -2.0, -3.0, -100.0, -2.0001, -0.9999, -1e-3, 1e-3, 1e-7, 1e-30, -1e-30, 30.0, 1e5, 1e20, 1e37, 5e37, -1e30]
_add(_special_unary(-10, 10, _POLES), "Lgamma", "Digamma")
_add(_special_unary(0, 1, [0.0, 1.0, -0.1, 1.1, 1e-30, 1e-10, 1e-3, 0.1353, 0.1354, 0.8646, 0.8647, 1 - 6e-8, 0.5, np.nan]), "Ndtri")
_add(_special_unary(-1, 1, [1.0, -1.0, 1.5, -1.01, 1e-30, 1e-7, 0.9999999, -0.9999999, 0.5, np.nan]), "Erfinv")
_BESSEL = [1e-3, 9e-4, 1e-30, 1.9999, 2.0, 2.0001, 7.9999, 8.0, 8.0001, 30.0, 88.0, 90.0, 100.0, 1e4, 1e6, -2.0, -8.0, -30.0, -1e-30]
_add(_special_unary(-12, 12, _BESSEL), "BesselI0", "BesselI0e", "BesselI1", "BesselI1e", "BesselJ0", "BesselJ1")
_add(_special_unary(0.01, 12, _BESSEL), "BesselK0", "BesselK0e", "BesselK1", "BesselK1e", "BesselY0", "BesselY1")


def zeta(c):
    vs = binary(xlo=1.1, xhi=6, ylo=0.2, yhi=5)(c)
    # x = 1 (a pole), x < 1 (NaN), q at zero and the negative integers with
    # x even (+inf) and odd (NaN), q negative otherwise with x an integer
    # (summed) or not (NaN), q huge (the first term underflows), specials.
    x = [1.0, 0.5, -1.0, 2.0, 3.0, 2.0, 3.0, 4.0, 2.5, 3.0, 2.0, 1.5, np.inf, np.nan, 2.0, 2.0, 30.0, 1.0001]
    q = [2.0, 2.0, 2.0, 0.0, -2.0, -3.0, 0.0, -1.5, -1.5, 1e30, 1e-3, 3.0, 2.0, 2.0, np.inf, np.nan, 0.5, 1.0]
    vs.append(V("edges", acc=False, x=c.of(x), q=c.of(q)))
    return vs


def polygamma(c):
    n = c.of([0, 1, 2, 3, 4, 0, 1, 2.5, -1, 1, 2, 0, 1, 10])
    x = c.of([1.5, 0.5, 2.0, 0.3, 7.0, -0.5, -1.5, 1.0, 1.0, 0.0, -2.0, np.inf, np.nan, 3.0])
    return [V("orders 0 to 4", a=c.of([[0], [1], [2], [3], [4]]), x=c.x(1, 6, lo=0.2, hi=6)),
            V("edges: non-integer and negative orders, poles", acc=False, a=n, x=x),
            V("empty 0x3 with 3", a=c.x(0, 3, lo=0, hi=0), x=c.x(3, lo=1, hi=2))]


def next_after(c):
    vals = [0.0, -0.0, 1.0, -1.0, 1.5e-45, 3.4028235e38, np.inf, -np.inf, np.nan, 2.5]
    a, b = np.meshgrid(vals, vals, indexing="ij")
    return binary()(c) + [V("every pairing of specials", x1=c.of(a.ravel()), x2=c.of(b.ravel()))]



_add(zeta, "Zeta")
_add(polygamma, "Polygamma")
_add(next_after, "NextAfter")
_add(_special_unary(-8, 8, [3.2499, 3.25, 6.2499, 6.25, 1e9, 2e9, -1e9, 1e-30, 100.0, -100.0, 3e38]), "Dawsn")
_add(_special_unary(0, 70, [1e-30, 1e-7, 1.9999, 2.0, 3.9999, 4.0, 8.0, 16.0, 32.0, 64.0, 63.999, 80.0, 88.0, 89.0, -1.0, -1e-30]),
     "Expint")
_add(_special_unary(-5, 5, [1.6, 1.6008, -1.6008, 36973.0, 36975.0, -36975.0, 1e-30, 1e30, 40.0, 200.5]), "FresnelCos", "FresnelSin")
_add(_special_unary(0, 5, [1e-30, 0.4999, 0.5, 1.0, 1.4999, 1.5, 1.5001, 1.9999, 2.0, 100.0, 1e30, -1e-30, -1.0]), "Spence")


# ---------------------------------------------------------------------------
# ApproxTopK, answered exactly


def _exact_top_k(kw):
    """The reference: tf.math.top_k on the CPU along reduction_dimension
    (of -x for the smallest), which like an exact ApproxTopK orders ties
    by index; ApproxTopK has no CPU kernel of its own."""
    import tensorflow as tf

    x = tf.convert_to_tensor(kw["input"])
    r = len(x.shape)
    d = kw.get("reduction_dimension", -1) % r
    perm = [i for i in range(r) if i != d] + [d]
    back = [perm.index(i) for i in range(r)]
    xt = tf.transpose(x, perm)
    big = kw.get("is_max_k", True)
    with tf.device("/device:CPU:0"):
        v, i = tf.math.top_k(xt if big else -xt, k=kw["k"], sorted=True)
    v = v if big else -v
    return [tf.transpose(v, back).numpy(), tf.transpose(i, back).numpy()]


def approx_top_k(c):
    ref = ("exact top-k (tf.math.top_k on the CPU)", _exact_top_k)
    ties = c.of([[3, 1, 3, 2, 3, 0, 1], [5, 5, 5, 5, 5, 5, 5]])
    return [V("k 3 of 7, last dim", input=c.x(4, 7), k=3, ref=ref),
            V("k 2 of 5, dim 0", input=c.x(5, 6), k=2, reduction_dimension=0, ref=ref),
            V("smallest k 2, dim 1 of 3", input=c.x(2, 5, 3), k=2, reduction_dimension=1, is_max_k=False, ref=ref),
            V("ties, k 4", input=ties, k=4, ref=ref),
            V("k equal to the size", input=c.x(3, 4), k=4, recall_target=0.5, ref=ref),
            V("k 0", input=c.x(3, 4), k=0, ref=ref)]


_add(approx_top_k, "ApproxTopK")
