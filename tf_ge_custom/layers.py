"""Keras layer over ``add_custom``, serializable so that saved models reload.

``import tf_ge_custom.layers`` (or the attribute ``tf_ge_custom.layers``) registers the
layer under ``tf_ge_custom>AddCustom``; a saved ``.keras`` / H5 / SavedModel Keras model
using it reloads after that import, or with ``custom_objects=custom_objects()``.
Imported on first use only: Keras adds a second or more to ``import tf_ge_custom``.
"""
import tensorflow as tf

from .ops import add_custom

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

    Example::

        a = keras.Input((8,)); b = keras.Input((8,))
        model = keras.Model([a, b], tf_ge_custom.layers.AddCustom()([a, b]))
    """

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
            raise ValueError(
                "AddCustom layer expects a list of two inputs [x, y], got %r" % (inputs,))
        return add_custom(inputs[0], inputs[1])


def custom_objects():
    """The ``custom_objects`` mapping for Keras loaders that need it explicitly."""
    return {"AddCustom": AddCustom, "tf_ge_custom>AddCustom": AddCustom}
