"""Memory pressure and what the device cannot hold, through jax
(e2e_test.go): run with METALPLUG_HOST_DEVICE=1, METALPLUG_HOST_MEMORY_MB=64,
JAX_PLATFORMS=metalplug,cpu, on the host driver or (METALPLUG_DRIVER=
metal-model) the Metal driver on the model of MPSGraph.

An array, a jitted program's output and a jitted program's intermediates
each larger than the device raise an exception saying RESOURCE_EXHAUSTED,
the bytes asked for and what is free, and the next jitted call works. A
rank-17 array, which no MPSGraph tensor holds, is computed right (on the
model, on the CPU: e2e_test.go checks it is said); with
METALPLUG_NO_CPU_FALLBACK=1 it is an INTERNAL error naming the op, the shape
and the dtype instead, and the next jitted call works. The last line is
"ALL OK" when every check passed.
"""

import os

import jax
import jax.numpy as jnp
import numpy as np

from checks import check, finish

dev = jax.devices("metalplug")[0]
no_cpu = os.environ.get("METALPLUG_NO_CPU_FALLBACK") == "1"
MiB = 1 << 20


def raised(fn):
    """The message of what fn raised; fails when it raised nothing."""
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - jax's class varies by release; the message is checked
        return str(e)
    raise AssertionError(f"no exception; returned {r!r}")


def says(msg, *words):
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"


def next_call_works():
    x = jax.device_put(np.arange(4, dtype=np.float32), dev)
    assert float(jax.jit(lambda x: (x * 2).sum())(x)) == 12.0


@check("an array larger than the device is RESOURCE_EXHAUSTED naming its size and what is free")
def _():
    msg = raised(lambda: jax.device_put(np.ones(128 * MiB // 4, np.float32), dev).block_until_ready())
    says(msg, "RESOURCE_EXHAUSTED", "134217728 bytes", "f32[33554432]", "of 67108864 bytes free")
    next_call_works()


@check("a jitted program's output larger than the device is RESOURCE_EXHAUSTED naming its size and what is free")
def _():
    x = jax.device_put(np.ones(1024, np.float32), dev)
    msg = raised(lambda: jax.jit(lambda x: jnp.broadcast_to(x, (32 * 1024, 1024)))(x).block_until_ready())
    says(msg, "RESOURCE_EXHAUSTED", "134217728 bytes", "f32[32768,1024]", "bytes free")
    next_call_works()


@check("a jitted program whose intermediates do not fit is RESOURCE_EXHAUSTED naming its types, what it needs and what is free")
def _():
    x = jax.device_put(np.ones(8192, np.float32), dev)  # the outer product alone is 256 MiB
    msg = raised(lambda: float(jax.jit(lambda x: jnp.sum(jnp.outer(x, x)))(x)))
    says(msg, "RESOURCE_EXHAUSTED", "(float32[8192]) -> (float32[])", "intermediates need", "bytes free")
    next_call_works()


@check("a rank-17 array: computed right, or with METALPLUG_NO_CPU_FALLBACK=1 INTERNAL naming op, shape and dtype")
def _():
    x = jax.device_put(np.arange(4, dtype=np.float32).reshape([1] * 16 + [4]), dev)
    f = jax.jit(lambda x: x * 2)
    if no_cpu:
        msg = raised(lambda: f(x).block_until_ready())
        says(msg, "INTERNAL", "METALPLUG_NO_CPU_FALLBACK=1", "parameter", "float32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,4]",
             "17 dimensions")
    else:
        assert np.asarray(f(x)).ravel().tolist() == [0, 2, 4, 6]
    next_call_works()


finish()
