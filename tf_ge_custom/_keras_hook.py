"""``import tf_ge_custom`` makes the package's Keras layers (``AddCustom``,
``LeakyReluCustom``) loadable without importing Keras.

A ``.keras`` / ``.h5`` file that holds a layer names it (``tf_ge_custom>AddCustom``), and
Keras finds it only if ``tf_ge_custom.layers`` registered it first. Importing Keras costs a
second or more, so ``import tf_ge_custom`` does not: when Keras is already imported the layers
are registered at once; otherwise a finder on ``sys.meta_path`` waits for the first import of
``keras`` (or ``tf_keras``) and registers the layers right after that module has run. The
finder only watches those names and hands every import to the usual finders.
"""
import importlib
import sys
import warnings

KERAS_MODULES = ("keras", "tf_keras", "tensorflow.python.keras")
_registered = False


def register_layers():
    """Import ``tf_ge_custom.layers`` (registers the layer); a failure is a warning only."""
    global _registered
    if _registered:
        return
    _registered = True
    _uninstall()
    try:
        importlib.import_module("tf_ge_custom.layers")
    except Exception as e:  # a Keras we cannot register with must not break its import
        warnings.warn("tf_ge_custom could not register its Keras layers (%s: %s); "
                      "import tf_ge_custom.layers before loading a model that holds one"
                      % (type(e).__name__, e), RuntimeWarning, stacklevel=2)


class _Loader(object):
    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        register_layers()

    def __getattr__(self, name):  # everything else (get_code, is_package, ...) as it was
        return getattr(self._loader, name)


class _KerasFinder(object):
    _busy = False

    def find_spec(self, name, path=None, target=None):
        if name not in ("keras", "tf_keras") or self._busy:
            return None
        self._busy = True
        try:
            import importlib.util

            spec = importlib.util.find_spec(name)
        finally:
            self._busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _Loader(spec.loader)
        return spec


_FINDER = _KerasFinder()


def _uninstall():
    try:
        sys.meta_path.remove(_FINDER)
    except ValueError:
        pass


def install():
    """Register now if Keras is imported, else when it is."""
    if any(name in sys.modules for name in KERAS_MODULES):
        register_layers()
    elif _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
