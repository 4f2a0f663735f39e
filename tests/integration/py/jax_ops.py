"""jax programs on the metalplug device against jax's CPU, in one process
(JAX_PLATFORMS=metalplug,cpu). Each case jits one function, runs it on both
devices and compares: integers, bools and random bits exactly, floats within
a tolerance for their dtype. Prints one line per case and, last, a RESULT
line with the failures (empty when every case agrees) and the case count."""

import json
import sys
import traceback

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

dev = jax.devices("metalplug")[0]
cpu = jax.devices("cpu")[0]
rng = np.random.default_rng(0)
cases, failures = [], []


def case(name, rtol=1e-5, atol=1e-5):
    def register(fn):
        cases.append((name, fn, rtol, atol))
        return fn

    return register


def run_on(device, fn, args):
    put = [jax.device_put(a, device) for a in args]
    with jax.default_device(device):
        out = jax.jit(fn)(*put)
    return jax.tree_util.tree_map(np.asarray, out), out


def same(got, want, rtol, atol):
    gl, wl = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(gl) == len(wl), (len(gl), len(wl))
    for g, w in zip(gl, wl):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if np.issubdtype(w.dtype, np.floating) or w.dtype == jnp.bfloat16:
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


X, Y, W = f32(8, 16), f32(16, 4), f32(4)

case("elementwise")(lambda: (lambda x: jnp.exp(x) * jnp.sin(x) + jnp.log1p(jnp.abs(x)) - jnp.tanh(x) / (1 + x * x), [X]))
case("bfloat16", rtol=2e-2, atol=2e-2)(lambda: (lambda x: jax.nn.gelu(x) * 2, [X.astype(jnp.bfloat16)]))
case("float16", rtol=4e-3, atol=4e-3)(lambda: (lambda x: jax.nn.softmax(x, axis=-1), [X.astype(np.float16)]))
case("int32 and uint32 arithmetic")(lambda: (lambda a, b: (a * 3 - b // 2, (a.astype(jnp.uint32) >> 3) ^ b.astype(jnp.uint32), a % 5),
                                             [rng.integers(-100, 100, (20,), dtype=np.int32), rng.integers(1, 100, (20,), dtype=np.int32)]))
case("comparisons and where")(lambda: (lambda x, y: jnp.where(x > y, x, y * 2), [X, X.T.reshape(8, 16)]))
case("matmul")(lambda: (lambda x, y: x @ y, [X, Y]))
case("einsum")(lambda: (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), [f32(3, 4, 5), f32(3, 5, 2)]))
case("conv, NHWC, stride 2, SAME")(lambda: (lambda x, k: lax.conv_general_dilated(x, k, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
                                              [f32(2, 9, 9, 3), f32(3, 3, 3, 4)]))
case("conv, NCHW, dilation and groups", rtol=1e-4, atol=1e-4)(lambda: (lambda x, k: lax.conv_general_dilated(
    x, k, (1, 1), ((1, 1), (2, 0)), rhs_dilation=(2, 1), feature_group_count=2), [f32(1, 4, 8, 8), f32(6, 2, 3, 3)]))
case("reductions")(lambda: (lambda x: (x.sum(), x.max(axis=0), jnp.argmax(x, axis=1), x.mean(axis=1), jnp.prod(x[:2, :3])), [X]))
case("softmax cross-entropy grad", rtol=1e-4, atol=1e-5)(lambda: (jax.grad(lambda w, x: -jnp.mean(jax.nn.log_softmax(x @ w)[:, 0])), [f32(16, 4), X]))
case("value_and_grad of an MLP", rtol=1e-4, atol=1e-5)(lambda: (jax.value_and_grad(lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)), [Y, X]))
case("vmap")(lambda: (jax.vmap(lambda a, b: jnp.dot(a, b)), [f32(5, 7), f32(5, 7)]))
case("lax.scan cumulative")(lambda: (lambda xs: lax.scan(lambda c, x: (c * 0.9 + x, c), jnp.zeros(4), xs), [f32(10, 4)]))
case("fori_loop")(lambda: (lambda x: lax.fori_loop(0, 7, lambda i, v: v * 1.1 + i, x), [W]))
case("while_loop")(lambda: (lambda x: lax.while_loop(lambda v: v.sum() < 100, lambda v: v * 2 + 1, x), [np.abs(W)]))
case("cond")(lambda: (lambda p, x: lax.cond(p > 0, lambda v: v * 2, lambda v: -v, x), [np.float32(1.5), W]))
case("switch")(lambda: (lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda v: v * v], x), [np.int32(2), W]))
case("random bits, uniform, randint, bernoulli (threefry, bit-exact)", rtol=0, atol=0)(lambda: (random_draws, [np.uint32(42)]))
# normal goes through erf_inv and log, whose float32 results here are the
# correctly rounded ones and XLA's CPU's polynomials' differ in the last bit
# now and then: one ulp.
case("random normal (within an ulp)", rtol=2.4e-7, atol=0)(lambda: (lambda s: jax.random.normal(jax.random.PRNGKey(s), (64, 3)), [np.uint32(42)]))
case("sort, argsort, top_k with NaN and -0")(lambda: (lambda x: (jnp.sort(x), jnp.argsort(x), lax.top_k(x, 3)),
                                                      [np.array([3.0, -0.0, np.nan, 0.0, -2.0, 7.0, np.nan, 1.0], np.float32)]))
