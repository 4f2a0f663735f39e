"""NextAfter: binary() and every pairing of signed zeros, the smallest
subnormal and normal, the largest finite, infinities and NaN."""
import numpy as np

from recipes import V, binary

RECIPES = {}


def next_after(c):
    vs = binary()(c)
    vals = [0.0, -0.0, 1.0, -1.0, 1.4e-45, -1.4e-45, 1.17549435e-38, 3.4028235e38, -3.4028235e38, np.inf, -np.inf, np.nan]
    a, b = np.meshgrid(vals, vals, indexing="ij")
    vs.append(V("specials, every pairing", acc=False, x1=c.of(a.ravel()), x2=c.of(b.ravel())))
    return vs


RECIPES["NextAfter"] = next_after
