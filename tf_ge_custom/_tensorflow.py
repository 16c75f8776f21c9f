"""Importing TensorFlow where a command needs it: a failure is one named error, not a traceback.

TensorFlow's import can fail for reasons that have nothing to do with this package: it is not
installed, its shared libraries cannot be mapped (a memory limit: under ``ulimit -v 800000``
``libtensorflow_cc.so.2: failed to map segment from shared object``), an incompatible
dependency. :func:`require` imports it and turns any failure into
:class:`~tf_ge_custom.errors.TensorFlowImportError`: the reason in one line, the whole
traceback in its ``details`` (``--verbose`` prints them).
"""
import sys

from .errors import TensorFlowImportError


def require():
    """The ``tensorflow`` module, imported now; TensorFlowImportError when it cannot be."""
    try:
        import tensorflow
    except Exception as e:  # whatever TensorFlow's import raised: it is not ours to judge
        import traceback

        first = (str(e).strip().splitlines() or [""])[0][:300]
        raise TensorFlowImportError(
            "TensorFlow cannot be imported by %s: %s%s" % (sys.executable, type(e).__name__,
                                                           ": " + first if first else ""),
            details="".join(traceback.format_exception(type(e), e, e.__traceback__)),
            fix="`%s -c 'import tensorflow'` shows the same; a memory limit (ulimit -v) or a broken "
                "installation are the usual causes; --verbose prints the whole traceback" % sys.executable)
    return tensorflow
