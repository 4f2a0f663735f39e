"""Print, as JSON on stdout, the serialized FileDescriptorProtos of the root
proto files and of all their transitive dependencies, each file after the
files it imports, as the installed TensorFlow's generated modules
(*_pb2.py) carry them (module.DESCRIPTOR.serialized_pb).

Each argument is one root: "<proto file>=<module>[,<module>...]". The first
module that imports is used; if none does, the installed tensorflow package
is searched for a file named like the last module and the one whose
descriptor is the proto file wins.
"""

import base64
import importlib
import importlib.util
import json
import os
import sys


def find(proto, modules):
    """The module in the installed tensorflow tree holding proto, by file name."""
    spec = importlib.util.find_spec("tensorflow")
    if spec is None or not spec.submodule_search_locations:
        return None
    want = modules[-1].rsplit(".", 1)[-1] + ".py"
    for top in spec.submodule_search_locations:
        site = os.path.dirname(top)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            if want not in filenames:
                continue
            rel = os.path.relpath(os.path.join(dirpath, want[:-3]), site)
            try:
                mod = importlib.import_module(rel.replace(os.sep, "."))
            except ImportError:
                continue
            if mod.DESCRIPTOR.name == proto:
                return mod
    return None


def load(proto, modules):
    errors = []
    for name in modules:
        try:
            mod = importlib.import_module(name)
        except ImportError as e:
            errors.append("%s: %s" % (name, e))
            continue
        if mod.DESCRIPTOR.name != proto:
            sys.exit("%s holds %s, not %s" % (name, mod.DESCRIPTOR.name, proto))
        return mod
    mod = find(proto, modules)
    if mod is None:
        sys.exit("no module of the installed TensorFlow holds %s (%s)" % (proto, "; ".join(errors)))
    return mod


def main(args):
    files, seen, used = [], set(), {}

    def walk(fd):
        if fd.name in seen:
            return
        seen.add(fd.name)
        for dep in fd.dependencies:
            walk(dep)
        files.append({"name": fd.name, "descriptor": base64.b64encode(fd.serialized_pb).decode("ascii")})

    for arg in args:
        proto, _, modules = arg.partition("=")
        mod = load(proto, modules.split(","))
        used[proto] = mod.__name__
        walk(mod.DESCRIPTOR)
    json.dump({"modules": used, "files": files}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
