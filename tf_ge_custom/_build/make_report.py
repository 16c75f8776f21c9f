"""What ``make install`` / ``make demo`` show of the package's build (run as a script).

pip shows a build backend's output only with ``-v``, and then among hundreds of setuptools
lines; without ``-v`` the build's own lines (``tf-ge-custom build: ...``: what it compiles,
what it takes from the object cache, why it skips the GE library) are hidden. So:

    python tf_ge_custom/_build/make_report.py pip install [PIP ARGS...]
        runs ``python -m pip install -v PIP ARGS`` and shows, as they come, what it installs
        and the build's lines, then the time taken; on a failure, the build's error (or pip's
        last lines). Exit status: pip's.
    python tf_ge_custom/_build/make_report.py summary
        one line per part of the installed build, from its record (build_info.json): the
        TensorFlow it was built against, the XLA kernel library, the GE library (built, or
        skipped and why), the precompiled kernels. Imports neither the package nor TensorFlow.

Standard library only, no package-relative import: it runs before the package is installed.
"""
import collections
import importlib.util
import json
import os
import subprocess
import sys
import time

BUILD_PREFIX = "tf-ge-custom build: "
FAILED_MARK = "tf-ge-custom build failed:"
TAIL_LINES = 60
INDENT = "    "


def _say(line):
    sys.stdout.write(INDENT + line + "\n")
    sys.stdout.flush()


def _names(listing, shown=6):
    names = [n.strip() for n in listing.split(",") if n.strip()]
    return "%d package%s (%s%s)" % (len(names), "" if len(names) == 1 else "s",
                                   ", ".join(names[:shown]), ", ..." if len(names) > shown else "")


def pip_install(args, python=None):
    """Run pip install -v ARGS, showing what it installs and the build's lines; return pip's
    exit status."""
    python = python or sys.executable
    argv = [python, "-m", "pip", "--disable-pip-version-check", "install", "-v"] + list(args)
    started = time.time()
    tail = collections.deque(maxlen=TAIL_LINES)
    failing = False
    satisfied = 0
    installing = False
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, universal_newlines=True, bufsize=1)
    for raw in proc.stdout:
        line = raw.rstrip("\n")
        tail.append(line)
        text = line.strip()
        if text.startswith(BUILD_PREFIX):
            _say(text[len(BUILD_PREFIX):])
        elif text.startswith(FAILED_MARK) or failing:
            failing = True  # the build's own error message: every line of it
            if text:
                _say(text)
        elif line.startswith("Requirement already satisfied: "):
            satisfied += 1
        elif line.startswith("Installing collected packages: "):
            installing = True
            _say("installing %s" % _names(line.split(": ", 1)[1]))
    status = proc.wait()
    if status != 0:
        if not failing:
            sys.stdout.write("pip's last lines:\n" + "\n".join(tail) + "\n")
        sys.stdout.write("error: %s exited with status %d\n" % (" ".join(argv), status))
    elif not installing:
        _say("nothing to install: %d requirement%s already satisfied"
             % (satisfied, "" if satisfied == 1 else "s"))
    else:
        _say("installed in %.0f s" % (time.time() - started))
    return status


def _package_dir():
    """The installed tf_ge_custom folder, found without importing it (None: not installed)."""
    spec = importlib.util.find_spec("tf_ge_custom")
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def summary_lines(info):
    """The summary of a build record (build_info.json's document), one line per part."""
    lines = []
    tf = info.get("tensorflow") or {}
    lines.append("op library: built against TensorFlow %s (Python %s)"
                 % (tf.get("version", "?"), tf.get("python", "?")))
    if tf.get("xla_library"):
        lines.append("XLA kernel library: built")
    else:
        lines.append("XLA kernel library: skipped (%s)" % tf.get("xla_library_missing_because"))
    ge = info.get("ge") or {}
    if ge.get("built"):
        toolkit = ge.get("toolkit") or {}
        lines.append("GE library: built against CANN %s at %s"
                     % (toolkit.get("version") or "(unknown version)", ge.get("ascend_home")))
    else:
        lines.append("GE library: skipped (%s)" % (ge.get("reason") or "no reason recorded"))
    socs = (info.get("kernels") or {}).get("socs") or {}
    if socs:
        lines.append("precompiled kernels: " + ", ".join(
            "%s (%s)" % (soc, ", ".join(dtypes)) for soc, dtypes in sorted(socs.items())))
    else:
        lines.append("precompiled kernels: none (built on a CANN host: docs/kernels.md)")
    return lines


def summary():
    package = _package_dir()
    if package is None:
        sys.stdout.write("error: tf-ge-custom is not installed for %s; run make install\n"
                         % sys.executable)
        return 1
    path = os.path.join(package, "build_info.json")
    try:
        with open(path) as f:
            info = json.load(f)
    except (IOError, OSError, ValueError) as e:
        sys.stdout.write("error: cannot read the build record %s: %s; run make install\n" % (path, e))
        return 1
    sys.stdout.write("==> build: tf-ge-custom installed in %s\n" % package)
    for line in summary_lines(info):
        _say(line)
    sys.stdout.flush()
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["pip", "install"]:
        return pip_install(argv[2:])
    if argv == ["summary"]:
        return summary()
    sys.stderr.write("usage: make_report.py pip install [PIP ARGS...] | make_report.py summary\n")
    return 2


if __name__ == "__main__":
    sys.exit(main())
