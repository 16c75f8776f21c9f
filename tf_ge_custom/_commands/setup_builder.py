"""``tf-ge-custom setup-builder``: the Python >= 3.9 venv the kernel builder runs in on a Python
3.7 host (the work: :mod:`tf_ge_custom._builder_venv`)."""
import os
import sys

from .. import _lifecycle, _builder_venv as builder_venv


def add_arguments(parser):
    parser.description = ("Make the Python >= 3.9 venv the kernel builder runs in on a Python 3.7 "
                          "host (triton-ascend has no Python 3.7 build); Compile, build-kernels and "
                          "doctor find it.")
    parser.add_argument("--python", help="the Python >= 3.9 to make it from (default: the newest "
                                         "python3.X >= 3.9 on PATH)")
    parser.add_argument("--venv", help="where: a new or empty folder, or one setup-builder made (default: $%s, "
                                       "else $XDG_DATA_HOME/tf-ge-custom/builder, else "
                                       "~/.local/share/tf-ge-custom/builder)" % builder_venv.VENV_ENV)
    parser.add_argument("--system-site-packages", action="store_true",
                        help="let the venv see that Python's own packages (e.g. a triton-ascend "
                             "installed there)")
    parser.add_argument("--no-install", action="store_true",
                        help="install nothing with pip (the Python's own packages must hold "
                             "triton-ascend: with --system-site-packages or --with-site-packages)")
    parser.add_argument("--with-site-packages", metavar="DIR",
                        help="use the packages of DIR (e.g. another venv's site-packages holding "
                             "triton-ascend for that Python version) instead of installing them")


def run(args):
    from .._builder_venv import VENV_ENV, default_venv, find_python, setup, venv_python
    from ..errors import BuilderSetupError, UsageError

    venv = args.venv or default_venv()
    if not venv:
        raise UsageError("no folder for the venv", fix="pass --venv DIR or set %s" % VENV_ENV)
    venv = _lifecycle.absolute(venv, "--venv")
    builder_venv.refuse_foreign_folder(venv)  # the user's own folder: refused before anything
    python = args.python or find_python()
    if not python:
        raise UsageError("no Python >= 3.9 on PATH (python3.9 ... python3.13)",
                         fix="pass --python /path/to/python3.X")
    if args.with_site_packages and not os.path.isdir(args.with_site_packages):
        raise BuilderSetupError("--with-site-packages %s is not a folder" % args.with_site_packages)
    result = setup(venv, python, args.system_site_packages,
                   not (args.no_install or args.with_site_packages),
                   extra_site=args.with_site_packages)
    sys.stdout.write("builder venv ready: %s (Python %s, kernel cache %s); the GE library's "
                     "Compile and build-kernels use it on this host\n"
                     % (venv_python(venv), result.get("python_version"),
                        result.get("cache_dir")))
    return 0
