"""What every check of ``opcheck`` reads: the op's record, its function, the reference its
results are compared with, the samples, and helpers to call either on a sample."""
import numpy as np
import tensorflow as tf

from . import _compare
from ._report import CheckFailure, NotRun


class Context(object):
    def __init__(self, op, function, reference, samples, tolerance, imports, triton_interp,
                 kernel_dir, workdir):
        self.op = op
        self.function = function
        self.reference = reference
        self.samples = samples
        self.tolerance = tolerance
        self.imports = imports
        self.triton_interp = triton_interp
        self.kernel_dir = kernel_dir
        self.workdir = workdir
        self._expected = {}

    def need_reference(self):
        if self.reference is None:
            raise NotRun("the record of %s names no TensorFlow equivalent and no reference was "
                         "given (opcheck(..., reference=f))" % self.op.type_name)
        return self.reference

    def expected(self, sample):
        """The reference's result on ``sample``, eager (computed once)."""
        if sample.name not in self._expected:
            ref = self.need_reference()
            self._expected[sample.name] = _compare.as_numpy(
                ref(*[tf.constant(x) for x in sample.inputs], **sample.attrs))
        return self._expected[sample.name]

    def compare(self, got, want, sample, path, tolerance=None):
        """CheckFailure naming the sample, the path and the first differing element."""
        problem = _compare.difference(got, want, self.tolerance if tolerance is None else tolerance)
        if problem is not None:
            raise CheckFailure("sample %s, %s: %s" % (sample.name, path, problem))

    def float_samples(self):
        return [s for s in self.samples if tf.as_dtype(s.inputs[0].dtype).is_floating]


def call(function, sample, inputs=None):
    """``function`` on ``sample``'s inputs as constants (or ``inputs``), with its attributes."""
    inputs = [tf.constant(x) for x in sample.inputs] if inputs is None else inputs
    return function(*inputs, **sample.attrs)


def random_like(shape, dtype, seed):
    """A random tensor of ``shape`` and ``dtype`` (an upstream gradient)."""
    rng = np.random.RandomState(seed)
    return tf.cast(tf.constant(np.asarray(rng.standard_normal(tuple(shape)), np.float32)), dtype)
