"""Model-size variants for the sweep: the recipes' small odd shapes never
reach the host driver's fast paths (the packed GEMM's blocks, the pairwise
row sums, the threaded loops), so each contraction, convolution, pooling,
normalisation and reduction gets variants at the sizes models run: batches
of 1 to 33, channels up to 512, spatial sizes 1 to 64, and matrix sides past
every blocking boundary of the packed GEMM (gemm.go: 6-row and 16-column
panels, 96-row blocks, 256-column blocks, 256-deep packing, runs of 128).

SIZES maps an op to a function of the recipe's Ctx returning variants, as
recipes.RECIPES does; recipes.variants_for appends them to the op's own.
Their reference is the CPU in float64 where it has the kernel (else
float32): at these sizes the CPU's float32 and narrower kernels, rounding as
they accumulate, are further from the exact answer than the tolerance.
"""
import numpy as np

import recipes
from recipes import i32


def V(name, **kw):
    """A model-size variant: recipes.V with the wide reference."""
    return recipes.V(name, wide=True, **kw)

# Past the blocking boundaries: M past a 96-row block, K past the 256-deep
# packing and the 128 runs, N past a 256-column block and not a multiple of
# the 16-column panel.
M, K, N = 97, 257, 259


def matmul(c):
    return [
        V("model size %dx%d by %dx%d" % (M, K, K, N), tol=20, a=c.x(M, K), b=c.x(K, N)),
        V("model size batch 1, 1x600 by 600x512", tol=20, a=c.x(1, 600), b=c.x(600, 512)),
        V("model size transpose_b 33x129 by (17x129)^T", tol=20, a=c.x(33, 129), b=c.x(17, 129), transpose_b=True),
    ]


def batch_matmul(c):
    if c.op == "BatchMatMulV3":
        ta = c.dt("Ta")
        tb = c.dt("Tb", ta)
        vs = [V("model size 3x%dx%d by 3x%dx33" % (M, K, K), tol=20, x=c.x(3, M, K, dtype=ta), y=c.x(3, K, 33, dtype=tb))]
        if "Tout" not in c.case.types:
            for v in vs:
                v.kw["Tout"] = ta
        return vs
    return [
        V("model size 3x%dx%d by 3x%dx33" % (M, K, K), tol=20, x=c.x(3, M, K), y=c.x(3, K, 33)),
        V("model size attention 33x1x129 by 33x129x7", tol=20, x=c.x(33, 1, 129), y=c.x(33, 129, 7)),
    ]


def einsum(c):
    return [V("model size bij,bjk->bik", tol=20, inputs=[c.x(2, M, K), c.x(2, K, 33)], equation="bij,bjk->bik")]


def fused_matmul(c):
    from recipes import fused_attrs, unfused_ref

    return [V("model size 33x512 by 512x257, bias, Relu", tol=20, a=c.x(33, 512), b=c.x(512, 257), args=[c.x(257)],
              **fused_attrs("Relu"), ref=unfused_ref(c.op))]


def conv2d(c):
    return [
        V("model size stem 1x64x64x3, 3x3 stride 2 -> 32", tol=20, input=c.x(1, 64, 64, 3), filter=c.x(3, 3, 3, 32),
          strides=[1, 2, 2, 1], padding="SAME"),
        V("model size pointwise 33x7x7x512 -> 64", tol=20, input=c.x(33, 7, 7, 512), filter=c.x(1, 1, 512, 64),
          strides=[1, 1, 1, 1], padding="VALID"),
        V("model size 4x15x15x96, 3x3 -> 97", tol=20, input=c.x(4, 15, 15, 96), filter=c.x(3, 3, 96, 97),
          strides=[1, 1, 1, 1], padding="SAME"),
    ]


def conv2d_backprop_input(c):
    return [
        V("model size 4x15x15x96, 3x3 <- 97", tol=20, input_sizes=i32([4, 15, 15, 96]), filter=c.x(3, 3, 96, 97),
          out_backprop=c.x(4, 15, 15, 97), strides=[1, 1, 1, 1], padding="SAME"),
        V("model size stem, stride 2", tol=20, input_sizes=i32([1, 64, 64, 3]), filter=c.x(3, 3, 3, 32),
          out_backprop=c.x(1, 32, 32, 32), strides=[1, 2, 2, 1], padding="SAME"),
    ]


def conv2d_backprop_filter(c):
    return [
        V("model size 4x15x15x96, 3x3, 97", tol=40, input=c.x(4, 15, 15, 96), filter_sizes=i32([3, 3, 96, 97]),
          out_backprop=c.x(4, 15, 15, 97), strides=[1, 1, 1, 1], padding="SAME"),
        V("model size stem, stride 2", tol=40, input=c.x(1, 64, 64, 3), filter_sizes=i32([3, 3, 3, 32]),
          out_backprop=c.x(1, 32, 32, 32), strides=[1, 2, 2, 1], padding="SAME"),
    ]


