"""Recipes for the array and indexing ops of plugin/tf/lower/array.go:
counting and searching, the ops whose output sizes come from their data,
the numerics checks, the data-format maps, Bitcast, Empty, the in-place row
updates, TensorStridedSliceUpdate, the V1 forms of Reverse
and Gather, and the N-dimensional FFTs (which TensorFlow's CPU lacks: their
reference is numpy's fftn family); and the sparse segment reductions, their
gradients and SparseToDense of plugin/tf/lower/sparse.go. The random ops
of random2.go keep their recipes in recipes.py (stateless, multinomial)."""
import re

import numpy as np
import tensorflow as tf

from recipes import V, i32, i64

RECIPES = {}


def _add(fn, *ops):
    for op in ops:
        RECIPES[op] = fn


def _device():
    """The plugin's device, for a property that runs the op there itself."""
    for d in tf.config.list_logical_devices():
        if d.device_type != "CPU":
            return d.name
    raise RuntimeError("no device but the CPU")


def _error_of(fn):
    try:
        fn()
    except tf.errors.OpError as e:
        # The eager prefix names the device ("{{function_node ...}}"): noise.
        return type(e).__name__, re.sub(r"\{\{function_node [^}]*\}\}\s*", "", e.message).strip()
    return None, None


def raises_like_cpu(op, cases):
    """A property for ops that must fail on bad data: for each of cases
    (keyword arguments of tf.raw_ops.<op>), the device raises the error the
    CPU raises, of the same class, its message holding the CPU's whole (the
    plugin prefixes its errors with "metalplug: ")."""

    def prop(run1, run2, inputs):
        fn = getattr(tf.raw_ops, op)
        dev = _device()
        details = []
        for kw in cases:
            with tf.device("/device:CPU:0"):
                want = _error_of(lambda: fn(**kw))
            with tf.device(dev):
                got = _error_of(lambda: fn(**kw))
            if want[0] is None:
                return False, "the CPU raised nothing for %s" % kw
            if got[0] != want[0] or got[1] is None or want[1] not in got[1]:
                return False, "device raised %s, the CPU %s" % (got, want)
            details.append(want[1])
        return True, "; ".join(details)

    return prop


def bincount(c):
    t = c.T
    arr = i32([0, 1, 1, 3, 4, 4, 4, 6, 9])
    return [
        V("5 bins, weights, values past size", tol=2, arr=arr, size=i32(5), weights=c.x(9)),
        V("no weights", arr=arr, size=i32(7), weights=c.x(0, dtype=t)),
        V("size 0", arr=arr, size=i32(0), weights=c.x(0, dtype=t)),
        V("empty arr", arr=i32([]), size=i32(3), weights=c.x(0, dtype=t)),
        V("2-D arr and weights", tol=2, arr=i32([[0, 2, 2], [1, 0, 2]]), size=i32(4), weights=c.x(2, 3)),
    ]


def dense_bincount(c):
    it = c.dt("Tidx").as_numpy_dtype
    t = c.dt("T")
    vec = np.array([0, 1, 1, 3, 4, 4, 4, 6, 9], it)
    mat = np.array([[0, 2, 2, 5], [1, 0, 2, 2], [3, 3, 3, 0]], it)
    vs = []
    for binary in (False, True):
        b = " binary_output" if binary else ""
        vs += [
            V("vector, weights" + b, tol=2, input=vec, size=it(5), weights=c.x(9, dtype=t), binary_output=binary),
            V("matrix, no weights" + b, input=mat, size=it(4), weights=c.x(0, dtype=t), binary_output=binary),
            V("matrix, weights" + b, tol=2, input=mat, size=it(6), weights=c.x(3, 4, dtype=t), binary_output=binary),
            V("empty input" + b, input=np.zeros((0,), it), size=it(3), weights=c.x(0, dtype=t), binary_output=binary),
        ]
    return vs


def bucketize(c):
    bounds = [-2.0, -0.5, 0.0, 0.5, 1.0, 3.0]
    if c.is_float:
        specials = c.of([-2.0, -0.5, 0.0, -0.0, 0.5, 1.0, 3.0, np.inf, -np.inf, np.nan, 7.5, -9])
    else:
        specials = c.of([-2, -1, 0, 1, 3, 4, -9, 100])
    vs = [
        V("2x5 random", input=c.x(2, 5, lo=-3, hi=4), boundaries=bounds),
        V("values on the boundaries and specials", input=specials, boundaries=bounds),
        V("no boundaries", input=c.x(4, lo=-3, hi=3), boundaries=[]),
        V("one boundary, scalar", input=c.of(1), boundaries=[1.0]),
        V("empty", input=c.x(0, 3), boundaries=bounds),
    ]
    if c.T == tf.int64:
        vs.append(V("large int64", input=c.of([2**40, -2**40, 2**62]), boundaries=[-1e12, 0.0, 1.1e12, 5e18]))
    return vs


