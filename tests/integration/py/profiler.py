"""A small Keras model and a few eager ops run under
tf.profiler.experimental.start/stop; the XSpace TensorFlow writes
(logdir/plugins/profile/<run>/<host>.xplane.pb) is read back with
TensorFlow's own protobuf classes, and the plugin device's plane is
reported: its lines (one per stream) and their events by name, start and
duration."""
import glob
import os
import sys
import tempfile

import numpy as np

from common import DEVICE, DEVICE_TYPE, emit, load, tf

load()
from tensorflow.tsl.profiler.protobuf import xplane_pb2  # noqa: E402

logdir = tempfile.mkdtemp()
rng = np.random.default_rng(0)
x = rng.standard_normal((64, 8)).astype(np.float32)
y = rng.standard_normal((64, 1)).astype(np.float32)
with tf.device(DEVICE):
    model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="tanh"), tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse", jit_compile=False)
    model.fit(x, y, epochs=1, batch_size=32, verbose=0)  # traced and warm before the profile
    tf.profiler.experimental.start(logdir)
    model.fit(x, y, epochs=1, batch_size=32, verbose=0)
    z = tf.linalg.matmul(tf.constant(x), tf.constant(x), transpose_b=True)
    z.numpy()
    tf.profiler.experimental.stop()

files = glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))
out = {"files": len(files), "planes": [], "lines": []}
for f in files:
    space = xplane_pb2.XSpace()
    with open(f, "rb") as fh:
        space.ParseFromString(fh.read())
    for plane in space.planes:
        out["planes"].append(plane.name)
        if plane.name != "/device:%s:0" % DEVICE_TYPE:
            continue
        for line in plane.lines:
            events = []
            for e in line.events:
                md = plane.event_metadata[e.metadata_id]
                events.append({"name": md.name, "start_ps": line.timestamp_ns * 1000 + e.offset_ps, "duration_ps": e.duration_ps})
            out["lines"].append({"name": line.name, "events": events})
emit(out)
