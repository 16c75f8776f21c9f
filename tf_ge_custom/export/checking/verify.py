"""Verification: the frozen graph, loaded in a fresh process, gives the source model's outputs.

The parent process holds the source model (SavedModel, Keras model, TF1 session, function)
and computes the reference outputs on generated inputs (or the user's); a new Python process
that imports only TensorFlow and ``tf_ge_custom`` runs the written ``.pb`` on the same
inputs (:mod:`._verify_child`). A graph that needs anything else of the source (a Python
layer, a library loaded by hand) fails there, as it would in deployment.
"""
import os
import sys
import tempfile
from typing import List, NamedTuple

from tf_ge_custom import _owned_folders as owned_folders, _processes
from tf_ge_custom.errors import CommandError, VerificationError
from tf_ge_custom.export import arrays
from tf_ge_custom.export.checking.compare import Comparison, compare


class Verification(NamedTuple):
    comparisons: List[Comparison]
    inputs: dict  # {input name: array} the comparison used

    @property
    def ok(self):
        return all(c.ok for c in self.comparisons)

    def lines(self):
        return ["verification (fresh process, only tf_ge_custom imported), max |frozen - source|:"] + [
            c.line() for c in self.comparisons]


def run_frozen_graph(pb_path, record, feeds, python=None, timeout=900):
    """The outputs of the ``.pb`` in a fresh Python process, in ``record.outputs`` order."""
    owned = owned_folders.make(tempfile.gettempdir(), "tf-ge-custom-verify-")
    work = owned.path
    try:
        in_dir, out_dir = os.path.join(work, "in"), os.path.join(work, "out")
        arrays.save_arrays(in_dir, [(t.name, feeds[t.name]) for t in record.inputs])
        env = dict(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        cmd = [python or sys.executable, "-m", "tf_ge_custom.export.checking._verify_child",
               os.path.abspath(pb_path), in_dir, out_dir] + [t.name for t in record.outputs]
        try:
            proc = _processes.run(cmd, timeout=timeout, env=env, cwd=work, check=False)
        except CommandError as e:
            raise VerificationError("the frozen graph could not be run in a fresh process: %s" % e)
        if proc.returncode != 0:
            raise VerificationError("the frozen graph does not run in a fresh process that imports "
                                    "only tf_ge_custom (exit %d):\n%s"
                                    % (proc.returncode, proc.tail(15)))
        return [value for _, value in arrays.load_arrays(out_dir)]
    finally:
        owned.close()


def verify(frozen, pb_path, feeds=None, rtol=None, atol=None, python=None):
    """Compare the written ``pb_path`` with the source model of ``frozen``.

    ``feeds``: ``{input name: array}`` (default: generated from the record, seeded).
    Returns a :class:`Verification`; raises :class:`VerificationError` when an output differs.
    """
    record = frozen.record
    feeds = feeds if feeds is not None else arrays.sample_inputs(record.inputs)
    want = frozen.reference_outputs(feeds)
    got = run_frozen_graph(pb_path, record, feeds, python)
    comparisons = [compare(t.key or t.name, g, w, rtol, atol)
                   for t, g, w in zip(record.outputs, got, want)]
    result = Verification(comparisons, feeds)
    if not result.ok:
        raise VerificationError("the frozen graph's outputs differ from the source model's:\n"
                                + "\n".join(result.lines()[1:]))
    return result
