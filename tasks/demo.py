"""Trains a small Keras model on the metalplug device and shows where it ran.
The plugin loads from site-packages/tensorflow-plugins on `import tensorflow`."""
import numpy as np
import tensorflow as tf

devices = tf.config.list_physical_devices("METALPLUG_HOST") or tf.config.list_physical_devices("GPU")
print("plugin devices:", [d.name for d in devices])
if not devices:
    raise SystemExit("no metalplug device: is METALPLUG_HOST_DEVICE=1 set?")
name = "/device:%s:0" % devices[0].device_type

tf.debugging.set_log_device_placement(False)
rng = np.random.default_rng(0)
x = rng.standard_normal((512, 8, 8, 1)).astype(np.float32)
y = (x.mean(axis=(1, 2, 3)) > 0).astype(np.int64)

with tf.device(name):
    model = tf.keras.Sequential([
        tf.keras.Input((8, 8, 1)),
        tf.keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(16, activation="tanh"),
        tf.keras.layers.Dense(2, activation="softmax"),
    ])
    # Keras would otherwise compile the step with XLA, which has no JIT device
    # for a pluggable device (on macOS Keras turns XLA off for a GPU itself).
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"], jit_compile=False)
    hist = model.fit(x, y, batch_size=64, epochs=5, verbose=0)
    logits = model(x[:4])

print("loss by epoch:", " ".join("%.4f" % v for v in hist.history["loss"]))
print("accuracy by epoch:", " ".join("%.3f" % v for v in hist.history["accuracy"]))
print("forward pass ran on:", logits.device)
with tf.device(name):
    a = tf.random.normal((256, 256))
    b = tf.linalg.matmul(a, a)
print("MatMul ran on:", b.device)
