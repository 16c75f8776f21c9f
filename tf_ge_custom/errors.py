"""The package's named exceptions.

Each derives from :class:`TfGeCustomError` and from the builtin that callers already catch
for that kind of mistake, so ``except TypeError`` keeps working for a wrong dtype.
Messages say what was expected, what was found and what to do.
"""


class TfGeCustomError(Exception):
    """Base of every error this package raises on purpose."""


class OpLibraryError(TfGeCustomError, ImportError):
    """The TensorFlow op library is missing, unloadable, or built for another TensorFlow."""


class DTypeError(TfGeCustomError, TypeError):
    """An argument's dtype is not one the op accepts, or the two arguments disagree."""


class ShapeError(TfGeCustomError, ValueError):
    """The arguments' shapes cannot be combined (not broadcast-compatible)."""


class InputError(TfGeCustomError, TypeError):
    """An argument cannot be converted to a tensor at all (``None``, an arbitrary object)."""
