"""Recipes of the sparse-tensor family (plugin/tf/lower/sparse_tensor.go):
a SparseTensor is int64 indices [nnz, rank], values [nnz] and an int64
dense_shape [rank]. Each op gets unsorted indices where it allows them,
duplicate indices where it defines them, no entries at all (nnz 0), empty
rows, ranks 1 to 3, and indices out of bounds where the op accepts them.
Inputs on which TensorFlow raises (an index out of bounds where it checks,
malformed shapes) are tested in plugin/tf/lower/sparse_tensor_test.go: the
sweep compares results, and the CPU gives none for them.
"""
import numpy as np
import tensorflow as tf

from recipes import V, i64

RECIPES = {}


def _add(fn, *ops):
    for op in ops:
        RECIPES[op] = fn


def ind(rows, rank=None):
    a = np.array(rows, dtype=np.int64)
    if a.size == 0:
        return np.zeros((0, rank or 0), dtype=np.int64)
    return a


def random_indices(c, nnz, shape, unique=True):
    """nnz distinct (unless not unique) random indices into shape, in random
    order."""
    size = int(np.prod(shape))
    flat = c.rng.choice(size, size=nnz, replace=not unique)
    return np.stack(np.unravel_index(flat, shape), axis=1).astype(np.int64)


def values(c, n):
    if c.T == tf.bool:
        return c.x(n)
    return c.x(n, lo=-4, hi=4) if c.is_float else c.x(n)


def sparse_dense_matmul(c):
    it = c.dt("Tindices").as_numpy_dtype
    tol = 4 if c.T == tf.float32 else 8

    def mm(name, rows, a_shape, b, **kw):
        a = np.array(rows, dtype=it).reshape(-1, 2)
        return V(name, tol=tol, a_indices=a, a_values=values(c, len(a)), a_shape=i64(a_shape), b=b, **kw)

    unsorted = [[2, 1], [0, 3], [2, 0], [0, 0], [1, 2]]
    vs = [
        mm("3x4 unsorted by 4x5", unsorted, [3, 4], c.x(4, 5)),
        mm("duplicates add up", [[1, 1], [0, 2], [1, 1], [1, 1]], [2, 3], c.x(3, 4)),
        mm("adjoint_a", unsorted, [3, 4], c.x(3, 5), adjoint_a=True),
        mm("adjoint_b", unsorted, [3, 4], c.x(5, 4), adjoint_b=True),
        mm("adjoint_a and adjoint_b", unsorted, [3, 4], c.x(2, 3), adjoint_a=True, adjoint_b=True),
        mm("empty rows, a row vector of B", [[0, 1], [4, 0]], [5, 2], c.x(2, 1)),
        mm("no entries", [], [3, 4], c.x(4, 5)),
        mm("no rows", [], [0, 4], c.x(4, 3)),
        mm("B without columns", [[1, 1]], [2, 3], c.x(3, 0)),
        mm("inner dimension 0", [], [3, 0], c.x(0, 2)),
    ]
    a = random_indices(c, 120, (40, 50)).astype(it)
    vs.append(V("40x50 with 120 entries by 50x33", tol=tol * 2, a_indices=a, a_values=values(c, 120), a_shape=i64([40, 50]), b=c.x(50, 33)))
    return vs


def sparse_reshape(c):
    def rs(name, rows, shape, new):
        return V(name, input_indices=ind(rows, len(shape)), input_shape=i64(shape), new_shape=i64(new))

    return [
        rs("2x4 to -1x2, unsorted", [[1, 3], [0, 1], [1, 2]], [2, 4], [-1, 2]),
        rs("rank 1 to rank 3", [[5], [0], [23], [11]], [24], [2, 3, 4]),
        rs("rank 3 to rank 1", [[1, 2, 3], [0, 0, 1], [1, 0, 0]], [2, 3, 4], [-1]),
        rs("rank 3 to 4x-1x3", [[1, 2, 3], [0, 0, 1], [1, 0, 0], [0, 2, 2]], [2, 3, 4], [4, -1, 3]),
        rs("the same shape", [[0, 1], [1, 0]], [2, 4], [2, 4]),
        rs("indices out of bounds map as the CPU maps them", [[0, 9], [-1, 3]], [2, 4], [4, 2]),
        rs("duplicates", [[1, 1], [1, 1]], [2, 3], [3, 2]),
        rs("no entries", [], [2, 4], [-1, 2]),
        rs("no entries, empty shape", [], [0, 4], [-1, 2]),
        rs("to rank 0", [[0, 0]], [1, 1], []),
    ]


