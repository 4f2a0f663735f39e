"""Ordinary jax programs on the Metal driver over the model of MPSGraph
(e2e_test.go): run with METALPLUG_HOST_DEVICE=1, METALPLUG_DRIVER=metal-model
and JAX_PLATFORMS=metalplug,cpu. Each program must agree with jax's CPU and
run on the device: no part of it on the host, except the ops whose home is
the host (decompositions), as metalplug.stats() counts them. A program the
lowering does not cover yet is reported with what took it off the device,
and fails. The last line is "ALL OK" when every check passed.

With METALPLUG_PROGRAMS_REPORT=1 a host part is reported, not failed: for
tabling what each macOS release (METALPLUG_MODEL_MACOS) leaves on the host.
"""

import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import erf, gammaln, logsumexp

import metalplug
from checks import check, finish

dev = jax.devices("metalplug")[0]
cpu = jax.devices("cpu")[0]
rng = np.random.default_rng(0)

# Ops that run on the host by design: MPSGraph has no decompositions.
HOST_HOME = ("cholesky", "triangular_solve", "qr", "householder_product", "eigh", "lu", "svd",
             "eig", "hessenberg", "tridiagonal", "qr_pivoted", "schur", "host_call")


def run_both(f, *args):
    """f jitted on the device and on jax's CPU; the device's figures."""
    jf = jax.jit(f)
    before = metalplug.stats()["frontends"]["jax"]
    got = jax.tree.map(np.asarray, jf(*jax.device_put(args, dev)))
    after = metalplug.stats()["frontends"]["jax"]
    want = jax.tree.map(np.asarray, jf(*jax.device_put(args, cpu)))
    reasons = {r: n - before["host_reasons"].get(r, 0) for r, n in after["host_reasons"].items()
               if n != before["host_reasons"].get(r, 0)}
    figures = {k: after[k] - before[k] for k in ("executions", "device_executions", "host_segments", "waits")}
    # The same call again: nothing compiles after warm-up.
    jax.block_until_ready(jf(*jax.device_put(args, dev)))
    figures["compiles_after_warmup"] = metalplug.stats()["frontends"]["jax"]["compiles"] - after["compiles"]
    return got, want, figures, reasons


def on_gpu(f, *args, rtol=2e-5, atol=2e-6, host_ok=()):
    got, want, figures, reasons = run_both(f, *args)
    jax.tree.map(lambda g, w: np.testing.assert_allclose(g, w, rtol=rtol, atol=atol), got, want)
    stray = {r: n for r, n in reasons.items() if not r.split(":")[0] in host_ok}
    if os.environ.get("METALPLUG_PROGRAMS_REPORT") == "1":
        for r in sorted(stray):
            print(f"     HOST {r[:200]}")
    else:
        assert not stray, f"parts ran on the host: {stray} ({figures})"
        assert figures["device_executions"] >= 1, figures
        assert figures["compiles_after_warmup"] == 0, figures
    print(f"     {figures['device_executions']} device executions, {figures['host_segments']} host parts, "
          f"{figures['waits']} waits, {figures['compiles_after_warmup']} compiles after warm-up")


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def adamw(params, grads, m, v, t, lr=1e-3, b1=0.9, b2=0.999, wd=1e-2):
    m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
    v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
    mh = jax.tree.map(lambda m: m / (1 - b1 ** t), m)
    vh = jax.tree.map(lambda v: v / (1 - b2 ** t), v)
    params = jax.tree.map(lambda p, a, b: p - lr * (a / (jnp.sqrt(b) + 1e-8) + wd * p), params, mh, vh)
    return params, m, v


@check("a CNN training step with AdamW")
def _():
    params = {"k1": normal(3, 3, 3, 8) * 0.2, "k2": normal(3, 3, 8, 8) * 0.2, "w": normal(8, 10) * 0.2}
    x, y = normal(4, 12, 12, 3), rng.integers(0, 10, (4,))

    def loss(p, x, y):
        h = jax.lax.conv_general_dilated(x, p["k1"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = jax.nn.relu(h)
        h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = jax.nn.relu(jax.lax.conv_general_dilated(h, p["k2"], (1, 1), "SAME",
                                                     dimension_numbers=("NHWC", "HWIO", "NHWC")))
        logits = jnp.mean(h, axis=(1, 2)) @ p["w"]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))

    def step(p, m, v, x, y):
        g = jax.grad(loss)(p, x, y)
        return adamw(p, g, m, v, 1.0)

    zeros = jax.tree.map(np.zeros_like, params)
    on_gpu(step, params, zeros, zeros, x, y, rtol=1e-4, atol=1e-5)


def block(p, x, key=None, rate=0.1):
    mu, var = jnp.mean(x, -1, keepdims=True), jnp.var(x, -1, keepdims=True)
    h = (x - mu) / jnp.sqrt(var + 1e-5)
    q, k, v = h @ p["q"], h @ p["k"], h @ p["v"]
    a = jax.nn.softmax(q @ jnp.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]), axis=-1)
    if key is not None:
        keep = jax.random.bernoulli(key, 1 - rate, a.shape)
        a = jnp.where(keep, a / (1 - rate), 0)
    h = x + a @ v
    return h + jax.nn.gelu(h @ p["f1"]) @ p["f2"]


block_params = {n: normal(16, 16) * 0.3 for n in ("q", "k", "v", "f1", "f2")}


