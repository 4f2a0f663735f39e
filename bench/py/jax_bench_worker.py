"""Times the JAX cases on the metalplug device and on jax's CPU, alternating
within this one process (device, CPU, device, CPU, ...), and prints one line
per case:

    BENCH {"kind": "case", "id": ..., "device": [seconds...], "cpu": [...], ...}

Run with the plugin registered (PJRT_NAMES_AND_LIBRARY_PATHS) and
JAX_PLATFORMS=metalplug,cpu; the Go side (bench/jax.go) starts one process
per run. Arguments: --reps N timed calls per case and device.
"""
import argparse
import json
import sys
import time

import numpy as np

import jax
import jax.numpy as jnp

PREFIX = "BENCH "


def emit(obj):
    sys.stdout.write(PREFIX + json.dumps(obj) + "\n")
    sys.stdout.flush()


dev = jax.devices("metalplug")[0]
cpu = jax.devices("cpu")[0]
rng = np.random.default_rng(0)


def small(a):
    return jnp.tanh(a @ a.T) * 2 + a.sum(axis=1, keepdims=True)


def mlp_grad(w1, w2, x):
    return jax.grad(lambda p: jnp.mean(jnp.tanh(x @ p[0]) @ p[1]) ** 2)((w1, w2))


fresh = [0]


def compile_case(d, a):
    """Lowers and compiles a function jax has not seen: every call compiles."""
    fresh[0] += 1
    k = fresh[0]
    jax.jit(lambda x: small(x) + k).lower(a).compile()


CASES = [
    ("jax_compile", "jit compile of a small function (tanh of a 16×16 matmul, a sum)", "compile",
     [rng.standard_normal((16, 16)).astype(np.float32)]),
    ("jax_small_call", "call of that compiled function, result ready", small, [rng.standard_normal((16, 16)).astype(np.float32)]),
    ("jax_matmul_256", "256×256 float32 matmul", lambda a, b: a @ b,
     [rng.standard_normal((256, 256)).astype(np.float32), rng.standard_normal((256, 256)).astype(np.float32)]),
    ("jax_mlp_grad", "gradient of a 2-layer MLP, batch 64, 128 hidden", mlp_grad,
     [rng.standard_normal((32, 128)).astype(np.float32), rng.standard_normal((128, 8)).astype(np.float32),
      rng.standard_normal((64, 32)).astype(np.float32)]),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    opts = ap.parse_args()
    emit({"kind": "ready", "jax": jax.__version__, "jaxlib": jax.lib.__version__,
          "python": "%d.%d.%d" % sys.version_info[:3]})
    for cid, title, fn, args in CASES:
        emit({"kind": "start", "id": cid})
        put = {d: [jax.device_put(a, d) for a in args] for d in (dev, cpu)}
        times = {dev: [], cpu: []}
        outs = {}
        if fn == "compile":
            run = {d: (lambda d=d: compile_case(d, put[d][0])) for d in (dev, cpu)}
        else:
            f = jax.jit(fn)
            run = {d: (lambda d=d: jax.block_until_ready(f(*put[d]))) for d in (dev, cpu)}
            for d in (dev, cpu):
                outs[d] = jax.tree_util.tree_leaves(run[d]())  # warm-up: compiles
        for _ in range(opts.reps):
            for d in (dev, cpu):
                t = time.perf_counter()
                run[d]()
                times[d].append(time.perf_counter() - t)
        diff = None
        if outs:
            num = max(float(np.max(np.abs(np.asarray(g) - np.asarray(w)))) for g, w in zip(outs[dev], outs[cpu]))
            den = max(float(np.max(np.abs(np.asarray(w)))) for w in outs[cpu]) or 1.0
            diff = num / den
        emit({"kind": "case", "id": cid, "title": title, "device": times[dev], "cpu": times[cpu], "max_rel_diff": diff})


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # the Go side reports it with the stderr tail
        emit({"kind": "error", "error": "%s: %s" % (type(e).__name__, e)})
        raise