case("indexing and .at")(lambda: (lambda x, i: (x[i], x[:, 2:5], x.at[i, 0].set(9.0), x.at[i].add(1.0), x.at[1].mul(2.0), x.at[:, 3].min(-1.0)),
                                  [X, np.array([0, 3, 3, 7], np.int32)]))
case("dynamic_slice and dynamic_update_slice, starts clamped")(lambda: (
    lambda x, s: (lax.dynamic_slice(x, (s, s), (3, 4)), lax.dynamic_update_slice(x, jnp.ones((2, 3)), (s, s + 20))), [X, np.int32(6)]))
case("cumsum")(lambda: (lambda x: jnp.cumsum(x, axis=1), [X]))
case("Adam step on an MLP", rtol=1e-4, atol=1e-5)(lambda: (adam_step, [f32(16, 8), f32(8, 1), X, f32(8, 1)]))


def random_draws(seed):
    key = lambda i: jax.random.PRNGKey(seed + i)
    return (jax.random.bits(key(0), (9,)), jax.random.uniform(key(1), (7,)),
            jax.random.randint(key(2), (6,), 0, 10), jax.random.bernoulli(key(3), 0.3, (8,)),
            jax.random.split(key(4), 3))


def adam_step(w1, w2, x, y, steps=3):
    params = (w1, w2)
    loss = lambda p: jnp.mean((jnp.tanh(x @ p[0]) @ p[1] - y) ** 2)
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    for t in range(1, steps + 1):
        g = jax.grad(loss)(params)
        m = jax.tree_util.tree_map(lambda a, b: 0.9 * a + 0.1 * b, m, g)
        v = jax.tree_util.tree_map(lambda a, b: 0.999 * a + 0.001 * b * b, v, g)
        params = jax.tree_util.tree_map(
            lambda p, a, b: p - 0.01 * (a / (1 - 0.9**t)) / (jnp.sqrt(b / (1 - 0.999**t)) + 1e-8), params, m, v)
    return loss(params), params


def training():
    """An MLP trained with Adam for 30 jitted steps on the device: the loss
    falls, and the parameters end where jax's CPU puts them."""
    w1, w2, x, y = f32(16, 8), f32(8, 1), X, f32(8, 1)
    step = jax.jit(lambda a, b: adam_step(a, b, x, y, steps=1)[1])
    loss = jax.jit(lambda a, b: jnp.mean((jnp.tanh(x @ a) @ b - y) ** 2))
    ends = {}
    for d in (dev, cpu):
        a, b = jax.device_put(w1, d), jax.device_put(w2, d)
        first = float(loss(a, b))
        for _ in range(30):
            a, b = step(a, b)
        ends[d.platform] = (first, float(loss(a, b)), np.asarray(a), np.asarray(b))
    first, last, a, b = ends["metalplug"]
    assert last < 0.8 * first, ("the loss did not fall", first, last)
    np.testing.assert_allclose(a, ends["cpu"][2], rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(b, ends["cpu"][3], rtol=1e-3, atol=1e-4)
    print("     loss %.4f -> %.4f in 30 steps" % (first, last))


try:
    training()
    print("ok   training: the loss falls, the parameters match the CPU's")
except Exception as e:
    failures.append("training: " + (str(e).splitlines() or [repr(e)])[0][:300])
    print("FAIL training")
    traceback.print_exc(limit=2)

for name, make, rtol, atol in cases:
    try:
        fn, args = make()
        want, _ = run_on(cpu, fn, args)
        got, out = run_on(dev, fn, args)
        for leaf in jax.tree_util.tree_leaves(out):
            assert leaf.devices() == {dev}, leaf.devices()
        same(got, want, rtol, atol)
        print("ok  ", name)
    except Exception as e:
        failures.append(name + ": " + (str(e).splitlines() or [repr(e)])[0][:300])
        print("FAIL", name)
        traceback.print_exc(limit=2)
print("RESULT " + json.dumps({"cases": len(cases) + 1, "failures": failures}))
sys.exit(1 if failures else 0)
