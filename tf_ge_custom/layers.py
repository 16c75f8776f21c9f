"""Keras layers over ``add_custom`` and ``leaky_relu_custom``, serializable so that saved
models reload.

``import tf_ge_custom.layers`` (or the attribute ``tf_ge_custom.layers``) registers the
layers under ``tf_ge_custom>AddCustom`` and ``tf_ge_custom>LeakyReluCustom``; a saved
``.keras`` / H5 / SavedModel Keras model using them reloads after that import, or with
``custom_objects=custom_objects()``.
Imported on first use only: Keras adds a second or more to ``import tf_ge_custom``.
"""
import tensorflow as tf

from ._op_function import attr_value as _attr_value
from .op_def import LEAKY_RELU_CUSTOM
from .ops import add_custom, leaky_relu_custom

_keras = tf.keras


def _register(cls):
    # Keras 3 and tf.keras >= 2.1 have a registry; TF 1.15's tf.keras only custom objects.
    register = getattr(getattr(_keras, "saving", None), "register_keras_serializable", None)
    if register is None:
        register = getattr(_keras.utils, "register_keras_serializable", None)
    objects = _keras.utils.get_custom_objects()
    # TF 1.15's Keras writes the bare class name into .h5 files whatever the registry says:
    # register that too (unless another package took the name), so that they reload.
    objects.setdefault(cls.__name__, cls)
    if register is not None:
        return register(package="tf_ge_custom")(cls)
    objects["tf_ge_custom>" + cls.__name__] = cls
    return cls


@_register
class AddCustom(_keras.layers.Layer):
    """``z = x + y`` of two inputs through the AddCustom op (broadcasting like ``+``).

    It behaves as ``keras.layers.Add`` does for two inputs: the output mask is the one
    ``Add`` computes from the input masks (its own ``compute_mask``: with Keras 3 the logical
    or of both, None unless both have one; with tf.keras 2, 1.15's included, the logical and
    of those given), so an ``Embedding(mask_zero=True)`` in front keeps masking an LSTM behind;
    ``compute_output_shape`` is the broadcast shape of the two inputs.

    Example::

        a = keras.Input((8,)); b = keras.Input((8,))
        model = keras.Model([a, b], tf_ge_custom.layers.AddCustom()([a, b]))
    """

    def __init__(self, **kwargs):
        super(AddCustom, self).__init__(**kwargs)
        self.supports_masking = True
        _built_at_init(self)

    def call(self, inputs):
        _check_two(inputs)
        return add_custom(inputs[0], inputs[1])

    def compute_mask(self, inputs, mask=None):
        # keras.layers.Add's rule, taken from the Keras installed (it reads only its arguments)
        return _keras.layers.Add.compute_mask(self, inputs, mask)

    def compute_output_shape(self, input_shape):
        _check_two(input_shape, "input shapes")
        x, y = (tf.TensorShape(s) for s in input_shape)
        try:
            z = tf.broadcast_static_shape(x, y)
        except ValueError:
            raise ValueError("AddCustom: x %s and y %s are not broadcast-compatible (each "
                             "dimension must be equal, or 1 in one of them)" % (x, y))
        if isinstance(input_shape[0], tf.TensorShape):  # tf.keras 2 passes TensorShapes
            return z
        return tuple(z.as_list()) if z.rank is not None else None  # Keras 3: a tuple

    def compute_output_spec(self, inputs, *args, **kwargs):
        """Keras 3's symbolic output: the broadcast shape, the inputs' dtype (they share one,
        autocast already; Keras' default would take the layer's compute dtype, wrong for
        int32)."""
        _check_two(inputs)
        shape = self.compute_output_shape([tuple(i.shape) for i in inputs])
        return _keras.KerasTensor(shape, dtype=inputs[0].dtype)


def _built_at_init(layer):
    """Mark the weightless ``layer`` built once made, as Keras 3 does for its own stateless
    layers (``keras.layers.LeakyReLU`` calls ``_build_at_init``). Keras skips that when a
    subclass defines ``build``. tf.keras 2 has no such step: there the layer builds on its
    first call, as tf.keras 2's own layers do."""
    build_at_init = getattr(layer, "_build_at_init", None)
    if build_at_init is not None:
        build_at_init()


def _check_two(inputs, what="inputs"):
    if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
        raise ValueError(
            "AddCustom layer expects a list of two %s [x, y], got %r" % (what, inputs))


@_register
class LeakyReluCustom(_keras.layers.Layer):
    """``y = x if x > 0 else x * alpha`` through the LeakyReluCustom op: what
    ``keras.layers.LeakyReLU`` computes, bit for bit as ``tf.nn.leaky_relu``.

    ``alpha`` is checked as the op's attribute is (a real number; op_def.py's range); the
    output has the input's shape and dtype, and a mask passes through unchanged.

    Example::

        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(8),
                                  tf_ge_custom.layers.LeakyReluCustom(alpha=0.1)])
    """

    def __init__(self, alpha=LEAKY_RELU_CUSTOM.attr("alpha").default, **kwargs):
        super(LeakyReluCustom, self).__init__(**kwargs)
        self.alpha = _attr_value(LEAKY_RELU_CUSTOM, LEAKY_RELU_CUSTOM.attr("alpha"), alpha)
        self.supports_masking = True
        _built_at_init(self)

    def call(self, inputs):
        return leaky_relu_custom(inputs, alpha=self.alpha)

    def compute_mask(self, inputs, mask=None):
        return mask

    def compute_output_shape(self, input_shape):
        return input_shape

    def compute_output_spec(self, inputs, *args, **kwargs):
        """Keras 3's symbolic output: the input's shape and dtype."""
        return _keras.KerasTensor(tuple(inputs.shape), dtype=inputs.dtype)

    def get_config(self):
        config = super(LeakyReluCustom, self).get_config()
        config["alpha"] = self.alpha
        return config


def custom_objects():
    """The ``custom_objects`` mapping for Keras loaders that need it explicitly."""
    return {"AddCustom": AddCustom, "tf_ge_custom>AddCustom": AddCustom,
            "LeakyReluCustom": LeakyReluCustom, "tf_ge_custom>LeakyReluCustom": LeakyReluCustom}
