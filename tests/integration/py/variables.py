"""The device's variable and optimizer kernels (plugin/tf/variables.go).

    variables.py registry    which of those ops have a kernel on the device
    variables.py ops         each op through tf.raw_ops on the device and on the
                             CPU from identical variables: the updated
                             variables (and slots) and the device op counts
    variables.py errors      wrong input to those kernels
    variables.py keras       a small Keras MLP trained with Adam on the device
                             and on the CPU
    variables.py race        variable updates whose values come from the
                             device's own (asynchronous) kernels: repeated
                             assign_add of a product, and Adam steps, against
                             the same on the CPU
"""
import sys

import numpy as np

from common import DEVICE, DEVICE_TYPE, emit, load, op_counts, tf

OPS = [
    "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
    "ResourceApplyGradientDescent", "ResourceApplyMomentum", "ResourceApplyKerasMomentum",
    "ResourceApplyAdam", "ResourceApplyRMSProp", "ResourceGather", "ResourceScatterUpdate",
]
CPU = "/device:CPU:0"


def registry():
    from tensorflow.python.framework import kernels

    out = {}
    for op in OPS:
        regs = kernels.get_registered_kernels_for_op(op).kernel
        out[op] = sorted({k.device_type for k in regs})
    # A kernel the device always registers, to show the listing sees the device.
    out["MatMul"] = sorted({k.device_type for k in kernels.get_registered_kernels_for_op("MatMul").kernel})
    return out


def dtype_of(name):
    return {"float32": tf.float32, "float16": tf.float16, "bfloat16": tf.bfloat16,
            "int64": tf.int64}[name]