def sparse_slice(c):
    def sl(name, rows, shape, start, size):
        return V(name, indices=ind(rows, len(shape)), values=values(c, len(rows)), shape=i64(shape), start=i64(start), size=i64(size))

    r3 = [[1, 2, 3], [0, 0, 1], [1, 0, 0], [0, 2, 2], [1, 1, 1]]
    return [
        sl("rank 2, unsorted", [[2, 3], [0, 1], [1, 2], [2, 0], [1, 0]], [3, 4], [1, 0], [2, 3]),
        sl("rank 1", [[5], [0], [3], [4]], [7], [2], [3]),
        sl("rank 3", r3, [2, 3, 4], [0, 1, 1], [2, 2, 3]),
        sl("duplicates", [[1, 1], [1, 1], [0, 1]], [2, 3], [1, 0], [1, 3]),
        sl("past the end: the rest of the dimension", [[0, 1], [1, 3]], [2, 4], [1, 2], [5, 9]),
        sl("start past the end", [[0, 1], [1, 3]], [2, 4], [3, 0], [2, 2]),
        sl("negative start", [[0, 1], [1, 3]], [2, 4], [-1, 0], [2, 2]),
        sl("size 0", [[0, 1], [1, 3]], [2, 4], [0, 0], [0, 4]),
        sl("nothing inside", [[0, 1], [1, 3]], [2, 4], [0, 2], [1, 1]),
        sl("no entries", [], [2, 4], [0, 1], [2, 2]),
        sl("indices out of bounds", [[0, 1], [5, 3], [-1, 0]], [2, 4], [0, 0], [9, 9]),
    ]


def sparse_slice_grad(c):
    def sg(name, rows, start, out_rows, rank):
        out = ind(out_rows, rank)
        return V(name, backprop_val_grad=values(c, len(out)), input_indices=ind(rows, rank), input_start=i64(start), output_indices=out)

    return [
        sg("rank 2", [[0, 1], [1, 3], [1, 2], [2, 2]], [1, 1], [[0, 2], [0, 1], [1, 1]], 2),
        sg("rank 1", [[0], [3], [4], [6]], [3], [[0], [1]], 1),
        sg("rank 3", [[1, 2, 3], [0, 0, 1], [1, 0, 0]], [1, 0, 0], [[0, 2, 3], [0, 0, 0]], 3),
        sg("duplicates", [[1, 1], [1, 1], [0, 1]], [1, 0], [[0, 1], [0, 1]], 2),
        sg("nothing in the slice", [[0, 1], [1, 3]], [0, 0], [], 2),
        sg("no entries", [], [0, 0], [], 2),
    ]


def sparse_reorder(c):
    def ro(name, rows, shape, vals=None):
        return V(name, input_indices=ind(rows, len(shape)), input_values=values(c, len(rows)) if vals is None else vals, input_shape=i64(shape))

    dup_vals = values(c, 1)
    return [
        ro("rank 2, unsorted", [[2, 3], [0, 1], [1, 2], [2, 0], [1, 0]], [3, 4]),
        ro("rank 1", [[5], [0], [3], [4]], [7]),
        ro("rank 3", [[1, 2, 3], [0, 0, 1], [1, 0, 0], [0, 2, 2], [1, 1, 1]], [2, 3, 4]),
        ro("already sorted", [[0, 1], [1, 0], [1, 2]], [2, 3]),
        ro("duplicates", [[1, 1], [0, 0], [1, 1], [0, 2], [1, 1]], [2, 3]),
        ro("duplicates of one value", [[1, 1], [0, 0], [1, 1]], [2, 3], np.concatenate([dup_vals, values(c, 1), dup_vals])),
        ro("indices out of bounds sort by value", [[1, 7], [0, 0], [-1, 1], [0, 2]], [2, 3]),
        ro("one entry", [[1, 1]], [2, 3]),
        ro("no entries", [], [2, 3]),
        V("40 entries of 6x7x5", input_indices=random_indices(c, 40, (6, 7, 5)), input_values=values(c, 40), input_shape=i64([6, 7, 5])),
    ]


