"""TensorFlow and jax in one process on the installed plugin: argv[1] says
which to import first. Each framework computes on its device and on its CPU;
the result says how far apart they are and which libmetalplug files the
process maps (one build means one Go runtime; the universal wheel's loader,
plain C, is listed apart). A framework with no metalplug device reports an
empty device (a declined load), and its computation is left out. The
figures of metalplug.stats() say each framework's work was counted as its
own."""

import json
import os
import sys

import numpy as np

first = sys.argv[1]
device_type = os.environ.get("METALPLUG_TEST_DEVICE_TYPE", "METALPLUG_HOST")


def tensorflow_part():
    import tensorflow as tf

    devs = tf.config.list_logical_devices(device_type)
    if not devs:
        return "", 0.0
    x = np.linspace(-1, 1, 64 * 64, dtype=np.float32).reshape(64, 64)
    with tf.device(devs[0].name):
        got = tf.linalg.matmul(x, x).numpy()
    with tf.device("/CPU:0"):
        want = tf.linalg.matmul(x, x).numpy()
    return devs[0].name, float(np.max(np.abs(got - want)))


def jax_part():
    import jax
    import jax.numpy as jnp

    try:
        dev = jax.devices("metalplug")[0]
    except RuntimeError:  # metalplug did not register
        return None, 0.0
    cpu = jax.devices("cpu")[0]
    x = np.linspace(-1, 1, 48, dtype=np.float32).reshape(6, 8)
    f = jax.jit(lambda a: jnp.tanh(a @ a.T) + 1)
    got = np.asarray(f(jax.device_put(x, dev)))
    want = np.asarray(f(jax.device_put(x, cpu)))
    return dev, float(np.max(np.abs(got - want)))


if first == "tensorflow":
    tf_dev, tf_err = tensorflow_part()
    jax_dev, jax_err = jax_part()
else:
    jax_dev, jax_err = jax_part()
    tf_dev, tf_err = tensorflow_part()

import metalplug  # noqa: E402 - the install's module, after both frameworks loaded the library

figures = metalplug.stats()

libs, loaders = set(), set()
if os.path.exists("/proc/self/maps"):
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            path = fields[-1] if len(fields) >= 6 else ""
            name = os.path.basename(path)
            if name.startswith("libmetalplug-loader"):
                loaders.add(os.path.realpath(path))
            elif name.startswith("libmetalplug"):
                libs.add(os.path.realpath(path))
else:  # macOS: the dynamic loader keeps one image per path, which the install makes one
    libs.add("(one path, by the install)")
print(
    "RESULT "
    + json.dumps(
        {
            "tf_device": tf_dev,
            "tf_error": tf_err,
            "jax_device": str(jax_dev) if jax_dev else "",
            "jax_kind": jax_dev.device_kind if jax_dev else "",
            "jax_error": jax_err,
            "libraries": sorted(libs),
            "loaders": sorted(loaders),
            "order": first,
            "stats_driver": figures["driver"],
            "tf_executions": figures["frontends"]["tensorflow"]["executions"],
            "jax_executions": figures["frontends"]["jax"]["executions"],
            "jax_compiles": figures["frontends"]["jax"]["compiles"],
        }
    )
)
