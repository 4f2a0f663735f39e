"""The check decorator the end-to-end scripts share: each check runs at
once, prints one line, and a failure is recorded and reported, not raised,
so that one run shows every failure. finish() prints the last line ("ALL
OK" or the failures) and exits with the status."""

import traceback

failures = []


def check(name):
    def wrap(fn):
        try:
            fn()
            print(f"ok   {name}", flush=True)
        except Exception:  # noqa: BLE001 - report every failure, then go on
            failures.append(name)
            print(f"FAIL {name}\n{traceback.format_exc()}", flush=True)
        return fn

    return wrap


def finish():
    if failures:
        print(f"{len(failures)} FAILED: {failures}")
        raise SystemExit(1)
    print("ALL OK")
    raise SystemExit(0)
