"""Recipes of the image, patch, pooling-extra and RNN-cell families
(plugin/tf/lower/image.go, patches.go, pool2.go, rnn.go)."""
import numpy as np
import tensorflow as tf

from recipes import V, i32, i64, distinct, first, channels_first_ref, maxpool_out

RECIPES = {}


def _add(fn, *ops):
    for op in ops:
        RECIPES[op] = fn


CPU = "/device:CPU:0"


def ties(c, *shape, nan=False):
    """Small integers as floats: many ties in every window, so the CPU's
    choice among equal elements is what is compared; nan puts NaN in some."""
    v = c.rng.integers(-2, 3, size=shape).astype(np.float64)
    if nan:
        v[c.rng.random(shape) < 0.15] = np.nan
    return v.astype(c.T.as_numpy_dtype)


# ---------------------------------------------------------------------------
# Pooling extras (pool2.go)

WINDOWS = (("SAME 3x3 stride 2", [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
           ("VALID 2x2 stride 1", [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
           ("SAME 2x3 stride 2x1", [1, 2, 3, 1], [1, 2, 1, 1], "SAME"))


def cpu_argmax(x, ks, st, pad, batch):
    with tf.device(CPU):
        y, a = tf.raw_ops.MaxPoolWithArgmax(input=tf.constant(x.astype(np.float32)), ksize=ks, strides=st, padding=pad,
                                            Targmax=tf.int64, include_batch_in_index=batch)
    return y.numpy().astype(x.dtype), a.numpy()


def maxpool_with_argmax(c):
    vs = []
    for name, ks, st, pad in WINDOWS:
        vs.append(V(name, input=distinct(c, 2, 7, 6, 3), ksize=ks, strides=st, padding=pad))
        vs.append(V(name + ", batch in index", input=distinct(c, 2, 7, 6, 3), ksize=ks, strides=st, padding=pad, include_batch_in_index=True))
    vs += [
        V("ties", input=ties(c, 2, 7, 6, 3), ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME", include_batch_in_index=True),
        V("ties and NaN", input=ties(c, 2, 5, 6, 2, nan=True), ksize=[1, 2, 3, 1], strides=[1, 1, 2, 1], padding="SAME"),
        V("infinities", input=c.of(np.array([[-np.inf, -np.inf, 1, np.inf], [-np.inf, -np.inf, np.inf, 2]]).reshape(1, 2, 4, 1)),
          ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
        V("window of the whole image", input=distinct(c, 1, 4, 5, 2), ksize=[1, 4, 5, 1], strides=[1, 1, 1, 1], padding="VALID"),
    ]
    return vs  # the CPU rejects empty inputs


def maxpool_grad_with_argmax(c):
    vs = []
    for name, ks, st, pad in WINDOWS[:2]:
        for batch in (False, True):
            x = ties(c, 2, 7, 6, 3) if batch else distinct(c, 2, 7, 6, 3)
            y, a = cpu_argmax(x, ks, st, pad, batch)
            g = c.x(*y.shape) if c.op == "MaxPoolGradWithArgmax" else c.x(*x.shape)
            vs.append(V(name + (", batch in index, ties" if batch else ""), input=x, grad=g, argmax=a, ksize=ks, strides=st, padding=pad,
                        include_batch_in_index=batch, **_gradgrad_ref(c.op, batch)))
    return vs  # the CPU rejects empty inputs


def _gradgrad_ref(op, batch):
    """MaxPoolGradGradWithArgmax has no CPU kernel: each window's output is
    the gradient at the input element its argmax names (the batch added where
    the index leaves it out), read with numpy."""
    if op != "MaxPoolGradGradWithArgmax":
        return {}

    def ref(kw):
        g = np.asarray(kw["grad"].numpy())
        a = np.asarray(kw["argmax"].numpy()).astype(np.int64)
        if not batch:
            per = int(np.prod(g.shape[1:]))
            a = a + (np.arange(a.shape[0]) * per).reshape(-1, 1, 1, 1)
        return [g.reshape(-1)[a.reshape(-1)].reshape(a.shape)]

    return {"ref": ("the gradient at the argmax, by numpy", ref)}


def maxpool_grad_grad(c):
    """MaxPoolGradGrad(V2) and MaxPool3DGradGrad: orig_output from the CPU's
    pooling; data with ties too, where the first element equal to the max
    is the one the CPU routes."""
    three = c.op == "MaxPool3DGradGrad"
    if three:
        wins = (("SAME 2x3x3 stride 2", [1, 2, 3, 3, 1], [1, 2, 2, 2, 1], "SAME"), ("VALID 2x2x2", [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "VALID"))
        shape = (2, 3, 5, 4, 2)
    else:
        wins = WINDOWS
        shape = (2, 7, 6, 3)
    pool = "MaxPool3D" if three else "MaxPool"
    hosted = c.op == "MaxPoolGradGradV2"
    vs = []
    for name, ks, st, pad in wins:
        for kind, x in (("", distinct(c, *shape)), (", ties", ties(c, *shape)), (", ties and NaN", ties(c, *shape, nan=True))):
            y = maxpool_out(x, ks, st, pad, op=pool)
            kw = dict(orig_input=x, orig_output=y, grad=c.x(*x.shape), padding=pad)
            kw.update(ksize=i32(ks), strides=i32(st)) if hosted else kw.update(ksize=ks, strides=st)
            vs.append(V(name + kind, **kw))
    if not three:  # MaxPool3DGradGrad's CPU kernel rejects empty inputs
        x = c.x(0, *shape[1:])
        y = maxpool_out(x, wins[0][1], wins[0][2], "SAME", op=pool)
        kw = dict(orig_input=x, orig_output=y, grad=c.x(*x.shape), padding="SAME")
        kw.update(ksize=i32(wins[0][1]), strides=i32(wins[0][2])) if hosted else kw.update(ksize=wins[0][1], strides=wins[0][2])
        vs.append(V("empty batch", **kw))
    if not three and not hosted:
        x = ties(c, *shape)
        y = maxpool_out(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        vs.append(V("NCHW, ties", orig_input=first(x), orig_output=first(y), grad=first(c.x(*x.shape)), ksize=[1, 1, 2, 2],
                    strides=[1, 1, 2, 2], padding="SAME", data_format="NCHW",
                    ref=channels_first_ref(c.op, ["orig_input", "orig_output", "grad"])))
    return vs


def mirror_pad_grad(c):
    p = lambda v: np.array(v, dtype=c.dt("Tpaddings").as_numpy_dtype)
    return [
        V("REFLECT 2-D", input=c.x(7, 8), paddings=p([[1, 2], [3, 0]]), mode="REFLECT"),
        V("SYMMETRIC 3-D", input=c.x(6, 7, 5), paddings=p([[0, 3], [2, 1], [1, 2]]), mode="SYMMETRIC"),
        V("REFLECT widest", input=c.x(9, 4), paddings=p([[3, 2], [1, 1]]), mode="REFLECT"),
        V("SYMMETRIC widest", input=c.x(8, 3), paddings=p([[4, 0], [1, 1]]), mode="SYMMETRIC"),
        V("no padding", input=c.x(3, 4), paddings=p([[0, 0], [0, 0]]), mode="REFLECT"),
    ]  # the CPU rejects empty inputs


_add(maxpool_with_argmax, "MaxPoolWithArgmax")
_add(maxpool_grad_with_argmax, "MaxPoolGradWithArgmax", "MaxPoolGradGradWithArgmax")
_add(maxpool_grad_grad, "MaxPoolGradGrad", "MaxPoolGradGradV2", "MaxPool3DGradGrad")
_add(mirror_pad_grad, "MirrorPadGrad")


# ---------------------------------------------------------------------------
# Patches and morphology (patches.go)


def bool_via_uint8(op):
    """The CPU has no bool kernel of a data-movement op: the same call on
    uint8, read back as bool."""

    def ref(kw):
        kw = dict(kw)
        for k, x in kw.items():
            if isinstance(x, tf.Tensor) and x.dtype == tf.bool:
                kw[k] = tf.cast(x, tf.uint8)
        return [tf.cast(getattr(tf.raw_ops, op)(**kw), tf.bool).numpy()]

    return ("vs CPU on uint8", ref)


def extract_image_patches(c):
    vs = _extract_image_patches(c)
    if c.T == tf.bool:
        for v in vs:
            v.ref = bool_via_uint8(c.op)
    return vs


def _extract_image_patches(c):
    x = c.x(2, 7, 8, 3)
    return [
        V("VALID 3x3 stride 2", images=x, ksizes=[1, 3, 3, 1], strides=[1, 2, 2, 1], rates=[1, 1, 1, 1], padding="VALID"),
        V("SAME 2x3 stride 1x2 rates 2x1", images=x, ksizes=[1, 2, 3, 1], strides=[1, 1, 2, 1], rates=[1, 2, 1, 1], padding="SAME"),
        V("SAME 3x2 stride 3 rates 2", images=x, ksizes=[1, 3, 2, 1], strides=[1, 3, 3, 1], rates=[1, 2, 2, 1], padding="SAME"),
        V("1x1 window", images=x, ksizes=[1, 1, 1, 1], strides=[1, 2, 3, 1], rates=[1, 1, 1, 1], padding="VALID"),
        V("window larger than the image, VALID", images=c.x(1, 2, 3, 2), ksizes=[1, 3, 3, 1], strides=[1, 1, 1, 1], rates=[1, 1, 1, 1],
          padding="VALID"),
        V("empty batch", images=c.x(0, 4, 4, 2), ksizes=[1, 2, 2, 1], strides=[1, 1, 1, 1], rates=[1, 1, 1, 1], padding="SAME"),
    ]


def extract_volume_patches(c):
    x = c.x(2, 4, 5, 6, 2)
    return [
        V("VALID 2x2x3 stride 1x2x2", input=x, ksizes=[1, 2, 2, 3, 1], strides=[1, 1, 2, 2, 1], padding="VALID"),
        V("SAME 3x2x2 stride 2", input=x, ksizes=[1, 3, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="SAME"),
        V("empty batch", input=c.x(0, 3, 3, 3, 2), ksizes=[1, 2, 2, 2, 1], strides=[1, 1, 1, 1, 1], padding="SAME"),
    ]


DILATIONS = (("SAME 3x2 stride 1", (3, 2), [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
             ("VALID 2x3 stride 2x1 rates 1x2", (2, 3), [1, 2, 1, 1], [1, 1, 2, 1], "VALID"),
             ("SAME 3x3 stride 2 rates 2", (3, 3), [1, 2, 2, 1], [1, 2, 2, 1], "SAME"))


def dilation_out(x, f, st, rt, pad):
    with tf.device(CPU):
        return tf.raw_ops.Dilation2D(input=tf.constant(x.astype(np.float32)), filter=tf.constant(f.astype(np.float32)), strides=st,
                                     rates=rt, padding=pad).numpy()


def dilation(c):
    vs = []
    for name, (fh, fw), st, rt, pad in DILATIONS:
        for kind, x, f in (("", c.x(2, 7, 8, 3), c.x(fh, fw, 3)), (", ties", ties(c, 2, 7, 8, 3), ties(c, fh, fw, 3))):
            kw = dict(input=x, filter=f, strides=st, rates=rt, padding=pad)
            if c.op != "Dilation2D":
                kw["out_backprop"] = c.x(*dilation_out(x, f, st, rt, pad).shape)
            vs.append(V(name + kind, tol=2, **kw))
    x = c.of(np.array([-np.inf, np.inf, 1, np.nan, -np.inf, -np.inf, 2, 0, np.nan, -1, -np.inf, 3]).reshape(1, 3, 4, 1))
    f = c.of(np.array([0, 1, -1, 0.5]).reshape(2, 2, 1))
    kw = dict(input=x, filter=f, strides=[1, 1, 1, 1], rates=[1, 1, 1, 1], padding="SAME")
    if c.op != "Dilation2D":
        kw["out_backprop"] = c.x(1, 3, 4, 1)
    vs.append(V("infinities and NaN", **kw))
    return vs


_add(extract_image_patches, "ExtractImagePatches")
_add(extract_volume_patches, "ExtractVolumePatches")
_add(dilation, "Dilation2D", "Dilation2DBackpropInput", "Dilation2DBackpropFilter")


# ---------------------------------------------------------------------------
# Colour and crops (image.go)


def rgb_pixels(c, *shape):
    """Colours in [0, 1], with grey pixels, ties between the largest
    channels, black and white among them."""
    x = c.rng.uniform(0, 1, size=shape + (3,))
    flat = x.reshape(-1, 3)
    special = np.array([[0, 0, 0], [1, 1, 1], [0.5, 0.5, 0.5], [0.8, 0.8, 0.2], [0.3, 0.9, 0.9], [0.9, 0.1, 0.9],
                        [0.2, 0.2, 0.7], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.4, 0.1, 0.1]])
    flat[:len(special)] = special[:len(flat)]
    return x.astype(np.float64)


def color(c):
    if c.op == "RGBToHSV":
        x = rgb_pixels(c, 4, 5)
        y = c.rng.uniform(-0.5, 2, size=(7, 3))
    else:
        x = np.stack([c.rng.uniform(0, 1, (4, 5)), c.rng.uniform(0, 1, (4, 5)), c.rng.uniform(0, 1, (4, 5))], -1)
        x[0, :5] = [[0, 0.5, 0.5], [1, 0.5, 0.5], [1 / 6, 1, 1], [0.5, 0, 0.7], [0.999, 1, 0.2]]
        y = np.stack([c.rng.uniform(0, 1, 7), c.rng.uniform(0, 1, 7), c.rng.uniform(0, 2, 7)], -1)
    return [
        V("4x5 image", images=c.of(x)),
        V("one pixel", images=c.of(x[0, 0])),
        V("out of range", images=c.of(y)),
        V("empty", images=c.x(0, 3)),
    ]


def adjust_contrast(c):
    f = lambda v: np.float32(v)
    return [
        V("factor 1.7", tol=2, images=c.x(2, 5, 6, 3), contrast_factor=f(1.7)),
        V("factor -0.5, one image", tol=2, images=c.x(7, 4, 2), contrast_factor=f(-0.5)),
        V("factor 0", tol=2, images=c.x(1, 3, 3, 1), contrast_factor=f(0)),
        V("5-D", tol=2, images=c.x(2, 2, 3, 4, 3), contrast_factor=f(2.5)),
        V("empty batch", images=c.x(0, 4, 4, 3), contrast_factor=f(1.5)),
    ]


def adjust_color(c):
    key = "delta" if c.op == "AdjustHue" else "scale"
    vals = (0.3, -0.7, 1.0, -1.0, 0.0) if c.op == "AdjustHue" else (0.5, 2.0, 0.0, 10.0, 1.0)
    x = c.of(rgb_pixels(c, 2, 5, 6))
    vs = [V("%s %g" % (key, v), images=x, **{key: np.float32(v)}) for v in vals]
    vs.append(V("one 3-D image", images=c.of(rgb_pixels(c, 4, 3)), **{key: np.float32(vals[0])}))
    vs.append(V("empty", images=c.x(0, 2, 3), **{key: np.float32(vals[0])}))
    return vs


def crop_boxes(c, n, lo=-0.2, hi=1.2):
    """Boxes partly outside the image, flipped ones (y1 > y2) and one
    degenerate box among them."""
    b = c.rng.uniform(lo, hi, size=(n, 4))
    b[0] = [0.1, 0.2, 0.8, 0.9]
    if n > 2:
        b[2] = [0.7, 0.6, 0.2, 0.1]
    if n > 3:
        b[3] = [0.5, 0.5, 0.5, 0.5]
    return b.astype(np.float32)


CROPS = (("bilinear 5x4", "bilinear", (5, 4)), ("nearest 5x4", "nearest", (5, 4)), ("bilinear 1x1", "bilinear", (1, 1)),
         ("nearest 1x6", "nearest", (1, 6)), ("bilinear 6x1", "bilinear", (6, 1)))


def crop_and_resize(c):
    img = c.x(2, 7, 9, 3)
    vs = []
    for name, method, size in CROPS:
        kw = dict(boxes=crop_boxes(c, 6), box_ind=i32(c.rng.integers(0, 2, 6)), method=method)
        if c.op == "CropAndResize":
            kw.update(image=img, crop_size=i32(size))
            vs.append(V(name, **kw))
            vs.append(V(name + ", extrapolation -3.5", extrapolation_value=-3.5, **kw))
        elif c.op == "CropAndResizeGradImage":
            kw.update(grads=c.x(6, *size, 3, dtype=tf.float32), image_size=i32([2, 7, 9, 3]))
            vs.append(V(name, tol=4, **kw))
        elif method == "bilinear":
            kw.pop("method")
            kw.update(grads=c.x(6, *size, 3, dtype=tf.float32), image=img)
            vs.append(V(name, tol=8, **kw))
    n0 = dict(boxes=np.zeros((0, 4), np.float32), box_ind=i32(np.zeros(0)))
    if c.op == "CropAndResize":
        vs.append(V("no boxes", image=img, crop_size=i32([3, 3]), **n0))
        vs.append(V("boxes inside", image=img, boxes=crop_boxes(c, 4, 0, 1), box_ind=i32([1, 0, 1, 1]), crop_size=i32([3, 5])))
    elif c.op == "CropAndResizeGradImage":
        vs.append(V("no boxes", grads=c.x(0, 3, 3, 3, dtype=tf.float32), image_size=i32([2, 7, 9, 3]), **n0))
    else:
        vs.append(V("no boxes", grads=c.x(0, 3, 3, 3, dtype=tf.float32), image=img, **n0))
    return vs


_add(color, "RGBToHSV", "HSVToRGB")
_add(adjust_contrast, "AdjustContrastv2")
_add(adjust_color, "AdjustHue", "AdjustSaturation")
_add(crop_and_resize, "CropAndResize", "CropAndResizeGradImage", "CropAndResizeGradBoxes")


# ---------------------------------------------------------------------------
# The generic N-d convolution (convnd.go)


def conv_channels_first_ref(kwargs):
    """The CPU's Conv runs channels-last only: move the depth last in the
    input and the per-dim attrs, run, move it back."""
    kw = dict(kwargs)
    x = kw["input"]
    rank = len(x.shape)
    bd = kw.get("batch_dims", 1)
    to_last = list(range(bd)) + list(range(bd + 1, rank)) + [bd]
    to_first = list(range(bd)) + [rank - 1] + list(range(bd, rank - 1))
    n = rank - bd + 1  # entries of the per-dim attributes
    attr_last = [0] + list(range(2, n)) + [1]
    kw["input"] = tf.transpose(x, to_last)
    kw["data_format"] = "CHANNELS_LAST"
    for k in ("strides", "dilations"):
        if kw.get(k):
            kw[k] = [kw[k][i] for i in attr_last]
    if kw.get("explicit_paddings"):
        p = kw["explicit_paddings"]
        kw["explicit_paddings"] = [v for i in attr_last for v in p[2 * i:2 * i + 2]]
    return [tf.transpose(conv_groups_ref(kw)[0], to_first).numpy()]


def conv_groups_ref(kwargs):
    """The CPU's Conv has no groups: each group's channels convolved with
    its filters, concatenated."""
    kw = dict(kwargs)
    g = kw.pop("groups", 1)
    if g == 1:
        return [tf.raw_ops.Conv(**kw).numpy()]
    x, f = kw.pop("input"), kw.pop("filter")
    xs = tf.split(x, g, axis=-1)
    fs = tf.split(f, g, axis=-1)
    return [tf.concat([tf.raw_ops.Conv(input=a, filter=b, **kw) for a, b in zip(xs, fs)], -1).numpy()]


def conv_nd(c):
    x = c.x(2, 9, 10, 3)
    vs = [
        V("2-D SAME 3x3", tol=10, input=x, filter=c.x(3, 3, 3, 4), strides=[1, 1, 1, 1], padding="SAME"),
        V("2-D VALID strides 2x3 dilations 1x2", tol=10, input=x, filter=c.x(3, 2, 3, 4), strides=[1, 2, 3, 1], padding="VALID",
          dilations=[1, 1, 2, 1]),
        V("2-D EXPLICIT", tol=10, input=x, filter=c.x(2, 3, 3, 2), strides=[1, 1, 2, 1], padding="EXPLICIT",
          explicit_paddings=[0, 0, 1, 2, 0, 1, 0, 0]),
        V("3-D VALID", tol=10, input=c.x(2, 4, 5, 6, 2), filter=c.x(2, 2, 3, 2, 3), strides=[1, 1, 2, 1, 1], padding="VALID"),
        V("batch_dims 2", tol=10, input=c.x(2, 3, 7, 8, 3), filter=c.x(3, 3, 3, 4), strides=[1, 2, 1, 1], padding="SAME", batch_dims=2),
        V("groups 2", tol=10, input=c.x(2, 7, 8, 4), filter=c.x(3, 3, 2, 6), strides=[1, 1, 1, 1], padding="SAME", groups=2,
          ref=("vs CPU group by group", conv_groups_ref)),
        V("CHANNELS_FIRST 2-D", tol=10, input=first(x), filter=c.x(3, 3, 3, 4), strides=[1, 1, 2, 1], padding="EXPLICIT",
          explicit_paddings=[0, 0, 0, 0, 1, 0, 2, 1], dilations=[1, 1, 1, 2], data_format="CHANNELS_FIRST", ref=("vs CPU via channels-last", conv_channels_first_ref)),
        V("empty batch", input=c.x(0, 5, 5, 3), filter=c.x(3, 3, 3, 4), strides=[1, 1, 1, 1], padding="SAME"),
    ]
    return vs


_add(conv_nd, "Conv")


# ---------------------------------------------------------------------------
# RNN cells (rnn.go)


def lstm_weights(c, batch, inp, cell, time=None):
    x = c.x(time, batch, inp) if time is not None else c.x(batch, inp)
    return dict(x=x, cs_prev=c.x(batch, cell), h_prev=c.x(batch, cell),
                w=(c.x(inp + cell, 4 * cell, dtype=tf.float32) * 0.5).astype(c.T.as_numpy_dtype),
                wci=c.x(cell), wcf=c.x(cell), wco=c.x(cell), b=c.x(4 * cell))


def on_cpu(op, kw, T):
    """op on the CPU in float32, its outputs as T."""
    with tf.device(CPU):
        args = {k: (tf.constant(np.asarray(v).astype(np.float32)) if isinstance(v, np.ndarray) and v.dtype != np.int64 else v)
                for k, v in kw.items()}
        outs = getattr(tf.raw_ops, op)(**args)
    return [np.asarray(o.numpy()).astype(T.as_numpy_dtype) for o in outs]


LSTM_CELL = (("defaults", {}), ("peephole, cell_clip 0.5", dict(use_peephole=True, cell_clip=0.5)),
             ("no clip, forget_bias 0.3", dict(cell_clip=0.0, forget_bias=0.3)), ("clip -1 (none), peephole", dict(cell_clip=-1.0, use_peephole=True)))


def lstm_cell(c):
    vs = []
    for name, attrs in LSTM_CELL:
        kw = lstm_weights(c, 3, 4, 5)
        kw.update(attrs)
        vs.append(V(name, tol=4, **kw))
    return vs  # the CPU rejects an empty batch


def lstm_cell_grad(c):
    vs = []
    for peep in (False, True):
        kw = lstm_weights(c, 3, 4, 5)
        fwd = on_cpu("LSTMBlockCell", dict(kw, use_peephole=peep), c.T)
        g = dict(kw, use_peephole=peep, cs_grad=c.x(3, 5), h_grad=c.x(3, 5))
        g.update(zip(["i", "cs", "f", "o", "ci", "co"], fwd[:6]))
        vs.append(V("peephole" if peep else "no peephole", tol=4, **g))
    return vs


def block_lstm(c):
    v2 = c.op == "BlockLSTMV2"
    vs = []
    cases = (("6 steps", 6, {}), ("4 of 6 steps, peephole", 4, dict(use_peephole=True)),
             ("no steps", 0, {}), ("6 steps, cell_clip 0.4, peephole", 6, dict(cell_clip=0.4, use_peephole=True)))
    for name, n, attrs in cases:
        kw = lstm_weights(c, 3, 4, 5, time=6)
        kw.update(attrs, seq_len_max=i64(n))
        if not v2 and "cell_clip" not in attrs:
            kw["forget_bias"] = 0.7
        vs.append(V(name, tol=8, ref=("vs CPU, zero past seq_len_max", block_lstm_ref(c.op, n)), **kw))
    return vs


def block_lstm_ref(op, n):
    """The CPU zeroes cs and h past seq_len_max and leaves i, f, o, ci and
    co there uninitialised; the device zeroes all seven. The CPU's answer,
    with those steps zero."""

    def ref(kw):
        outs = [np.asarray(o.numpy()).copy() for o in getattr(tf.raw_ops, op)(**kw)]
        for o in outs:
            o[n:] = 0
        return outs

    return ref


def block_lstm_grad(c):
    fwd_op = "BlockLSTMV2" if c.op == "BlockLSTMGradV2" else "BlockLSTM"
    vs = []
    for name, n, peep in (("6 steps", 6, False), ("4 of 6 steps, peephole", 4, True), ("1 step, peephole", 1, True)):
        kw = lstm_weights(c, 3, 4, 5, time=6)
        kw["seq_len_max"] = i64(n)
        fwd = on_cpu(fwd_op, dict(kw, use_peephole=peep), c.T)
        g = dict(kw, use_peephole=peep, cs_grad=c.x(6, 3, 5), h_grad=c.x(6, 3, 5))
        g.update(zip(["i", "cs", "f", "o", "ci", "co", "h"], fwd))
        vs.append(V(name, tol=8, **g))
    return vs


def gru_weights(c, batch, inp, cell):
    return dict(x=c.x(batch, inp), h_prev=c.x(batch, cell), w_ru=c.x(inp + cell, 2 * cell) * 0.5, w_c=c.x(inp + cell, cell) * 0.5,
                b_ru=c.x(2 * cell), b_c=c.x(cell))


def gru_cell(c):
    vs = [V("3x4, cell 5", tol=4, **gru_weights(c, 3, 4, 5)), V("1x1, cell 1", tol=4, **gru_weights(c, 1, 1, 1)),
          V("empty batch", **gru_weights(c, 0, 4, 5))]
    if c.op == "GRUBlockCellGrad":
        for v in vs:
            fwd = on_cpu("GRUBlockCell", v.kw, c.T)
            v.kw.update(r=fwd[0], u=fwd[1], c=fwd[2], d_h=c.x(*fwd[3].shape))
    return vs


_add(lstm_cell, "LSTMBlockCell")
_add(lstm_cell_grad, "LSTMBlockCellGrad")
_add(block_lstm, "BlockLSTM", "BlockLSTMV2")
_add(block_lstm_grad, "BlockLSTMGrad", "BlockLSTMGradV2")
_add(gru_cell, "GRUBlockCell", "GRUBlockCellGrad")


# ---------------------------------------------------------------------------
# Non-max suppression (nms.go)


def nms_boxes(c, n):
    """Clustered boxes, so that many overlap; some flipped (y1 > y2), one of
    no area."""
    centre = c.rng.uniform(0, 4, size=(n, 2)).round(0) + c.rng.uniform(-0.3, 0.3, size=(n, 2))
    size = c.rng.uniform(0.5, 1.5, size=(n, 2))
    b = np.concatenate([centre - size / 2, centre + size / 2], 1)[:, [0, 1, 2, 3]]
    flip = c.rng.random(n) < 0.2
    b[flip] = b[flip][:, [2, 3, 0, 1]]
    if n > 3:
        b[3, 2:] = b[3, :2]
    return b.astype(np.float32)


def nms(c):
    f = np.float32
    n = 24
    scores = c.rng.uniform(0, 1, n).astype(np.float32)
    scores[5] = scores[9] = scores[11]  # ties go by index
    tied = np.full(n, 0.5, np.float32)
    cases = [("max 10, IOU 0.5", nms_boxes(c, n), scores, 10, 0.5, 0.3),
             ("max above the boxes, IOU 0.3", nms_boxes(c, n), scores, 40, 0.3, 0.0),
             ("max 0", nms_boxes(c, n), scores, 0, 0.5, 0.2),
             ("IOU 0 (any overlap suppresses)", nms_boxes(c, n), scores, 24, 0.0, -1.0),
             ("IOU 1, equal scores", nms_boxes(c, n), tied, 24, 1.0, 0.4),
             ("score threshold above every score", nms_boxes(c, 6), scores[:6], 5, 0.5, 2.0),
             ("no boxes", np.zeros((0, 4), np.float32), np.zeros(0, np.float32), 5, 0.5, 0.0)]
    vs = []
    for name, boxes, sc, m, iou_t, score_t in cases:
        kw = dict(boxes=boxes, scores=sc, max_output_size=i32(m), iou_threshold=f(iou_t))
        if c.op == "NonMaxSuppressionV2":
            if name.startswith("score threshold"):
                continue
            vs.append(V(name, **kw))
            continue
        kw["score_threshold"] = f(score_t)
        if c.op == "NonMaxSuppressionV4":
            vs.append(V(name + ", padded", pad_to_max_output_size=True, **kw))
        vs.append(V(name, **kw))
    return vs


_add(nms, "NonMaxSuppressionV2", "NonMaxSuppressionV3", "NonMaxSuppressionV4")


# ---------------------------------------------------------------------------
# Projective transforms (image.go)


def transforms(c, n, projective=True):
    """Per image: a rotation, a scale and a shift (output to input
    coordinates), with a small perspective term when projective."""
    out = []
    for _ in range(n):
        a = c.rng.uniform(-0.6, 0.6)
        s = c.rng.uniform(0.7, 1.4)
        t = [s * np.cos(a), -s * np.sin(a), c.rng.uniform(-3, 3), s * np.sin(a), s * np.cos(a), c.rng.uniform(-3, 3)]
        t += list(c.rng.uniform(-0.04, 0.04, 2)) if projective else [0, 0]
        out.append(t)
    return np.array(out, np.float32)


def projective(c):
    dt = c.dt("dtype")
    if dt.is_integer:
        img = c.x(2, 7, 9, 3, lo=0, hi=120)
    else:
        img = c.x(2, 7, 9, 3)
    v3 = c.op == "ImageProjectiveTransformV3"
    vs = []
    for interp in ("NEAREST", "BILINEAR"):
        for mode in ("CONSTANT", "REFLECT", "WRAP", "NEAREST"):
            kw = dict(images=img, transforms=transforms(c, 2), output_shape=i32([6, 11]), interpolation=interp, fill_mode=mode)
            if v3:
                kw["fill_value"] = np.float32(7.5)
            vs.append(V("%s, %s" % (interp, mode), tol=2, **kw))
    kw = dict(images=img, transforms=transforms(c, 1, projective=False), output_shape=i32([7, 9]), interpolation="BILINEAR")
    if v3:  # a negative fill is undefined for uint8 (C++'s float to unsigned conversion)
        kw["fill_value"] = np.float32(2.0 if dt.is_unsigned else -2.0)
    vs.append(V("one affine transform for the batch", tol=2, **kw))
    flat = np.array([[1, 0, 0, 0, 1, 0, 0, 0]], np.float32)
    kw = dict(images=c.x(1, 1, 5, 2) if not dt.is_integer else c.x(1, 1, 5, 2, lo=0, hi=50), transforms=flat, output_shape=i32([3, 5]),
              interpolation="NEAREST", fill_mode="REFLECT")
    if v3:
        kw["fill_value"] = np.float32(1.0)
    vs.append(V("one row, REFLECT", **kw))
    zero = np.array([[1, 0, 0, 0, 1, 0, -1, 0]], np.float32)
    kw = dict(images=img, transforms=zero, output_shape=i32([3, 4]), interpolation="BILINEAR")
    if v3:
        kw["fill_value"] = np.float32(3.0)
    vs.append(V("projection 0 at column 1", **kw))
    return vs


_add(projective, "ImageProjectiveTransformV2", "ImageProjectiveTransformV3")