def depthwise(c):
    return [
        V("model size 8x32x32x144, 3x3", tol=20, input=c.x(8, 32, 32, 144), filter=c.x(3, 3, 144, 1),
          strides=[1, 1, 1, 1], padding="SAME"),
        V("model size 1x64x64x32, 3x3 stride 2", tol=20, input=c.x(1, 64, 64, 32), filter=c.x(3, 3, 32, 1),
          strides=[1, 2, 2, 1], padding="SAME"),
    ]


def depthwise_backprop_input(c):
    return [V("model size 8x32x32x144, 3x3", tol=20, input_sizes=i32([8, 32, 32, 144]), filter=c.x(3, 3, 144, 1),
              out_backprop=c.x(8, 32, 32, 144), strides=[1, 1, 1, 1], padding="SAME")]


def depthwise_backprop_filter(c):
    return [V("model size 8x32x32x144, 3x3", tol=40, input=c.x(8, 32, 32, 144), filter_sizes=i32([3, 3, 144, 1]),
              out_backprop=c.x(8, 32, 32, 144), strides=[1, 1, 1, 1], padding="SAME")]


def fused_conv2d(c):
    from recipes import fused_attrs, unfused_ref

    return [V("model size 4x15x15x96, 3x3 -> 97, bias, Relu6", tol=20, input=c.x(4, 15, 15, 96), filter=c.x(3, 3, 96, 97),
              args=[c.x(97)], host_args=[], num_args=1, strides=[1, 1, 1, 1], padding="SAME", **fused_attrs("Relu6"),
              ref=unfused_ref(c.op))]


def conv3d(c):
    return [V("model size 1x9x16x16x33, 3x3x3 -> 17", tol=20, input=c.x(1, 9, 16, 16, 33), filter=c.x(3, 3, 3, 33, 17),
              strides=[1, 1, 1, 1, 1], padding="SAME")]


def conv3d_backprop_input(c):
    return [V("model size 1x9x16x16x33, 3x3x3 <- 17", tol=20, input_sizes=i32([1, 9, 16, 16, 33]),
              filter=c.x(3, 3, 3, 33, 17), out_backprop=c.x(1, 9, 16, 16, 17), strides=[1, 1, 1, 1, 1], padding="SAME")]


def conv3d_backprop_filter(c):
    return [V("model size 1x9x16x16x33, 3x3x3, 17", tol=40, input=c.x(1, 9, 16, 16, 33), filter_sizes=i32([3, 3, 3, 33, 17]),
              out_backprop=c.x(1, 9, 16, 16, 17), strides=[1, 1, 1, 1, 1], padding="SAME")]


def pool(c):
    key = c.od.input_arg[0].name
    return [
        V("model size 33x64x64x16, 3x3 stride 2", tol=2, **{key: c.x(33, 64, 64, 16)}, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1],
          padding="SAME"),
        V("model size global 1x7x7x512", tol=2, **{key: c.x(1, 7, 7, 512)}, ksize=[1, 7, 7, 1], strides=[1, 1, 1, 1],
          padding="VALID"),
    ]


def distinct(c, *shape):
    """Data without ties at model sizes, where the dtype has room for them
    (float32 and the wide integers); None otherwise: which of equal maxima
    wins is not TensorFlow's promise, and float16 and bfloat16 cannot hold
    33,000 distinct values in a useful range."""
    n = int(np.prod(shape))
    p = c.rng.permutation(n) - n // 2
    if c.T.name == "float32":
        return (p / 16.0).reshape(shape).astype(np.float32)  # sixteenths: exact below 2^20
    if c.T.name in ("int32", "int64"):
        return p.reshape(shape).astype(c.T.as_numpy_dtype)
    return None


def pool_grad(c):
    from recipes import maxpool_out

    ksize, strides = [1, 3, 3, 1], [1, 2, 2, 1]
    if c.op == "MaxPoolGrad":
        x = distinct(c, 33, 32, 32, 16)
        if x is None:
            return []
        y = maxpool_out(x, ksize, strides, "SAME")
        return [V("model size 33x32x32x16, 3x3 stride 2", tol=2, orig_input=x, orig_output=y, grad=c.x(*y.shape),
                  ksize=ksize, strides=strides, padding="SAME")]
    return [V("model size 33x32x32x16, 3x3 stride 2", tol=4, orig_input_shape=i32([33, 32, 32, 16]), grad=c.x(33, 16, 16, 16),
              ksize=ksize, strides=strides, padding="SAME")]


