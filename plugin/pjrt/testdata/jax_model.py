"""metalplug's JAX device backed by the Metal driver on the model of MPSGraph
(e2e_test.go): run with METALPLUG_HOST_DEVICE=1, METALPLUG_DRIVER=metal-model
and JAX_PLATFORMS=metalplug,cpu. float32 programs match jax's CPU; with x64
on, a float64 program is a compile error naming the instruction, since
Metal has no float64. The last line is "ALL OK" when every check passed.
"""


import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
import numpy as np

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


@check("float64 is a compile error naming the instruction")
def _():
    x = np.arange(4, dtype=np.float64)
    try:
        on(dev, lambda x: x * 2.0, x)
    except Exception as e:  # noqa: BLE001 - jax raises its own runtime error type
        msg = str(e)
        assert "float64 is not supported by Metal" in msg and "instruction %" in msg, msg
        assert msg.startswith("INVALID_ARGUMENT"), msg
        print(f"     {msg.splitlines()[0][:160]}")
    else:
        raise AssertionError("a float64 program compiled for the Metal driver")


finish()
