"""``tf-ge-custom setup-builder``: a second Python for the kernel builder on a Python 3.7 host.

TF Adapter's hosts run Python 3.7 (TensorFlow 1.15 and 2.6.5), and triton-ascend has no
build for Python < 3.9, so the GE library cannot compile a kernel with the Python that runs
TensorFlow. This command makes, once, a venv of a Python >= 3.9 holding triton-ascend,
pybind11, ascendnpu-ir (bishengir-compile) and a copy of this package's pure-Python builder::

    tf-ge-custom setup-builder                     # a Python >= 3.9 from PATH
    tf-ge-custom setup-builder --python /usr/bin/python3.11 --venv DIR

The venv lives at ``$TF_GE_CUSTOM_BUILDER``, else ``$XDG_DATA_HOME/tf-ge-custom/builder``,
else ``~/.local/share/tf-ge-custom/builder``; the GE library's Compile
(ge_ops/core kernel_compiler.cc), ``build-kernels`` and ``doctor`` find it there and take it
only when its ``--describe`` imports both tf_ge_custom and triton, as they do for every
candidate Python. Run it again after upgrading tf-ge-custom (the copy must match). The command
line: ``tf_ge_custom/_commands/setup_builder.py``.

A Python named by ``TF_GE_CUSTOM_PYTHON``, and the venv's, runs only when it passes the
package's trust rule (:mod:`tf_ge_custom._trust`): an absolute path, this user's or root's all
the way, writable by nobody else (:func:`python_problem`, the words of the GE library's
kernel_compiler.cc). A relative ``TF_GE_CUSTOM_PYTHON=python3`` is refused by name: the GE
library would run ``./python3`` from each training job's working folder, a shell finds it on
``PATH``.
"""
import json
import os
import shutil
import sys

from . import _processes, _atomic_files as atomic_files
from .errors import CommandError

VENV_ENV = "TF_GE_CUSTOM_BUILDER"
PYTHON_ENV = "TF_GE_CUSTOM_PYTHON"
MIN_PYTHON = (3, 9)
REQUIREMENTS = ("triton-ascend==3.2.0", "pybind11", "ascendnpu-ir==1.2.0")
MARKER = "builder_copy.json"  # written into the copy: which package it came from

# What GE's kernel_compiler.cc runs, in the same words: the package first on sys.path (or,
# with "", the venv's own copy), TensorFlow kept out, the builder module.
BOOTSTRAP = ("import builtins, runpy, sys\n"
             "builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True\n"
             "p = sys.argv.pop(1)\n"
             "if p: sys.path[0] = p\n"
             "else: del sys.path[0]\n"
             "runpy.run_module('tf_ge_custom.kernels.compile_kernel', run_name='__main__', "
             "alter_sys=True)\n")
RESULT_MARK = "TF_GE_CUSTOM_COMPILE "


def default_venv(environ=None):
    """The builder venv's folder, or None when neither the variables nor HOME name one."""
    env = os.environ if environ is None else environ
    if env.get(VENV_ENV):
        return env[VENV_ENV]
    data = env.get("XDG_DATA_HOME", "")
    if data.startswith("/"):
        return os.path.join(data, "tf-ge-custom", "builder")
    home = env.get("HOME", "")
    if home.startswith("/"):
        return os.path.join(home, ".local", "share", "tf-ge-custom", "builder")
    return None


def venv_python(venv):
    return os.path.join(venv, "bin", "python")


def venv_problem(environ=None):
    """Why ``$TF_GE_CUSTOM_BUILDER`` cannot name the builder venv ("" when it can, or is unset)."""
    from ._files import shown

    value = (os.environ if environ is None else environ).get(VENV_ENV, "")
    if value and not value.startswith("/"):
        return ("%s=%s is not an absolute path: the GE library would look for the builder venv from "
                "each training job's working folder; name it absolutely" % (VENV_ENV, shown(value)))
    return ""


