"""Recipes of the special functions, the fake-quantization ops and the
complex-number ops (plugin/tf/lower/special.go, quant.go, complex.go)."""
import numpy as np

from recipes import V

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
