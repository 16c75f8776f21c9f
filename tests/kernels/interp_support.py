"""What both interpreter children share (broadcast_runner.py, interpreter_runner.py): the
interpreter switch, set before triton is imported, the check that the triton found is PyPI's
(the parent puts it first on PYTHONPATH), and loading a source file as a module.
"""
import importlib.util
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported


def require_pypi_triton(triton):
    if os.path.isdir(os.path.join(os.path.dirname(triton.__file__), "backends", "ascend")):
        sys.exit("expected PyPI triton first on sys.path, got triton-ascend at %s" % triton.__file__)


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # triton reads the kernel's source through its module
    spec.loader.exec_module(module)
    return module