def tolerance(name):
    # float32: a few ulps of the values involved; the half types round every
    # stored value, and the device computes in float32 and rounds once.
    return {"float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}.get(name, 0.0)


def compare(got, want):
    got = [np.asarray(g, dtype=np.float64) for g in got]
    want = [np.asarray(w, dtype=np.float64) for w in want]
    abs_err = max(float(np.max(np.abs(g - w))) if g.size else 0.0 for g, w in zip(got, want))
    rel_err = max(float(np.max(np.abs(g - w) / (1.0 + np.abs(w)))) if g.size else 0.0 for g, w in zip(got, want))
    nan = any(bool(np.isnan(g).any()) for g in got)
    return abs_err, rel_err, nan


def optimizer_cases(rng):
    """(name, op, dtype, variables, scalars, call) for each optimizer case."""
    shape = (6, 5)

    def arrs(n, positive=()):
        out = []
        for i in range(n):
            a = rng.standard_normal(shape).astype(np.float32)
            out.append(np.abs(a) + 0.1 if i in positive else a)
        return out

    cases = []
    for dt in ("float32", "float16", "bfloat16"):
        cases.append(("GradientDescent", "ResourceApplyGradientDescent", dt, arrs(1), [0.1],
                      lambda h, s, g, lock: tf.raw_ops.ResourceApplyGradientDescent(var=h[0], alpha=s[0], delta=g, use_locking=lock)))
        for nesterov in (False, True):
            suffix = "_nesterov" if nesterov else ""
            cases.append(("Momentum" + suffix, "ResourceApplyMomentum", dt, arrs(2), [0.05, 0.9],
                          lambda h, s, g, lock, n=nesterov: tf.raw_ops.ResourceApplyMomentum(
                              var=h[0], accum=h[1], lr=s[0], grad=g, momentum=s[1], use_locking=lock, use_nesterov=n)))
            cases.append(("KerasMomentum" + suffix, "ResourceApplyKerasMomentum", dt, arrs(2), [0.05, 0.9],
                          lambda h, s, g, lock, n=nesterov: tf.raw_ops.ResourceApplyKerasMomentum(
                              var=h[0], accum=h[1], lr=s[0], grad=g, momentum=s[1], use_locking=lock, use_nesterov=n)))
            # beta1_power, beta2_power, lr, beta1, beta2, epsilon
            cases.append(("Adam" + suffix, "ResourceApplyAdam", dt, arrs(3, positive=(2,)), [0.9 ** 3, 0.999 ** 3, 0.01, 0.9, 0.999, 1e-7],
                          lambda h, s, g, lock, n=nesterov: tf.raw_ops.ResourceApplyAdam(
                              var=h[0], m=h[1], v=h[2], beta1_power=s[0], beta2_power=s[1], lr=s[2], beta1=s[3],
                              beta2=s[4], epsilon=s[5], grad=g, use_locking=lock, use_nesterov=n)))
        # lr, rho, momentum, epsilon
        cases.append(("RMSProp", "ResourceApplyRMSProp", dt, arrs(3, positive=(1,)), [0.01, 0.9, 0.5, 1e-7],
                      lambda h, s, g, lock: tf.raw_ops.ResourceApplyRMSProp(
                          var=h[0], ms=h[1], mom=h[2], lr=s[0], rho=s[1], momentum=s[2], epsilon=s[3], grad=g, use_locking=lock)))
    return cases


def run_optimizer(device, call, dt, variables, scalars, grads, lock, hold_read):
    with tf.device(device):
        vs = [tf.Variable(tf.cast(v, dt)) for v in variables]
        sc = [tf.constant(s, dt) for s in scalars]
        held = vs[0].read_value() if hold_read else None  # forces a copy-on-write of var
        for g in grads:
            call([v.handle for v in vs], sc, tf.constant(tf.cast(g, dt)), lock)
        out = [tf.cast(v, tf.float32).numpy() for v in vs]
        if held is not None:
            out.append(tf.cast(held, tf.float32).numpy())
        return out


def ops():
    tf.config.set_soft_device_placement(False)
    rng = np.random.default_rng(0)
    results = {}

    def record(name, op, dt, got, want, before):
        after = op_counts()
        abs_err, rel_err, nan = compare(got, want)
        results[name] = {"op": op, "dtype": dt, "ran_on_device": after.get(op, 0) - before.get(op, 0),
                         "max_abs_error": abs_err, "max_rel_error": rel_err, "nan": nan, "tolerance": tolerance(dt)}

    for name, op, dt, variables, scalars, call in optimizer_cases(rng):
        grads = [rng.standard_normal(variables[0].shape).astype(np.float32) for _ in range(3)]
        for lock, hold in ((False, False), (True, True)):
            case = "%s_%s%s" % (name, dt, "_locked_cow" if lock else "")
            try:
                want = run_optimizer(CPU, call, dtype_of(dt), variables, scalars, grads, lock, hold)
                before = op_counts()
                got = run_optimizer(DEVICE, call, dtype_of(dt), variables, scalars, grads, lock, hold)
                record(case, op, dt, got, want, before)
            except Exception as e:  # noqa: BLE001 - reported to the Go test
                results[case] = {"op": op, "dtype": dt, "error": "%s: %s" % (type(e).__name__, e)}

    # Assign, AssignAdd, AssignSub; the read held across the update checks that
    # a reader's buffer is copied before it is changed.
    # Variables on the device can hold these (TensorFlow has no device
    # VarHandleOp for int32 or uint8).
    for dt in ("float32", "float16", "bfloat16", "int64"):
        a = (rng.standard_normal((4, 3)) * 10).astype(np.float32)
        b = (rng.standard_normal((4, 3)) * 10).astype(np.float32)

        def assigns(device, a=a, b=b, dt=dt):
            t = dtype_of(dt)
            with tf.device(device):
                v = tf.Variable(tf.cast(a, t))
                held = v.read_value()
                v.assign_add(tf.cast(b, t))
                after_add = v.read_value()
                v.assign_sub(tf.cast(a, t))
                v.assign_sub(tf.cast(a, t))
                after_sub = v.read_value()
                v.assign(tf.cast(b, t))
                return [tf.cast(x, tf.float32).numpy() for x in (held, after_add, after_sub, v.read_value())]

        try:
            want = assigns(CPU)
            before = op_counts()
            got = assigns(DEVICE)
            after = op_counts()
            abs_err, rel_err, nan = compare(got, want)
            for op in ("AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"):
                results["%s_%s" % (op, dt)] = {"op": op, "dtype": dt, "ran_on_device": after.get(op, 0) - before.get(op, 0),
                                               "max_abs_error": abs_err, "max_rel_error": rel_err, "nan": nan, "tolerance": tolerance(dt)}
        except Exception as e:  # noqa: BLE001
            results["Assign_%s" % dt] = {"op": "AssignAddVariableOp", "dtype": dt, "error": "%s: %s" % (type(e).__name__, e)}

    # ResourceGather (batch_dims 0 and 1) and ResourceScatterUpdate; after the
    # sparse accesses the variable is in copy-on-read mode, so the dense
    # updates after them copy the buffer through the device, and reads must
    # still see the right values.
    for dt in ("float32", "float16", "int64", "bool"):
        p = (rng.standard_normal((5, 4, 3)) * 10).astype(np.float32)
        p2 = (rng.standard_normal((5, 4, 3)) * 10).astype(np.float32)
        idx = np.array([[4, 0, 2], [1, 1, 3]], dtype=np.int64)
        bidx = np.array([[3, 0], [1, 1], [2, 2], [0, 3], [1, 0]], dtype=np.int32)
        sidx = np.array([[3, 0, 4], [1, 2, 2]], dtype=np.int32)
        supd = (rng.standard_normal((2, 3, 4, 3)) * 10).astype(np.float32)
        supd[1, 2] = supd[1, 1]  # repeated index 2: identical rows, so the order does not matter

        def sparse(device, p=p, p2=p2, idx=idx, bidx=bidx, sidx=sidx, supd=supd, dt=dt):
            t = tf.bool if dt == "bool" else dtype_of(dt)
            cast = (lambda a: tf.constant(a > 0)) if dt == "bool" else (lambda a: tf.cast(a, t))
            with tf.device(device):
                v = tf.Variable(cast(p))
                g0 = tf.raw_ops.ResourceGather(resource=v.handle, indices=idx, dtype=t)
                g1 = tf.raw_ops.ResourceGather(resource=v.handle, indices=bidx, dtype=t, batch_dims=1)
                tf.raw_ops.ResourceScatterUpdate(resource=v.handle, indices=sidx, updates=cast(supd))
                after_scatter = v.read_value()
                if dt != "bool":
                    v.assign_add(cast(p))
                after_add = v.read_value()
                v.assign(cast(p2))
                return [tf.cast(x, tf.float32).numpy() for x in (g0, g1, after_scatter, after_add, v.read_value())]

        try:
            want = sparse(CPU)
            before = op_counts()
            got = sparse(DEVICE)
            after = op_counts()
            abs_err, rel_err, nan = compare(got, want)
            for op in ("ResourceGather", "ResourceScatterUpdate"):
                results["%s_%s" % (op, dt)] = {"op": op, "dtype": dt, "ran_on_device": after.get(op, 0) - before.get(op, 0),
                                               "max_abs_error": abs_err, "max_rel_error": rel_err, "nan": nan, "tolerance": tolerance(dt)}
        except Exception as e:  # noqa: BLE001
            results["Sparse_%s" % dt] = {"op": "ResourceGather", "dtype": dt, "error": "%s: %s" % (type(e).__name__, e)}
    return results


def errors():
    """Wrong input to the device's kernels: each must raise, naming the op,
    the shapes and the dtypes."""
    tf.config.set_soft_device_placement(False)
    out = {}
    with tf.device(DEVICE):
        v = tf.Variable(tf.zeros((3,)))
        m = tf.Variable(tf.zeros((3,)))
        s = tf.Variable(tf.ones((3,)))
        f = lambda x: tf.constant(x, tf.float32)  # noqa: E731
        cases = {
            "assign_add_shape": lambda: tf.raw_ops.AssignAddVariableOp(resource=v.handle, value=tf.ones((4,))),
            "adam_grad_shape": lambda: tf.raw_ops.ResourceApplyAdam(
                var=v.handle, m=m.handle, v=s.handle, beta1_power=f(0.9), beta2_power=f(0.99), lr=f(0.1), beta1=f(0.9),
                beta2=f(0.99), epsilon=f(1e-7), grad=tf.ones((2, 2))),
            "momentum_lr_not_scalar": lambda: tf.raw_ops.ResourceApplyMomentum(
                var=v.handle, accum=m.handle, lr=tf.ones((3,)), grad=tf.ones((3,)), momentum=f(0.9)),
            "scatter_updates_shape": lambda: tf.raw_ops.ResourceScatterUpdate(
                resource=v.handle, indices=tf.constant([0, 1]), updates=tf.ones((5,))),
        }
        # A handle whose variable was never assigned, so does not exist.
        # TF_AssignUpdateVariable aborts the process on a missing variable;
        # the kernel must look it up first and fail instead.
        never = tf.raw_ops.VarHandleOp(dtype=tf.float32, shape=[3], shared_name="metalplug_never_assigned")
        cases["assign_add_missing"] = lambda: tf.raw_ops.AssignAddVariableOp(resource=never, value=tf.ones((3,)))
        cases["gradient_descent_missing"] = lambda: tf.raw_ops.ResourceApplyGradientDescent(
            var=never, alpha=f(0.1), delta=tf.ones((3,)))
        cases["gather_missing"] = lambda: tf.raw_ops.ResourceGather(resource=never, indices=tf.constant([0]), dtype=tf.float32)
        for name, fn in cases.items():
            try:
                fn()
                out[name] = {"raised": False}
            except Exception as e:  # noqa: BLE001
                out[name] = {"raised": True, "type": type(e).__name__, "message": str(e)}
        out["still_works"] = {"raised": False, "value": [float(x) for x in v.assign_add(tf.ones((3,))).numpy()]}
    return out


def keras():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 20)).astype(np.float32)
    y = (x[:, :10].sum(axis=1) > 0).astype(np.int64)

    def train(device):
        tf.keras.utils.set_random_seed(1)
        with tf.device(device):
            m = tf.keras.Sequential([
                tf.keras.Input((20,)),
                tf.keras.layers.Dense(32, activation="relu"),
                tf.keras.layers.Dense(16, activation="tanh"),
                tf.keras.layers.Dense(2, activation="softmax"),
            ])
            m.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy", jit_compile=False)
            h = m.fit(x, y, batch_size=64, epochs=4, shuffle=False, verbose=0)
        return h.history["loss"], m.get_weights()

    cpu_loss, cpu_w = train(CPU)
    before = op_counts()
    dev_loss, dev_w = train(DEVICE)
    after = op_counts()
    ran = {op: n - before.get(op, 0) for op, n in after.items() if n > before.get(op, 0)}
    return {
        "device_loss": [float(v) for v in dev_loss],
        "cpu_loss": [float(v) for v in cpu_loss],
        "max_weight_diff": max(float(np.max(np.abs(a - b))) for a, b in zip(cpu_w, dev_w)),
        "nan": bool(any(np.isnan(w).any() for w in dev_w)),
        "device_ops": {op: ran.get(op, 0) for op in OPS + ["MatMul", "_MetalplugCluster"]},
    }


