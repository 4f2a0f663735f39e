"""Shared by the integration scripts: load the plugin the test names, quietly."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

# GPU on macOS (the Metal driver); the host reference driver elsewhere.
DEVICE_TYPE = os.environ.get("METALPLUG_TEST_DEVICE_TYPE", "METALPLUG_HOST")
DEVICE = "/device:%s:0" % DEVICE_TYPE


def load():
    """Loads the library named by METALPLUG_TEST_LIB, unless the installed one
    was already loaded from tensorflow-plugins (loading twice would register the
    platform twice, which TensorFlow treats as fatal)."""
    lib = os.environ.get("METALPLUG_TEST_LIB", "")
    if lib:
        from tensorflow.python.framework import load_library

        load_library.load_pluggable_device_library(lib)
    return [d.name for d in tf.config.list_physical_devices(DEVICE_TYPE)]


def emit(obj):
    print("RESULT " + json.dumps(obj))
    sys.stdout.flush()


def op_counts():
    """How many times each op's kernel ran on the device so far, as the plugin
    counts them (metalplug_op_counts, reached through ctypes)."""
    import ctypes
    import glob
    import site

    lib = os.environ.get("METALPLUG_TEST_LIB", "")
    if not lib:
        found = [p for d in site.getsitepackages() for p in glob.glob(os.path.join(d, "tensorflow-plugins", "libmetalplug.*"))]
        lib = found[0]
    so = ctypes.CDLL(lib)
    so.metalplug_op_counts.restype = ctypes.c_void_p
    p = so.metalplug_op_counts()
    try:
        return json.loads(ctypes.string_at(p).decode())
    finally:
        ctypes.CDLL(None).free(ctypes.c_void_p(p))