def pool3d(c):
    return [V("model size 2x8x16x16x33, 2x3x3 stride 2", tol=2, input=c.x(2, 8, 16, 16, 33), ksize=[1, 2, 3, 3, 1],
              strides=[1, 2, 2, 2, 1], padding="SAME")]


def batch_norm(c):
    U = c.dt("U") if "U" in c.types else c.T
    ch = 512
    x = c.x(33, 8, 8, ch)
    scale, offset = c.x(ch, dtype=U), c.x(ch, dtype=U)
    mean, var = c.x(ch, dtype=U), c.x(ch, lo=0.5, hi=2.0, dtype=U)
    empty = c.x(0, dtype=U)
    reserve = {"reserve_space_1": "skip", "reserve_space_2": "skip", "reserve_space_3": "skip"}
    return [
        V("model size training 33x8x8x512", tol=20, out_check=reserve, x=x, scale=scale, offset=offset, mean=empty,
          variance=empty, is_training=True),
        V("model size inference 33x8x8x512", tol=10, out_check=reserve, x=x, scale=scale, offset=offset, mean=mean,
          variance=var, is_training=False),
    ]


def batch_norm_grad(c):
    U = c.dt("U") if "U" in c.types else c.T
    ch = 512
    x = c.x(33, 8, 8, ch)
    xf = x.astype(np.float64)
    kw = dict(y_backprop=c.x(33, 8, 8, ch), x=x, scale=c.x(ch, dtype="float32" if c.op == "FusedBatchNormGradV3" else U),
              reserve_space_1=xf.mean(axis=(0, 1, 2)).astype(U.as_numpy_dtype),
              reserve_space_2=xf.var(axis=(0, 1, 2)).astype(U.as_numpy_dtype))
    if c.op == "FusedBatchNormGradV3":
        kw["reserve_space_3"] = c.x(0, dtype=U)
    out = {"reserve_space_3": "skip", "reserve_space_4": "skip", "reserve_space_5": "skip"}
    return [V("model size training 33x8x8x512", tol=40, out_check=out, is_training=True, **kw)]


def softmax(c):
    key = c.od.input_arg[0].name
    return [V("model size 33x1000", tol=2, **{key: c.x(33, 1000) * c.of(4)})]


def xent(c):
    import tensorflow as tf

    labels = tf.nn.softmax(c.x(33, 1000, dtype=tf.float32)).numpy().astype(c.T.as_numpy_dtype)
    return [V("model size 33x1000", tol=4, features=c.x(33, 1000) * c.of(4), labels=labels)]


def sparse_xent(c):
    import tensorflow as tf

    lt = c.dt("Tlabels") if "Tlabels" in c.types else tf.int64
    return [V("model size 33x1000", tol=4, features=c.x(33, 1000) * c.of(4), labels=c.x(33, lo=0, hi=999, dtype=lt))]


def bias_add(c):
    return [V("model size 33x32x32x257", value=c.x(33, 32, 32, 257), bias=c.x(257))]


def bias_add_grad(c):
    return [
        V("model size 33x32x32x257", tol=20, out_backprop=c.x(33, 32, 32, 257)),
        V("model size NCHW 8x512x7x7", tol=20, out_backprop=c.x(8, 512, 7, 7), data_format="NCHW"),
    ]


def l2loss(c):
    # Scaled so that the float16 answer (half the sum of 2 million squares)
    # stays below float16's largest value.
    return [V("model size 33x64x64x16", tol=20, t=c.x(33, 64, 64, 16) * c.of(0.1))]


def reduction(lo=None, hi=None):
    def recipe(c):
        key = c.od.input_arg[0].name
        dt = c.argdt(key)
        x = c.x(33, 64, 64, 16, lo=lo if not dt.is_integer else None, hi=hi if not dt.is_integer else None, dtype=dt)
        return [
            V("model size 33x64x64x16 over all but channels", tol=20, **{key: x}, reduction_indices=i32([0, 1, 2])),
            V("model size 33x64x64x16 over channels", tol=20, **{key: x}, reduction_indices=i32([3])),
            V("model size 33x64x64x16 over spatial", tol=20, **{key: x}, reduction_indices=i32([1, 2])),
            V("model size 33x64x64x16 over all", tol=20, **{key: x}, reduction_indices=i32([0, 1, 2, 3])),
        ]

    return recipe


def arg_reduce(c):
    rows, cols = distinct(c, 33, 1000), distinct(c, 4097, 33)
    if rows is None:
        return []
    return [V("model size 33x1000 axis 1", input=rows, dimension=i32(1)),
            V("model size 4097x33 axis 0", input=cols, dimension=i32(0))]


