"""Shared by the integration scripts: load the plugin the test names, quietly."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

DEVICE_TYPE = "METALPLUG_HOST"
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