def histogram(c):
    vals = c.x(3, 7, lo=-1.5, hi=6.5)
    return [
        V("3x7 over [0, 5), 7 bins", values=vals, value_range=c.of([0.0, 5.0]), nbins=i32(7)),
        V("outside the range and infinities", values=c.of([-1.0, 0.0, 0.3, 1.0, 5.0, np.inf, -np.inf, 2.2]), value_range=c.of([0.0, 1.0]), nbins=i32(4)),
        V("one bin", values=c.x(5), value_range=c.of([-1.0, 1.0]), nbins=i32(1)),
        V("empty", values=c.x(0), value_range=c.of([0.0, 1.0]), nbins=i32(3)),
    ]


def bound(c):
    out = c.dt("out_type", tf.int32)
    lo = 0 if c.T.is_unsigned else -5
    s = np.sort(c.x(3, 6, lo=lo, hi=6), axis=1)
    s[0, 2] = s[0, 3]  # a repeat
    vals = c.x(3, 4, lo=lo - 1, hi=7)
    vals[0, :2] = s[0, 2], s[0, 0]  # equal to elements
    return [
        V("3 rows of 6, 4 values each", sorted_inputs=s, values=vals, out_type=out),
        V("below and above every element", sorted_inputs=np.sort(c.x(1, 5, lo=2, hi=4), axis=1), values=c.of([[lo, 9]]), out_type=out),
        V("no values", sorted_inputs=s, values=c.x(3, 0), out_type=out),
        V("no sorted inputs", sorted_inputs=c.x(2, 0), values=c.x(2, 3), out_type=out),
    ]


def unique_with_counts(c):
    out = c.dt("out_idx", tf.int32)
    if c.is_bool:
        return [V("bools", x=np.array([True, False, True, True]), out_idx=out), V("empty", x=np.zeros((0,), bool), out_idx=out)]
    vs = [V("repeats", x=c.of([3, 1, 3, 2, 1, 5, 3]), out_idx=out), V("empty", x=c.x(0), out_idx=out),
          V("all distinct", x=c.of([4, 2, 7]), out_idx=out)]
    if c.is_float:
        vs.append(V("zeros of both signs and NaNs", x=c.of([0.0, -0.0, np.nan, 1.5, np.nan, 0.0, np.inf, -np.inf, np.inf]), out_idx=out))
    return vs


def dynamic_stitch(c):
    return [
        V("two vectors, a repeated index (the later wins)", indices=[i32([0, 4, 2]), i32([1, 4, 3])], data=[c.x(3, 2), c.x(3, 2)]),
        V("2-D and scalar indices", indices=[i32([[0, 2], [5, 1]]), i32(3), i32([4])], data=[c.x(2, 2, 3), c.x(3), c.x(1, 3)]),
        V("one empty list", indices=[i32([1, 0]), i32([])], data=[c.x(2, 4), c.x(0, 4)]),
        V("all empty", indices=[i32([])], data=[c.x(0, 3)]),
    ]


def dynamic_partition(c):
    return [
        V("vector into 3, one empty", data=c.x(6), partitions=i32([2, 0, 2, 2, 0, 0]), num_partitions=3),
        V("2-D partitions over 3-D data", data=c.x(2, 3, 2), partitions=i32([[1, 0, 1], [1, 1, 0]]), num_partitions=2),
        V("one partition", data=c.x(4, 3), partitions=i32([0, 0, 0, 0]), num_partitions=1),
        V("empty data", data=c.x(0, 2), partitions=i32([]), num_partitions=2),
    ]


def check_numerics(c):
    dt = c.T.as_numpy_dtype
    bad = [np.array([1.0, np.nan], dt), np.array([np.inf, 2.0], dt), np.array([-np.inf, np.nan, np.inf], dt),
           np.array([[-np.inf, 0.5]], dt), np.array([-np.inf, np.nan], dt)]
    cases = [dict(tensor=x, message="sweep check") for x in bad]
    return [
        V("finite 2x3x4", tensor=c.x(2, 3, 4), message="sweep"),
        V("empty", tensor=c.x(0, 2), message="sweep"),
        V("extremes", tensor=c.of([c.T.max, c.T.min, 0.0, -0.0]), message="sweep"),
        V("NaN, +Inf, -Inf raise the CPU's error", tensor=c.x(3), message="sweep",
          prop=("NaN and infinities raise the CPU's InvalidArgumentError and message", raises_like_cpu(c.op, cases))),
    ]


