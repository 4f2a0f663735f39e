"""metalplug's JAX device backed by the Metal driver on the model of MPSGraph
(e2e_test.go): run with METALPLUG_HOST_DEVICE=1, METALPLUG_DRIVER=metal-model
and JAX_PLATFORMS=metalplug,cpu. float32 programs match jax's CPU; with x64
on, a program's float64 part runs on the CPU in float64 (Apple GPUs have no
float64), counted as a host part, and the library says so once on stderr
(e2e_test.go checks). The last line is "ALL OK" when every check passed.
"""


import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np

import metalplug
from checks import check, finish


dev = jax.devices("metalplug")[0]
cpu = jax.devices("cpu")[0]
rng = np.random.default_rng(0)


@check("the device is the Metal driver on the model")
def _():
    assert dev.driver == "metal-model", dev.driver
    assert "model of MPSGraph" in dev.device_kind, dev.device_kind


def on(d, f, *args):
    return np.asarray(jax.jit(f)(*jax.device_put(args, d)))


@check("float32 matmul, tanh and a grad match jax's CPU")
def _():
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w = rng.standard_normal((16, 4)).astype(np.float32)

    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    for f in (lambda w, x: jnp.tanh(x @ w), jax.grad(loss)):
        got, want = on(dev, f, w, x), on(cpu, f, w, x)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


@check("int32 division, sort and a scan match jax's CPU")
def _():
    a = rng.integers(-100, 100, (12,)).astype(np.int32)
    b = rng.integers(1, 9, (12,)).astype(np.int32)
    for f in (lambda a, b: a // b, lambda a, b: jnp.sort(a * b),
              lambda a, b: jax.lax.cumsum(a) + jax.lax.fori_loop(0, 3, lambda i, c: c + b, a)):
        np.testing.assert_array_equal(on(dev, f, a, b), on(cpu, f, a, b))


@check("float64 runs on the CPU in float64, beside float32 on the device, counted and said")
def _():
    x = np.array([1.0, 2.0, 3.0])  # float64: x64 is on
    y = rng.standard_normal((8, 8)).astype(np.float32)

    def f(x, y):  # a matmul stays on the GPU, however small
        return (x + 2.0 ** -40) - x, jnp.tanh(y @ y)

    before = metalplug.stats()["frontends"]["jax"]
    got = jax.tree.map(np.asarray, jax.jit(f)(*jax.device_put((x, y), dev)))
    after = metalplug.stats()["frontends"]["jax"]
    want = jax.tree.map(np.asarray, jax.jit(f)(*jax.device_put((x, y), cpu)))
    assert got[0].dtype == np.float64 and (got[0] == 2.0 ** -40).all(), got[0]  # float32 would give 0
    np.testing.assert_allclose(got[1], want[1], rtol=2e-5, atol=2e-6)
    reasons = {r: n - before["host_reasons"].get(r, 0) for r, n in after["host_reasons"].items()
               if n != before["host_reasons"].get(r, 0)}
    assert reasons and all("float64" in r for r in reasons), reasons
    assert after["device_executions"] > before["device_executions"], (before, after)
    print(f"     host parts: {sorted(reasons)}")


finish()