@check("a transformer block's gradient")
def _():
    on_gpu(jax.grad(lambda p, x: jnp.sum(block(p, x) ** 2)), block_params, normal(2, 6, 16), rtol=1e-4, atol=1e-4)


@check("a transformer block's gradient with dropout")
def _():
    on_gpu(jax.grad(lambda p, x, k: jnp.sum(block(p, x, k) ** 2)), block_params, normal(2, 6, 16),
           jax.random.key_data(jax.random.key(1)), rtol=1e-4, atol=1e-4)


@check("a GRU over lax.scan, its gradient")
def _():
    p = {"wz": normal(8, 8) * 0.3, "wr": normal(8, 8) * 0.3, "wh": normal(8, 8) * 0.3}

    def loss(p, xs):
        def cell(h, x):
            z = jax.nn.sigmoid(x @ p["wz"] + h)
            r = jax.nn.sigmoid(x @ p["wr"] - h)
            hh = jnp.tanh(x @ p["wh"] + r * h)
            h = (1 - z) * h + z * hh
            return h, h
        _, hs = jax.lax.scan(cell, jnp.zeros((3, 8)), xs)
        return jnp.sum(hs ** 2)

    on_gpu(jax.grad(loss), p, normal(7, 3, 8), rtol=1e-4, atol=1e-5)


@check("a fori_loop training loop")
def _():
    def train(w, x, y):
        def step(i, w):
            g = jax.grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
            return w - 0.05 * g
        return jax.lax.fori_loop(0, 25, step, w)

    on_gpu(train, normal(6, 1), normal(16, 6), normal(16, 1), rtol=1e-4, atol=1e-5)


@check("a while_loop the data bound")
def _():
    def f(x):
        return jax.lax.while_loop(lambda c: jnp.max(jnp.abs(c[0])) > 1e-3,
                                  lambda c: (c[0] * 0.5, c[1] + 1), (x, 0))

    on_gpu(f, normal(5))


@check("an accuracy metric with argmax")
def _():
    logits = normal(32, 10)
    logits[3, 4] = logits[3, 5] = 9.0  # a tie: the first index wins
    on_gpu(lambda l, y: jnp.mean(jnp.argmax(l, -1) == y), logits, rng.integers(0, 10, (32,)))


@check("sort, argsort, top_k and median of floats")
def _():
    x = normal(4, 33)
    x[0, :4] = [np.nan, -0.0, 0.0, -np.inf]
    on_gpu(lambda x: (jnp.sort(x, -1), jnp.argsort(x, -1), jax.lax.top_k(x, 5), jnp.median(x[1:], -1)), x)


@check("complex64 arithmetic")
def _():
    a = (normal(16) + 1j * normal(16)).astype(np.complex64)
    b = (normal(16) + 1j * normal(16)).astype(np.complex64)
    on_gpu(lambda a, b: (a * b + a / (b + 2), jnp.abs(a), jnp.exp(a) * jnp.conj(b)), a, b, rtol=1e-4, atol=1e-5)


@check("an rfft")
def _():
    on_gpu(lambda x: jnp.abs(jnp.fft.rfft(x)), normal(4, 64), rtol=1e-4, atol=1e-4)


@check("dropout and jax.random.normal")
def _():
    def f(k, x):
        k1, k2 = jax.random.split(jax.random.wrap_key_data(k))
        keep = jax.random.bernoulli(k1, 0.8, x.shape)
        return jnp.where(keep, x / 0.8, 0) + jax.random.normal(k2, x.shape)

    on_gpu(f, jax.random.key_data(jax.random.key(3)), normal(8, 8), rtol=1e-5, atol=1e-5)


@check("cumsum, cumprod and cummax")
def _():
    x = normal(5, 9)
    on_gpu(lambda x: (jnp.cumsum(x, 1), jnp.cumprod(x * 0.5 + 1, 1), jax.lax.cummax(x, 1)), x, rtol=1e-4, atol=1e-5)


@check("jnp.linalg.solve (the LU factorisation on the host, the rest on the device)")
def _():
    # Large enough that the work around the factorisation stays on the
    # device: a small program's device parts join its host part. jax turns
    # the pivots into a permutation with a fori_loop of n trips over a small
    # body: the CPU runs it, for less than n dispatches (its reason says so).
    n = 320
    a = normal(n, n) + n * np.eye(n, dtype=np.float32)
    on_gpu(lambda a, b: a @ (jnp.linalg.solve(a, b) * 2.0), a, normal(n, n), rtol=1e-3, atol=1e-3,
           host_ok=HOST_HOME + ("while",))


@check("logsumexp, erf and gammaln")
def _():
    x = normal(6, 7)
    on_gpu(lambda x: (logsumexp(x, -1), erf(x), gammaln(jnp.abs(x) + 0.5)), x, rtol=1e-4, atol=1e-5)


@check("an embedding's gradient")
def _():
    table, ids = normal(20, 8), rng.integers(0, 20, (6, 5)).astype(np.int32)
    on_gpu(jax.grad(lambda t, i: jnp.sum(jnp.tanh(t[i]) ** 2)), table, ids, rtol=1e-5, atol=1e-6)


@check("cross-entropy with take_along_axis")
def _():
    logits, y = normal(16, 12), rng.integers(0, 12, (16, 1))
    on_gpu(jax.value_and_grad(lambda l, y: -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(l), y, axis=1))),
           logits, y, rtol=1e-5, atol=1e-6)


finish()
