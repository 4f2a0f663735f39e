"""Long runs on the installed plugin, for TestEndurance.

    endurance.py keras STEPS EVERY    a Keras MLP trained STEPS steps
    endurance.py flax STEPS EVERY     a flax MLP trained with optax, STEPS steps
    endurance.py threads STEPS EVERY  both frameworks in this process, two
                                      threads each, at once

Every EVERY steps a sample: the step, the loss, the process's resident
memory, the driver's memory in use and cached executables, and the
frontend's compiles so far (metalplug.stats()). Each run is seeded, so a
fresh run of the first EVERY steps gives the loss a long run sampled there.

threads first runs each of its four workloads alone, then all four at once;
each thread asks for one wrong op every 100 steps, and every one must come
back as an exception: no error may be lost to another thread."""

import json
import os
import sys
import threading

import numpy as np

mode, STEPS, EVERY = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
DEVICE_TYPE = os.environ.get("METALPLUG_TEST_DEVICE_TYPE", "METALPLUG_HOST")


def rss():
    """Resident bytes now (Linux), or the peak so far where /proc is absent
    (macOS's ru_maxrss, in bytes there): either grows if memory leaks."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def sample(step, loss, frontend):
    import metalplug

    s = metalplug.stats()
    m = s.get("memory", {})
    return {"step": step, "loss": float(loss), "rss": rss(), "used_bytes": m.get("used_bytes", -1),
            "cached_executables": m.get("cached_executables", -1),
            "compiles": s["frontends"][frontend]["compiles"]}


def data(seed, n=1024, d=16, classes=4):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x, x[:, :classes].argmax(axis=1).astype(np.int32)


def keras_workload(seed):
    """A step function and the number of batches: a Keras MLP with Adam."""
    import tensorflow as tf

    keras = tf.keras
    device = tf.config.list_logical_devices(DEVICE_TYPE)[0].name
    keras.utils.set_random_seed(seed)
    x, y = data(seed)
    with tf.device(device):
        model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64, activation="relu"),
                                  keras.layers.Dense(64, activation="relu"), keras.layers.Dense(4)])
        model.compile(optimizer=keras.optimizers.Adam(1e-3),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=False)

    def step(i):
        b = i % 32
        with tf.device(device):
            return model.train_on_batch(x[b * 32:(b + 1) * 32], y[b * 32:(b + 1) * 32])

    def wrong():
        with tf.device(device):
            tf.raw_ops.MatMul(a=np.ones((2, 3), np.float32), b=np.ones((4, 5), np.float32)).numpy()

    return step, wrong


def flax_workload(seed):
    """A step function: a flax MLP with optax's AdamW, jitted."""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import optax

    dev = jax.devices("metalplug")[0]

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, v):
            v = nn.relu(nn.Dense(64)(v))
            v = nn.relu(nn.Dense(64)(v))
            return nn.Dense(4)(v)

    x, y = data(seed)
    x, y = jax.device_put(x, dev), jax.device_put(y, dev)
    model = MLP()
    params = jax.device_put(model.init(jax.random.PRNGKey(seed), x[:1]), dev)
    opt = optax.adamw(1e-3)
    state = {"params": params, "opt": jax.device_put(opt.init(params), dev)}

    @jax.jit
    def train(params, opt_state, xb, yb):
        def loss_fn(p):
            logits = model.apply(p, xb)
            return optax.softmax_cross_entropy_with_integer_labels(logits, yb).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    def step(i):
        b = i % 32
        state["params"], state["opt"], loss = train(state["params"], state["opt"], x[b * 32:(b + 1) * 32], y[b * 32:(b + 1) * 32])
        return float(loss)

    def wrong():
        jnp.dot(jax.device_put(np.ones((2, 3), np.float32), dev), jax.device_put(np.ones((4, 5), np.float32), dev)).block_until_ready()

    return step, wrong


def long_run(workload, frontend):
    step, _ = workload(0)
    samples, loss = [], float("nan")
    for i in range(STEPS):
        loss = step(i)
        if (i + 1) % EVERY == 0 or i + 1 == STEPS:
            samples.append(sample(i + 1, loss, frontend))
    return {"samples": samples, "finite": bool(all(np.isfinite(s["loss"]) for s in samples))}


def threads_run():
    import jax  # noqa: F401 - both frameworks load the one library before any thread starts
    import tensorflow as tf  # noqa: F401

    kinds = [("tensorflow", keras_workload, 1), ("tensorflow", keras_workload, 2),
             ("jax", flax_workload, 3), ("jax", flax_workload, 4)]
    alone = []
    for _, make, seed in kinds:
        step, _ = make(seed)
        for i in range(STEPS):
            loss = step(i)
        alone.append(float(loss))
    out = [None] * len(kinds)

    # Made one after another, before any thread starts: Keras seeds its
    # initialisers from a process-wide generator, so models made at once
    # would draw each other's numbers.
    made = [make(seed) for _, make, seed in kinds]

    def worker(k):
        step, wrong = made[k]
        res = {"asked_wrong": 0, "raised": 0, "errors": []}
        loss = float("nan")
        try:
            for i in range(STEPS):
                loss = step(i)
                if i % 100 == 50:
                    res["asked_wrong"] += 1
                    try:
                        wrong()
                    except Exception:  # the error we asked for
                        res["raised"] += 1
        except Exception as e:  # anything else is lost work: report it
            res["errors"].append("%s: %s" % (type(e).__name__, str(e)[:300]))
        res["loss"] = float(loss)
        out[k] = res

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(len(kinds))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for k, (frontend, _, seed) in enumerate(kinds):
        out[k].update({"frontend": frontend, "seed": seed, "alone": alone[k]})
    return {"threads": out, "after": sample(STEPS, 0.0, "jax")}


if mode == "keras":
    import tensorflow as tf  # noqa: F401 - loads the installed plugin

    result = long_run(keras_workload, "tensorflow")
elif mode == "flax":
    result = long_run(flax_workload, "jax")
elif mode == "threads":
    result = threads_run()
else:
    sys.exit("endurance.py: unknown mode %r (keras, flax or threads)" % mode)
print("RESULT " + json.dumps(result))
sys.stdout.flush()
