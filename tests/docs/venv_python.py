"""Runs a test with an interpreter that has what it needs (the project's .venv/, made by
scripts/setup.sh examples, or this one): exit 77 with the reason when none has it, except under
CI=true, where a missing package is the install step's failure and so an error (exit 1)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ensure(modules, why):
    """Returns when this interpreter imports every module; otherwise re-runs the calling script
    with .venv/bin/python, or exits 77 (1 under CI=true) naming what is missing."""
    missing = []
    for m in modules:
        try:
            __import__(m)
        except ImportError:
            missing.append(m)
    if not missing:
        return
    venv = os.path.join(ROOT, ".venv", "bin", "python")
    in_venv = os.path.realpath(sys.prefix) == os.path.realpath(os.path.join(ROOT, ".venv"))
    if os.path.exists(venv) and not in_venv and not os.environ.get("DOCS_TEST_IN_VENV"):
        env = dict(os.environ, DOCS_TEST_IN_VENV="1")
        sys.exit(subprocess.run([venv] + sys.argv, env=env).returncode)
    # Without a GPU, setup.sh examples (README command 1) installs no plotting tools, so the
    # advice names the variable that makes it install them.
    message = (f"{', '.join(missing)} missing ({why}): CUDA_EXAMPLES_PLOTS=1 scripts/setup.sh "
               "examples installs it into .venv/")
    if os.environ.get("CI") == "true":
        print(f"FAIL under CI=true: {message}")
        sys.exit(1)
    print(f"skipped: {message}")
    sys.exit(77)