def python_problem(python, variable=PYTHON_ENV):
    """Why the GE library would not run the Python ``python`` that ``variable`` names ("" when
    it would): the trust rule, in the words of ge_ops/core kernel_compiler.cc FindBuilder."""
    from . import _trust as trust

    refusal = trust.check(python, trust.EXECUTABLE)
    if refusal is None:
        return ""
    # "TF_GE_CUSTOM_PYTHON=/x" for a variable, "the builder venv's Python /x" for a label
    named = ("%s=%s" if variable.isupper() else "%s %s") % (variable, trust.shown(python))
    if refusal.reason == trust.RELATIVE:
        return ("%s is not an absolute path: the GE library would run it from each training job's "
                "working folder, not from PATH; name the interpreter absolutely, e.g. "
                "%s=$(command -v %s)" % (named, variable, trust.shown(python)))
    if refusal.reason in (trust.MISSING, trust.NOT_A_FILE, trust.SPECIAL, trust.NOT_A_FOLDER,
                          trust.NOT_EXECUTABLE):
        return ("%s is not an executable file (%s); point it at the Python that has tf-ge-custom "
                "and triton-ascend installed" % (named, refusal))
    return "%s is not trusted, so the GE library does not run it: %s" % (named, refusal)


def describe(python, package_parent="", environ=None, timeout=300):
    """Run the builder's ``--describe`` as the GE library does: its result dict, with ``ok``
    False and ``error`` set when the Python cannot run it or cannot import triton."""
    try:
        proc = _processes.run([python, "-c", BOOTSTRAP, package_parent, "--describe"], timeout=timeout,
                              env=dict(os.environ if environ is None else environ), check=False)
    except CommandError as e:
        return {"ok": False, "error": "cannot run %s: %s" % (python, e)}
    lines = [l for l in proc.output.splitlines() if l.startswith(RESULT_MARK)]
    if not lines:
        tail = " | ".join(l.strip() for l in proc.output.splitlines() if l.strip())[-400:]
        return {"ok": False, "error": "%s printed no result (exit status %d): %s"
                % (python, proc.returncode, tail or "no output")}
    try:
        result = json.loads(lines[-1][len(RESULT_MARK):])
    except ValueError:
        return {"ok": False, "error": "%s printed an unreadable result" % python}
    if result.get("ok") and result.get("triton_error"):
        result = dict(result, ok=False, error="it cannot import triton (%s)" % result["triton_error"])
    return result


def python_version(python):
    """(major, minor) of ``python``, or None when it does not run."""
    try:
        out = _processes.run([python, "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
                             timeout=60, separate_stderr=True, check=False).output.split()
        return int(out[0]), int(out[1])
    except (CommandError, ValueError, IndexError):
        return None


def find_python(path=None):
    """A Python >= 3.9 from PATH (newest first), or None."""
    for minor in range(13, MIN_PYTHON[1] - 1, -1):
        found = shutil.which("python3.%d" % minor, path=path)
        if found and (python_version(found) or (0, 0)) >= MIN_PYTHON:
            return found
    found = shutil.which("python3", path=path)
    if found and (python_version(found) or (0, 0)) >= MIN_PYTHON:
        return found
    return None


def _package_dir():
    return os.path.dirname(os.path.abspath(__file__))


def copy_builder(venv_site, package_dir=None):
    """Copy this package's pure-Python files (no shared library, no OPP root) into
    ``venv_site/tf_ge_custom``; returns that folder."""
    from ._version import __version__

    source = package_dir or _package_dir()
    target = os.path.join(venv_site, "tf_ge_custom")
    if os.path.isdir(target):
        shutil.rmtree(target)

    def ignore(folder, names):
        skipped = {n for n in names if n.endswith((".so", ".pyc")) or n == "__pycache__"}
        if os.path.abspath(folder) == os.path.abspath(source):
            skipped |= {"opp"} & set(names)
        return skipped

    shutil.copytree(source, target, ignore=ignore)
    atomic_files.write_json(os.path.join(target, MARKER),
                            {"copied_from": source, "tf_ge_custom": __version__}, sort_keys=True)
    return target


def _run_shown(argv):
    """Run ``argv`` with its output shown as it comes (pip, venv); its exit status."""
    from .errors import BuilderSetupError

    try:
        return _processes.run_attached(argv)
    except CommandError as e:
        raise BuilderSetupError(str(e))


FOLDER_KIND = "builder"  # its made-record: <venv>/.tf-ge-custom-builder (_given_folders)


def refuse_foreign_folder(venv):
    """UsageError, before anything is done, when ``venv`` is a folder of the user's: not empty,
    and holding what setup-builder did not make (``python -m venv`` would overwrite its
    ``bin/activate``)."""
    from . import _given_folders

    _given_folders.refuse(venv, "--venv", "setup-builder", FOLDER_KIND)


def site_packages(python):
    return _processes.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          timeout=60, separate_stderr=True).output.strip()