def cumulative(c):
    lo, hi = (0.999, 1.001) if c.op == "Cumprod" else (None, None)
    if c.is_int:
        lo, hi = (0, 1) if c.op == "Cumprod" else (None, None)
    return [V("model size 33x4097 axis 1", tol=20, x=c.x(33, 4097, lo=lo, hi=hi), axis=i32(1)),
            V("model size 4097x33 axis 0", tol=20, x=c.x(4097, 33, lo=lo, hi=hi), axis=i32(0))]


def pool_v2(c):
    return [V("model size 33x64x64x16, 3x3 stride 2", tol=2, input=c.x(33, 64, 64, 16), ksize=i32([1, 3, 3, 1]),
              strides=i32([1, 2, 2, 1]), padding="SAME")]


def maxpool_grad_v2(c):
    from recipes import maxpool_out

    x = distinct(c, 33, 32, 32, 16)
    if x is None:
        return []
    ksize, strides = [1, 3, 3, 1], [1, 2, 2, 1]
    y = maxpool_out(x, ksize, strides, "SAME")
    return [V("model size 33x32x32x16, 3x3 stride 2", tol=2, orig_input=x, orig_output=y, grad=c.x(*y.shape),
              ksize=i32(ksize), strides=i32(strides), padding="SAME")]


def lrn(c):
    return [V("model size 8x28x28x192", tol=4, input=c.x(8, 28, 28, 192), depth_radius=2, bias=1.0, alpha=1e-4, beta=0.75)]


def segment(c):
    """Many rows into many segments (an embedding gradient's shape)."""
    import tensorflow as tf

    it = c.dt("Tindices") if "Tindices" in c.types else tf.int32
    lo, hi = (0.999, 1.001) if c.op.endswith("Prod") else (None, None)
    if c.is_int:
        lo, hi = (-1, 1) if c.op.endswith("Prod") else (-20, 20)
    rows, segments = 4097, 513
    # Every segment named: an empty one holds the dtype's own extreme, which
    # the float64 reference cannot give (the recipe's small variants have
    # empty segments).
    ids = np.sort(np.concatenate([np.arange(segments), c.rng.integers(0, segments, size=rows - segments)])).astype(it.as_numpy_dtype)
    data = c.x(rows, 33, lo=lo, hi=hi)
    if c.op.startswith("Unsorted"):
        return [V("model size 4097 rows into 513", tol=20, data=data, segment_ids=c.rng.permutation(ids),
                  num_segments=i32(segments))]
    return [V("model size 4097 sorted rows into 513", tol=20, data=data, segment_ids=ids)]


SIZES = {}


def _add(fn, *ops):
    for op in ops:
        SIZES[op] = fn


_add(matmul, "MatMul")
_add(batch_matmul, "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")
_add(einsum, "Einsum")
_add(fused_matmul, "_FusedMatMul")
_add(conv2d, "Conv2D")
_add(conv2d_backprop_input, "Conv2DBackpropInput")
_add(conv2d_backprop_filter, "Conv2DBackpropFilter")
_add(depthwise, "DepthwiseConv2dNative")
_add(depthwise_backprop_input, "DepthwiseConv2dNativeBackpropInput")
_add(depthwise_backprop_filter, "DepthwiseConv2dNativeBackpropFilter")
_add(fused_conv2d, "_FusedConv2D")
_add(conv3d, "Conv3D")
_add(conv3d_backprop_input, "Conv3DBackpropInputV2")
_add(conv3d_backprop_filter, "Conv3DBackpropFilterV2")
_add(pool, "MaxPool", "AvgPool")
_add(pool_v2, "MaxPoolV2")
_add(maxpool_grad_v2, "MaxPoolGradV2")
_add(lrn, "LRN")
_add(segment, "SegmentSum", "SegmentMax", "SegmentMin", "SegmentMean", "SegmentProd",
     "UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd")
_add(pool_grad, "MaxPoolGrad", "AvgPoolGrad")
_add(pool3d, "MaxPool3D", "AvgPool3D")
_add(batch_norm, "FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")
_add(batch_norm_grad, "FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3")
_add(softmax, "Softmax", "LogSoftmax")
_add(xent, "SoftmaxCrossEntropyWithLogits")
_add(sparse_xent, "SparseSoftmaxCrossEntropyWithLogits")
_add(bias_add, "BiasAdd", "BiasAddV1")
_add(bias_add_grad, "BiasAddGrad")
_add(l2loss, "L2Loss")
_add(reduction(), "Sum", "Mean", "Max", "Min", "EuclideanNorm")
_add(reduction(lo=0.999, hi=1.001), "Prod")
_add(reduction(), "All", "Any")
_add(arg_reduce, "ArgMax", "ArgMin")
_add(cumulative, "Cumsum", "Cumprod", "CumulativeLogsumexp")


def variants(ctx):
    """The model-size variants of ctx's op (none for an op without any)."""
    fn = SIZES.get(ctx.op)
    return fn(ctx) if fn else []