def sparse_concat(c):
    def cc(name, parts, dim):
        return V(name, indices=[ind(r, len(s)) for r, s in parts], values=[values(c, len(r)) for r, _ in parts],
                 shapes=[i64(s) for _, s in parts], concat_dim=dim)

    a = ([[1, 1], [0, 0], [1, 2]], [2, 3])
    b = ([[0, 1]], [2, 2])
    return [
        cc("rank 2 along 1, unsorted", [a, b], 1),
        cc("rank 2 along 0", [([[1, 1], [0, 0]], [2, 3]), ([[0, 1], [2, 2]], [3, 3])], 0),
        cc("concat_dim -1, three inputs", [a, b, ([[1, 0], [0, 3]], [2, 4])], -1),
        cc("rank 1", [([[3], [0]], [4]), ([[1]], [2])], 0),
        cc("rank 3 along 1", [([[1, 0, 2], [0, 1, 1]], [2, 2, 3]), ([[1, 0, 0]], [2, 1, 3])], 1),
        cc("an input without entries", [a, ([], [2, 2]), b], 1),
        cc("no entries", [([], [2, 3]), ([], [2, 2])], 1),
    ]


def sparse_split(c):
    def sp(name, rows, shape, dim, n):
        return V(name, split_dim=i64(dim), indices=ind(rows, len(shape)), values=values(c, len(rows)), shape=i64(shape), num_split=n)

    return [
        sp("rank 2 along 1, 5 into 3, unsorted", [[1, 3], [0, 0], [1, 1], [0, 2], [0, 4]], [2, 5], 1, 3),
        sp("rank 2 along 0, even", [[3, 1], [0, 0], [2, 2], [1, 1]], [4, 3], 0, 2),
        sp("split_dim -1", [[1, 3], [0, 0], [1, 1]], [2, 4], -1, 2),
        sp("rank 1, 7 into 3", [[1], [6], [3], [5]], [7], 0, 3),
        sp("rank 3 along 2", [[1, 2, 3], [0, 0, 1], [1, 0, 0], [0, 2, 2]], [2, 3, 4], 2, 4),
        sp("duplicates", [[1, 1], [1, 1], [0, 3]], [2, 4], 0, 2),
        sp("empty slices", [[0, 0], [1, 0]], [2, 6], 1, 3),
        sp("no entries", [], [2, 4], 1, 2),
        sp("one split", [[1, 3], [0, 0]], [2, 4], 0, 1),
    ]


def fill_empty_rows(c):
    def fe(name, rows, shape):
        return V(name, indices=ind(rows, len(shape)), values=values(c, len(rows)), dense_shape=i64(shape), default_value=values(c, 1)[0])

    return [
        fe("unsorted with empty rows", [[3, 1], [0, 0], [3, 0], [1, 2]], [5, 3]),
        fe("leading and trailing empty rows", [[2, 1], [3, 0]], [6, 2]),
        fe("every row full, sorted", [[0, 1], [1, 0], [1, 1]], [2, 2]),
        fe("every row full, unsorted", [[1, 1], [0, 1], [1, 0]], [2, 2]),
        fe("rank 1", [[3], [1]], [5]),
        fe("rank 3", [[2, 1, 0], [0, 0, 1], [2, 0, 3]], [4, 2, 4]),
        fe("duplicates", [[1, 1], [1, 1], [3, 0]], [4, 2]),
        fe("columns out of bounds", [[1, 7]], [3, 3]),
        fe("no entries", [], [3, 2]),
        fe("no rows", [], [0, 2]),
    ]


def ragged_fill_empty_rows(c):
    def fe(name, rowids, nrows):
        return V(name, value_rowids=i64(rowids), values=values(c, len(rowids)), nrows=i64(nrows), default_value=values(c, 1)[0])

    return [
        fe("unsorted with empty rows", [3, 0, 3, 1], 5),
        fe("sorted, trailing empty rows", [0, 0, 1, 3], 6),
        fe("every row full", [0, 1, 1, 2], 3),
        fe("no entries", [], 3),
        fe("no rows", [], 0),
    ]


def fill_empty_rows_grad(c):
    def fg(name, rev, n):
        return V(name, reverse_index_map=i64(rev), grad_values=values(c, n))

    return [
        fg("two filled rows", [3, 0, 4, 1], 6),
        fg("nothing filled", [1, 0, 2], 3),
        fg("duplicates in the map", [2, 2], 4),
        fg("every entry filled", [], 3),
        fg("nothing at all", [], 0),
    ]


_add(sparse_dense_matmul, "SparseTensorDenseMatMul")
_add(sparse_reshape, "SparseReshape")
_add(sparse_slice, "SparseSlice")
_add(sparse_slice_grad, "SparseSliceGrad")
_add(sparse_reorder, "SparseReorder")
_add(sparse_concat, "SparseConcat")
_add(sparse_split, "SparseSplit")
_add(fill_empty_rows, "SparseFillEmptyRows")
_add(ragged_fill_empty_rows, "RaggedFillEmptyRows")
_add(fill_empty_rows_grad, "SparseFillEmptyRowsGrad", "RaggedFillEmptyRowsGrad")
