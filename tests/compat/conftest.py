"""tests/compat runs in the main suite and, in ``make test-compat``, on TF Adapter's
TensorFlows (1.15.5, 2.6.5). test_user_commands.py is for the latter only: on the main suite's
TensorFlow the same console-script runs are tests/user's."""
try:
    from importlib.metadata import version as _version  # novermin (Python 3.8+; 3.7 below)
except ImportError:  # Python 3.7
    import pkg_resources

    def _version(name):
        return pkg_resources.get_distribution(name).version

_MAJOR_MINOR = tuple(int(v) for v in _version("tensorflow").split(".")[:2])
collect_ignore = [] if _MAJOR_MINOR < (2, 16) else ["test_user_commands.py"]
