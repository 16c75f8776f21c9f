"""The op inside a user's AutoGraph-converted ``tf.function`` says nothing: no Python warning,
no log record of TensorFlow's logger at WARNING or above, nothing on stdout or stderr from
Python."""
import contextlib
import io
import logging
import warnings

import tensorflow as tf

from ._report import CheckFailure


class _Records(logging.Handler):
    def __init__(self):
        logging.Handler.__init__(self, logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(record.getMessage())


# TensorFlow's note that tf.functions were traced many times: opcheck's own doing (it makes one
# tf.function per sample and path), not the op's
_OURS = "triggered tf.function retracing"


def autograph_silence(ctx):
    samples = ctx.samples[:3]
    handler, logger = _Records(), logging.getLogger("tensorflow")
    level = logger.level
    out, err = io.StringIO(), io.StringIO()
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings(record=True) as caught, \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            warnings.simplefilter("always")
            for s in samples:
                attrs = s.attrs

                @tf.function(autograph=True)
                def program(*xs):
                    y = ctx.function(*xs, **attrs)
                    if tf.reduce_sum(tf.cast(tf.size(y), tf.int32)) > 0:  # AutoGraph converts this
                        y = tf.identity(y)
                    return y

                program(*[tf.constant(x) for x in s.inputs])
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    said = ["warning: %s" % w.message for w in caught] + ["log: %s" % r for r in handler.records
                                                            if not _OURS in r]
    said += ["stdout: %s" % out.getvalue().strip()] if out.getvalue().strip() else []
    said += ["stderr: %s" % err.getvalue().strip()] if err.getvalue().strip() else []
    if said:
        raise CheckFailure("tracing %s inside an AutoGraph tf.function said %d things, first: %s" % (
            ctx.op.python_name, len(said), said[0][:400]))
    return "%d AutoGraph traces: no warning, log record or output" % len(samples)
