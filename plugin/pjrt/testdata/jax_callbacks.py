"""jax's Python callbacks on the metalplug device (e2e_test.go): jax.debug.print,
jax.debug.callback, pure_callback, io_callback and checkify's checks, which
jax lowers for cpu, cuda, rocm and tpu only and jax_plugins.metalplug lowers
for metalplug to a custom_call the library runs on the host.

Run as jax_e2e.py is, with the plugin registered through jax_plugins (the
module installs the callbacks' entry point). Each check prints one line; the
last is "ALL OK" when every check passed.
"""

import contextlib
import functools
import io

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify, io_callback

from checks import check, finish

dev = jax.devices("metalplug")[0]
assert jax.default_backend() == "metalplug", jax.default_backend()


def captured(fn, *args):
    """fn(*args) with its stdout captured, once every effect has run."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = fn(*args)
        jax.block_until_ready(out)
        jax.effects_barrier()
    return out, buf.getvalue()


def lowered_for_us(fn, *args):
    text = jax.jit(fn).lower(*args).as_text()
    assert "metalplug_host_callback" in text, text
    return text


@check("jax.debug.print in a jitted function prints its values, and the result is right")
def _():
    def f(x):
        jax.debug.print("x = {x}", x=x)
        return x * 2

    lowered_for_us(f, jnp.arange(3.0))
    out, text = captured(jax.jit(f), jnp.arange(3.0, device=dev))
    assert text == "x = [0. 1. 2.]\n", repr(text)
    np.testing.assert_array_equal(np.asarray(out), [0.0, 2.0, 4.0])
    assert out.devices() == {dev}, out.devices()


@check("a function returning nothing but printing still runs")
def _():
    def f(x):
        jax.debug.print("sum {s}", s=x.sum())

    _, text = captured(jax.jit(f), jnp.arange(4, device=dev))
    assert text == "sum 6\n", repr(text)


@check("ordered prints in a fori_loop come in order")
def _():
    def f(n):
        def body(i, acc):
            jax.debug.print("step {i}", i=i, ordered=True)
            return acc + i

        return jax.lax.fori_loop(0, n, body, 0)

    out, text = captured(jax.jit(f), 4)
    assert text == "step 0\nstep 1\nstep 2\nstep 3\n", repr(text)
    assert int(out) == 6


@check("a print in one branch of a cond runs only when that branch is taken")
def _():
    def f(x):
        jax.lax.cond(x > 0, lambda: jax.debug.print("positive {x}", x=x), lambda: None)
        return x

    _, text = captured(jax.jit(f), jnp.int32(3))
    assert text == "positive 3\n", repr(text)
    _, text = captured(jax.jit(f), jnp.int32(-3))
    assert text == "", repr(text)


@check("jax.debug.callback sees the operands as numpy arrays of their dtypes")
def _():
    seen = []

    def f(x, b, i):
        jax.debug.callback(lambda *a: seen.append(a), x, b, i)
        return x

    captured(jax.jit(f), jnp.float32(1.5), jnp.array([True, False]), jnp.arange(3, dtype=jnp.int32) - 1)
    assert len(seen) == 1, seen
    x, b, i = seen[0]
    assert x.dtype == np.float32 and float(x) == 1.5, x
    assert b.dtype == np.bool_ and b.tolist() == [True, False], b
    assert i.dtype == np.int32 and i.tolist() == [-1, 0, 1], i


@check("pure_callback computes on the host, under vmap too")
def _():
    def host_sin(x):
        return np.sin(x).astype(x.dtype)

    def f(x):
        return jax.pure_callback(host_sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method="sequential") + 1

    x = jnp.linspace(0, 1, 6, dtype=jnp.float32).reshape(2, 3)
    lowered_for_us(f, x)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x)), np.sin(np.asarray(x)) + 1, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(f))(x)), np.sin(np.asarray(x)) + 1, rtol=1e-6)


@check("io_callback, ordered, runs once per call in order and returns its value")
def _():
    log = []

    def record(v):
        log.append(int(v))
        return np.int32(len(log))

    def f(x):
        a = io_callback(record, jax.ShapeDtypeStruct((), jnp.int32), x, ordered=True)
        b = io_callback(record, jax.ShapeDtypeStruct((), jnp.int32), x + 1, ordered=True)
        return a * 10 + b

    out = jax.jit(f)(jnp.int32(7))
    assert int(out) == 12, out
    assert log == [7, 8], log


@check("a callback's exception fails the execution with its message")
def _():
    def boom(x):
        raise ValueError("the callback's own failure")

    def f(x):
        return jax.pure_callback(boom, jax.ShapeDtypeStruct((), jnp.float32), x)

    try:
        np.asarray(jax.jit(f)(jnp.float32(1)))
    except Exception as e:  # noqa: BLE001 - jax's error type is its own
        assert "ValueError: the callback's own failure" in str(e), str(e)
    else:
        raise AssertionError("no error")


@check("a callback returning the wrong shape is refused with jax's message")
def _():
    def f(x):
        return jax.pure_callback(lambda x: np.zeros(3, np.float32), jax.ShapeDtypeStruct((2,), jnp.float32), x)

    try:
        np.asarray(jax.jit(f)(jnp.zeros(2)))
    except Exception as e:  # noqa: BLE001
        assert "Incorrect output shape for return value #0" in str(e), str(e)
    else:
        raise AssertionError("no error")


@check("checkify's checks run on the device")
def _():
    @functools.partial(checkify.checkify, errors=checkify.user_checks)
    def f(x):
        checkify.check(x > 0, "x must be positive, got {x}", x=x)
        return jnp.log(x)

    err, out = jax.jit(f)(jnp.float32(2.0))
    assert err.get() is None, err.get()
    np.testing.assert_allclose(float(out), np.log(2.0), rtol=1e-6)
    err, _ = jax.jit(f)(jnp.float32(-1.0))
    assert err.get() is not None and "x must be positive, got -1.0" in err.get(), err.get()


finish()