def dim_map(c):
    nd = c.T.as_numpy_dtype
    return [
        V("NHWC to NCHW", x=np.array([-4, -3, -2, -1, 0, 1, 2, 3], nd)),
        V("NCHW to NHWC, 2-D", x=np.array([[0, 1], [2, 3]], nd), src_format="NCHW", dst_format="NHWC"),
        V("NDHWC to NCDHW", x=np.array([-5, -1, 0, 1, 2, 3, 4], nd), src_format="NDHWC", dst_format="NCDHW"),
        V("NHWC to HWNC, scalar", x=np.array(2, nd), src_format="NHWC", dst_format="HWNC"),
    ]


def vec_permute(c):
    nd = c.T.as_numpy_dtype
    return [
        V("NHWC to NCHW", x=np.array([7, 8, 9, 10], nd)),
        V("NCHW to NHWC, 4x2", x=np.array([[1, 2], [3, 4], [5, 6], [7, 8]], nd), src_format="NCHW", dst_format="NHWC"),
        V("spatial pair, NHWC to NWHC", x=np.array([5, 6], nd), src_format="NHWC", dst_format="NWHC"),
        V("spatial 2x2, NHWC to NWHC", x=np.array([[5, 6], [7, 8]], nd), src_format="NHWC", dst_format="NWHC"),
        V("NDHWC to NCDHW", x=np.array([1, 2, 3, 4, 5], nd), src_format="NDHWC", dst_format="NCDHW"),
        V("spatial triple, NDHWC to NWHDC", x=np.array([1, 2, 3], nd), src_format="NDHWC", dst_format="NWHDC"),
    ]