def race():
    """Values written into variables by an update that reads the output of a
    kernel the device ran. Everything is small and eager, so each op returns
    to Python before the next is issued."""
    rng = np.random.default_rng(0)
    x = np.arange(1, 257, dtype=np.float32)

    def accumulate(device):
        with tf.device(device):
            v = tf.Variable(tf.zeros(x.shape))
            c = tf.constant(x)
            for _ in range(4):
                v.assign_add(c * 2.0)  # the product is computed on the device
            return v.numpy()

    w0 = rng.standard_normal((16, 8)).astype(np.float32)
    xs = rng.standard_normal((32, 16)).astype(np.float32)
    ys = rng.standard_normal((32, 8)).astype(np.float32)

    def adam(device):
        with tf.device(device):
            w = tf.Variable(w0)
            opt = tf.keras.optimizers.Adam(0.05)
            a, b = tf.constant(xs), tf.constant(ys)
            for _ in range(4):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(tf.matmul(a, w) - b))
                opt.apply_gradients([(tape.gradient(loss, w), w)])
            return w.numpy(), [v.numpy() for v in opt.variables if v.shape == w.shape]

    want_acc = accumulate(CPU)
    got_acc = accumulate(DEVICE)
    want_w, want_slots = adam(CPU)
    got_w, got_slots = adam(DEVICE)
    acc_err, _, acc_nan = compare([got_acc], [want_acc])
    adam_err, _, adam_nan = compare([got_w] + got_slots, [want_w] + want_slots)
    return {
        "accumulate_max_error": acc_err,
        "accumulate_expected_first": float(want_acc[0]),
        "accumulate_got_first": float(got_acc[0]),
        "adam_max_error": adam_err,
        "nan": acc_nan or adam_nan,
        "device_ops": {op: n for op, n in op_counts().items() if op in OPS + ["Mul", "MatMul"]},
    }


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "ops"
    devices = load()
    if mode == "registry":
        emit({"devices": devices, "device_type": DEVICE_TYPE, "kernels": registry()})
    elif mode == "ops":
        emit(ops())
    elif mode == "errors":
        emit(errors())
    elif mode == "keras":
        emit(keras())
    elif mode == "race":
        emit(race())
    else:
        raise SystemExit("unknown mode " + mode)
