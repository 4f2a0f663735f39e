"""Print the GPU and DEFAULT (DEVICE_DEFAULT) kernel registrations of the
TensorFlow this interpreter imports, with what the definitions of their ops
say about them, as JSON on stdout, for docs/tf_gpu_registry.json.
Usage: coverage_registry.py DISTRIBUTION."""

import importlib.metadata
import json
import sys
import sysconfig

import tensorflow as tf
from tensorflow.python.framework import kernels, op_def_registry

DEVICES = ("GPU", "DEFAULT")


def main():
    dist = sys.argv[1]
    installed = importlib.metadata.version(dist)
    if installed != tf.__version__:
        sys.exit("the %s distribution is %s but tensorflow reports %s" % (dist, installed, tf.__version__))
    out, ops = [], {}
    for k in kernels.get_all_registered_kernels().kernel:
        if k.device_type not in DEVICES:
            continue
        cons = {}
        for c in k.constraint:
            if c.allowed_values.WhichOneof("value") != "list":
                sys.exit("%s on %s: constraint %s is not a list of types" % (k.op, k.device_type, c.name))
            if not c.allowed_values.list.type:
                # A constraint on an attribute's value (GatherNd's
                # bad_indices_policy, ApproxTopK's is_max_k) picks the
                # nodes a kernel serves, not its dtypes.
                continue
            cons[c.name] = [tf.dtypes.as_dtype(t).name for t in c.allowed_values.list.type]
        out.append({"op": k.op, "device": k.device_type, "constraints": cons, "label": k.label})
        od = op_def_registry.get(k.op)
        if od is not None:
            # An op with a reference input or output works on a TF1
            # reference variable; a deprecation is the GraphDef version from
            # which TensorFlow refuses to build the op.
            ref = any(a.is_ref for a in list(od.input_arg) + list(od.output_arg))
            ops[k.op] = {"ref": ref, "deprecated": od.deprecation.version}
    json.dump({"distribution": dist, "version": tf.__version__, "platform": sysconfig.get_platform(),
               "graph_def_version": tf.version.GRAPH_DEF_VERSION, "kernels": out, "op_defs": ops}, sys.stdout)


main()
