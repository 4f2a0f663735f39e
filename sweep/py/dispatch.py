"""How the sweep calls an op: through TensorFlow's own dispatch, by the op's
name, with OpDef argument names. Shared by the worker, which runs each case
this way on the device and on the CPU, and by the recipes, whose references
call ops on the CPU."""
import inspect

import tensorflow as tf
from tensorflow.python.eager import context as eager_context
from tensorflow.python.eager import execute as eager_execute


def call(op, od, kwargs):
    """Runs op eagerly through TensorFlow's dispatch: tf.raw_ops where the op is
    public, else eager execute with attrs inferred from the OpDef (internal ops
    such as _FusedMatMul)."""
    fn = getattr(tf.raw_ops, op, None)
    if fn is not None:
        names = raw_names(op, od, fn)
        return fn(**{names.get(k, k): v for k, v in kwargs.items()})
    inputs, attrs, nout = [], {}, 0
    for a in od.input_arg:
        v = kwargs[a.name]
        if a.number_attr:
            attrs[a.number_attr] = len(v)
            if a.type_attr:
                attrs[a.type_attr] = v[0].dtype.as_datatype_enum if v else tf.float32.as_datatype_enum
            inputs.extend(v)
        elif a.type_list_attr:
            attrs[a.type_list_attr] = [t.dtype.as_datatype_enum for t in v]
            inputs.extend(v)
        else:
            if a.type_attr:
                attrs[a.type_attr] = v.dtype.as_datatype_enum
            inputs.append(v)
    for at in od.attr:
        if at.name in kwargs and at.name not in attrs:
            v = kwargs[at.name]
            attrs[at.name] = tf.dtypes.as_dtype(v).as_datatype_enum if at.type == "type" else v
        elif at.name not in attrs and at.HasField("default_value"):
            attrs[at.name] = _default(at)
    for a in od.output_arg:
        if a.number_attr:
            nout += attrs[a.number_attr]
        elif a.type_list_attr:
            nout += len(attrs[a.type_list_attr])
        else:
            nout += 1
    flat = []
    for k, v in attrs.items():
        flat += [k, v]
    return eager_execute.execute(op.encode(), nout, inputs=inputs, attrs=tuple(flat), ctx=eager_context.context())


_RAW_NAMES = {}


def raw_names(op, od, fn):
    """OpDef argument names -> tf.raw_ops keyword names. Python's API defs
    rename a few (Sum's reduction_indices is axis, Squeeze's squeeze_dims is
    axis); inputs keep their order, so they map by position, and a renamed
    attr maps to the one keyword no OpDef attr claims."""
    if op in _RAW_NAMES:
        return _RAW_NAMES[op]
    params = [p for p in inspect.signature(fn).parameters if p != "name"]
    ins = [a.name for a in od.input_arg]
    m = dict(zip(ins, params))
    inferred = set()
    for a in od.input_arg:
        inferred |= {a.type_attr, a.number_attr, a.type_list_attr}
    attrs = [at.name for at in od.attr if at.name not in inferred]
    rest = params[len(ins):]
    for a, p in zip([a for a in attrs if a not in rest], [p for p in rest if p not in attrs]):
        m[a] = p
    _RAW_NAMES[op] = m
    return m


def _default(at):
    d = at.default_value
    kind = d.WhichOneof("value")
    if kind == "list":
        lst = d.list
        for f in ("i", "f", "s", "b", "type"):
            vals = list(getattr(lst, f))
            if vals:
                return [v.decode() if isinstance(v, bytes) else v for v in vals]
        return []
    v = getattr(d, kind)
    return v.decode() if isinstance(v, bytes) else v
