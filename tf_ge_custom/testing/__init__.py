"""``tf_ge_custom.testing``: checks for an op of this package or of a user's op package.

``opcheck(op)`` runs every check of docs/testing-your-op.md on the op's record, its
registered TensorFlow op, its Python function on every path (eager, ``tf.function``, XLA, a
TF1 session, a SavedModel in a fresh process, ``tf.vectorized_map``), its gradients, its
refusals and its Triton kernel in Triton's CPU interpreter, and returns an
:class:`OpCheckReport`::

    from tf_ge_custom.testing import opcheck
    opcheck("LeakyReluCustom").assert_passed()

Importing it imports TensorFlow.
"""
from ._opcheck import CHECK_NAMES, opcheck
from ._report import CheckResult, OpCheckReport
from ._samples import Sample, default_samples

__all__ = ["opcheck", "OpCheckReport", "CheckResult", "Sample", "default_samples", "CHECK_NAMES"]