def setup(venv, python, system_site_packages=False, install=True, out=None, extra_site=None):
    """Make (or remake) the builder venv; returns the describe result of its Python. Raises
    :class:`tf_ge_custom.errors.BuilderSetupError` for any step that fails, and UsageError,
    before anything is written, when ``venv`` is a non-empty folder setup-builder did not make."""
    from .errors import BuilderSetupError

    out = out or sys.stdout
    version = python_version(python)
    if version is None:
        raise BuilderSetupError("%s does not run" % python)
    if version < MIN_PYTHON:
        raise BuilderSetupError("%s is Python %d.%d; triton-ascend needs Python >= %d.%d: pass "
                                "--python with a newer one" % ((python,) + version + MIN_PYTHON))
    from . import _given_folders

    command = [python, "-m", "venv"] + (["--system-site-packages"] if system_site_packages else []) + [venv]
    _given_folders.take(venv, "--venv", "setup-builder", FOLDER_KIND)
    try:
        result = _fill(venv, python, version, command, install, extra_site, out)
    finally:
        # what is there now, made by this run (the venv was new, empty or all made before):
        # tf-ge-custom clean removes what this names, and only that
        _given_folders.record(venv, FOLDER_KIND)
    return result


def _fill(venv, python, version, command, install, extra_site, out):
    """Make the venv in ``venv`` (taken), install, copy the builder; its describe result."""
    from .errors import BuilderSetupError

    out.write("creating %s with %s (Python %d.%d)\n" % ((venv, python) + version))
    if _run_shown(command) != 0:
        raise BuilderSetupError("`%s` failed" % " ".join(command))
    vpython = venv_python(venv)
    from . import _given_folders

    _given_folders.record(venv, FOLDER_KIND)  # the venv made: a run killed during pip left only that
    if install:
        pip = [vpython, "-m", "pip", "install", "--disable-pip-version-check", "-q"] + list(REQUIREMENTS)
        out.write("installing %s\n" % " ".join(REQUIREMENTS))
        if _run_shown(pip) != 0:
            raise BuilderSetupError("`%s` failed: see pip's output above" % " ".join(pip))
    site = site_packages(vpython)
    if extra_site:
        # after the venv's own site-packages, so its copy of the package comes first
        atomic_files.write_text(os.path.join(site, "tf_ge_custom_builder_extra.pth"),
                                os.path.abspath(extra_site) + "\n")
        out.write("using the packages of %s\n" % extra_site)
    copied = copy_builder(site)
    out.write("copied the package's builder into %s\n" % copied)
    # bytecode now, so that a later import writes no file the record does not name
    _processes.run([vpython, "-m", "compileall", "-q", copied], timeout=300, check=False)
    result = describe(vpython)
    if not result.get("ok"):
        raise BuilderSetupError("the builder venv %s does not pass the GE library's check: %s"
                                % (venv, result.get("error")))
    return result