def bitcast(c):
    """Same-size types keep the shape; a wider source gains a last dim; a
    narrower one must end in the size ratio, which it loses."""
    to = c.dt("type", c.T)
    s, t = c.T.size, to.size
    shape = (3, t // s) if s < t else (3, 4)
    x = c.x(*shape, lo=-50, hi=50) if c.is_int else c.x(*shape)
    vs = [V("3x%d to %s" % (shape[1], to.name), input=x, type=to)]
    if c.is_int:
        ext = np.array([c.T.min, c.T.max, 0, 1] * (max(t // s, 1)), dtype=c.T.as_numpy_dtype)
        vs.append(V("extremes", input=ext.reshape(-1, t // s) if s < t else ext, type=to))
    elif s >= t:
        vs.append(V("specials", input=c.specials(), type=to))
    vs.append(V("empty", input=c.x(0, t // s) if s < t else c.x(0, 2), type=to))
    return vs


def empty(c):
    dt = c.dt("dtype")
    return [
        V("2x3, init", shape=i32([2, 3]), dtype=dt, init=True),
        V("3x4 uninitialised", shape=i32([3, 4]), dtype=dt, out_check={0: "shape"}),
        V("empty 0x3", shape=i32([0, 3]), dtype=dt, init=True),
        V("scalar, init", shape=i32([]), dtype=dt, init=True),
    ]


def _inplace_ref(op):
    """The CPU's kernel on a copy of x: it writes into x itself, which would
    reach the device's run."""

    def ref(kw):
        kw = dict(kw)
        kw["x"] = tf.raw_ops.DeepCopy(x=kw["x"])
        return [getattr(tf.raw_ops, op)(**kw)]

    return ("the CPU on a copy of x (it writes into x)", ref)


def inplace(c):
    ref = _inplace_ref(c.op)
    vs = [
        V("rows 3 and 0 of 5x3", ref=ref, x=c.x(5, 3), i=i32([3, 0]), v=c.x(2, 3)),
        V("1-D x", ref=ref, x=c.x(4), i=i32([1, 2, 0]), v=c.x(3)),
        V("no rows", ref=ref, x=c.x(3, 2), i=i32([]), v=c.x(0, 2)),
    ]
    if c.op != "InplaceUpdate":
        vs.append(V("a repeated row adds twice", ref=ref, x=c.x(4, 2), i=i32([1, 1, 3]), v=c.x(3, 2)))
    return vs


def strided_slice_update(c):
    def sl(name, shape, begin, end, strides, value_shape, **masks):
        return V(name, input=c.x(*shape), begin=i32(begin), end=i32(end), strides=i32(strides), value=c.x(*value_shape), **masks)

    return [
        sl("rows 1..4 of 5x4", (5, 4), [1, 0], [4, 4], [1, 1], (3, 4)),
        sl("stride 2 and a negative stride", (5, 6), [0, 5], [5, 0], [2, -2], (3, 3)),
        sl("shrink axis 0", (4, 3), [2, 0], [3, 3], [1, 1], (3,), shrink_axis_mask=1),
        sl("value broadcast over rows", (3, 4), [0, 0], [2, 4], [1, 1], (4,)),
        sl("ellipsis", (2, 3, 4), [0, 1], [0, 3], [1, 1], (2, 3, 2), ellipsis_mask=1),
        sl("a new axis", (3, 4), [0, 0, 1], [0, 2, 3], [1, 1, 1], (1, 2, 2), new_axis_mask=1),
        sl("masked ends", (4, 5), [1, 2], [0, 0], [1, 1], (3, 5), end_mask=3, begin_mask=2),
        sl("empty slice", (4, 3), [2, 0], [2, 3], [1, 1], (0, 3)),
    ]


def reverse_v1(c):
    return [
        V("dims F,T,T", tensor=c.x(2, 3, 4), dims=np.array([False, True, True])),
        V("dims T,F", tensor=c.x(3, 5), dims=np.array([True, False])),
        V("no dims", tensor=c.x(3, 2), dims=np.array([False, False])),
        V("scalar", tensor=c.x(), dims=np.zeros((0,), bool)),
        V("empty along a dim not reversed", tensor=c.x(3, 0), dims=np.array([True, False])),
    ]


def gather_v1(c):
    it = c.dt("Tindices").as_numpy_dtype
    return [
        V("2-D indices into 5x3", params=c.x(5, 3), indices=np.array([[4, 0], [2, 2]], it)),
        V("scalar index", params=c.x(4, 2, 2), indices=np.array(3, it)),
        V("1-D params", params=c.x(6), indices=np.array([5, 0, 5, 1], it)),
        V("empty indices", params=c.x(5, 3), indices=np.zeros((0,), it)),
    ]


def fftnd(c):
    kind = {"FFTND": np.fft.fftn, "IFFTND": np.fft.ifftn, "RFFTND": np.fft.rfftn, "IRFFTND": np.fft.irfftn}[c.op]
    out_t = np.float32 if c.op == "IRFFTND" else np.complex64

    def ref(kw):
        x = kw["input"].numpy()
        return [kind(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), s=list(kw["fft_length"].numpy()),
                     axes=list(kw["axes"].numpy())).astype(out_t)]

    cases = [
        ("axes 0,2, cropped and padded", (3, 4, 5), [2, 5], [0, 2]),
        ("last axis", (2, 6), [6], [-1]),
        ("four axes", (2, 3, 4, 2), [2, 3, 4, 2], [3, 1, 0, 2]),
        ("axes in reverse order", (4, 3, 5), [3, 4], [1, 0]),
        ("odd lengths", (5, 3, 7), [5, 3, 7], [0, 1, 2]),
    ]
    vs = []
    for name, shape, length, axes in cases:
        if c.op == "IRFFTND":
            real = c.x(*shape, dtype=tf.float32).astype(np.float64)
            x = np.fft.rfftn(real, s=length, axes=axes).astype(np.complex64)
        elif c.op == "RFFTND":
            x = c.x(*shape, dtype=tf.float32)
        else:
            x = c.x(*shape, dtype=tf.complex64)
        vs.append(V(name, tol=10, ref=("numpy's " + kind.__name__, ref), input=x, fft_length=i32(length), axes=i32(axes)))
    return vs


_add(bincount, "Bincount")
_add(dense_bincount, "DenseBincount")
_add(bucketize, "Bucketize")
_add(histogram, "HistogramFixedWidth")
_add(bound, "LowerBound", "UpperBound")
_add(unique_with_counts, "UniqueWithCounts")
_add(dynamic_stitch, "DynamicStitch")
_add(dynamic_partition, "DynamicPartition")
_add(check_numerics, "CheckNumerics", "CheckNumericsV2")
_add(dim_map, "DataFormatDimMap")
_add(vec_permute, "DataFormatVecPermute")
_add(bitcast, "Bitcast")
_add(empty, "Empty")
_add(inplace, "InplaceAdd", "InplaceSub", "InplaceUpdate")
_add(strided_slice_update, "TensorStridedSliceUpdate")
_add(reverse_v1, "Reverse")
_add(gather_v1, "Gather")
_add(fftnd, "FFTND", "IFFTND", "RFFTND", "IRFFTND")


def sparse_segment(c):
    """Sorted segment ids with an empty segment and a leading empty one,
    repeated indices, 1-D and 3-D data; num_segments past the last id."""
    it, st = c.dt("Tidx").as_numpy_dtype, c.dt("Tsegmentids").as_numpy_dtype
    with_num = c.op.endswith("WithNumSegments")

    def v(name, data, idx, seg, num=None, tol=2):
        kw = dict(data=data, indices=np.array(idx, it), segment_ids=np.array(seg, st))
        if with_num:
            kw["num_segments"] = i32(max(seg, default=-1) + 1 if num is None else num)
        return V(name, tol=tol, **kw)

    vs = [
        v("6 picks of 5 rows, a gap", c.x(5, 3), [0, 4, 4, 1, 2, 0], [0, 0, 1, 3, 3, 3]),
        v("leading empty segments, 3-D data", c.x(4, 2, 3), [3, 3, 0], [2, 2, 4]),
        v("1-D data, one pick per segment", c.x(6), [5, 1, 2], [0, 1, 2]),
        v("no picks", c.x(3, 2), [], []),
    ]
    if with_num:
        vs.append(v("num_segments past the last id", c.x(4, 2), [1, 2, 3], [0, 1, 1], num=5))
    return vs


def sparse_segment_grad(c):
    """The gradient at segments of one and of several rows, an empty one,
    indices repeated across segments; GradV2 lists the distinct indices."""
    it, st = c.dt("Tidx").as_numpy_dtype, c.dt("Tsegmentids").as_numpy_dtype
    out = "dense_output_dim0" if c.op.endswith("V2") else "output_dim0"

    def v(name, grad, idx, seg, dim0):
        return V(name, tol=2, **{"grad": grad, "indices": np.array(idx, it), "segment_ids": np.array(seg, st), out: i32(dim0)})

    vs = [
        v("4 segments, repeated indices", c.x(4, 3), [0, 4, 4, 1, 2, 0], [0, 0, 1, 3, 3, 3], 6),
        v("3-D gradient", c.x(3, 2, 2), [2, 0, 2], [0, 2, 2], 3),
        v("1-D gradient", c.x(3), [5, 1, 2], [0, 1, 2], 7),
    ]
    if out == "dense_output_dim0":
        # The V1 Grad's CPU kernel leaves its output uninitialised when
        # nothing is picked (measured on 2.21: stray denormals), so only
        # GradV2 is compared there.
        vs.append(v("no picks", c.x(2, 3), [], [], 4))
    return vs


def sparse_to_dense(c):
    it = c.dt("Tindices").as_numpy_dtype
    dv = c.of(True) if c.is_bool else c.of(7)
    return [
        V("3 of a 4x5", sparse_indices=np.array([[0, 1], [2, 4], [3, 0]], it), output_shape=np.array([4, 5], it), sparse_values=c.x(3), default_value=dv),
        V("1-D indices, a scalar value", sparse_indices=np.array([1, 3], it), output_shape=np.array([6], it), sparse_values=c.x(), default_value=dv),
        V("scalar index", sparse_indices=np.array(2, it), output_shape=np.array([4], it), sparse_values=c.x(1), default_value=dv),
        V("3-D output", sparse_indices=np.array([[0, 0, 1], [1, 2, 0]], it), output_shape=np.array([2, 3, 2], it), sparse_values=c.x(2), default_value=dv),
        V("no values", sparse_indices=np.zeros((0, 2), it), output_shape=np.array([2, 3], it), sparse_values=c.x(0), default_value=dv),
    ]


_add(sparse_segment, "SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN", "SparseSegmentSumWithNumSegments",
     "SparseSegmentMeanWithNumSegments", "SparseSegmentSqrtNWithNumSegments")
_add(sparse_segment_grad, "SparseSegmentSumGrad", "SparseSegmentMeanGrad", "SparseSegmentSqrtNGrad", "SparseSegmentSumGradV2",
     "SparseSegmentMeanGradV2", "SparseSegmentSqrtNGradV2")
_add(sparse_to_dense, "SparseToDense")
