# Reports, as JSON on stdout, where the interpreter running it finds
# TensorFlow and jax. It never imports either: that takes seconds and would load the
# very plugins a build is about to replace.
import importlib.metadata as md
import importlib.util
import json
import os
import sys

KNOWN = ("tensorflow", "tensorflow-cpu", "tf-nightly", "tf-nightly-cpu", "tensorflow-macos")

out = {
    "interpreter": {
        "path": sys.executable,
        "version": "%d.%d.%d" % sys.version_info[:3],
        "prefix": sys.prefix,
        "venv": sys.prefix != sys.base_prefix,
    },
    "tensorflow": None,
    "jax": None,
}

spec = importlib.util.find_spec("tensorflow")
if spec is not None and spec.origin:
    pkg = os.path.dirname(spec.origin)
    dists = []
    for name in md.packages_distributions().get("tensorflow", []):
        try:
            dists.append((name, md.version(name)))
        except md.PackageNotFoundError:
            pass
    # Prefer the distribution that really is TensorFlow over ones that merely
    # ship files under tensorflow/ (plugins, for instance).
    dists.sort(key=lambda d: (d[0].lower() not in KNOWN, d[0]))
    out["tensorflow"] = {
        "package_dir": pkg,
        "distributions": [{"name": n.lower().replace("_", "-"), "version": v} for n, v in dists],
    }

# jax is found the same way, without importing it; jaxlib holds the runtime
# the plugin is built against.
spec = importlib.util.find_spec("jaxlib")
if spec is not None and spec.origin:
    versions = {}
    for name in ("jax", "jaxlib"):
        try:
            versions[name] = md.version(name)
        except md.PackageNotFoundError:
            versions[name] = ""
    out["jax"] = {
        "jaxlib_dir": os.path.dirname(spec.origin),
        "jax_version": versions["jax"],
        "jaxlib_version": versions["jaxlib"],
    }

json.dump(out, sys.stdout)
