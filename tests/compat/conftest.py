"""tests/compat runs in the main suite and, in ``make test-compat``, on TF Adapter's
TensorFlows (1.15.5, 2.6.5). test_user_commands.py is for the latter only: on the main suite's
TensorFlow the same console-script runs are tests/user's. (The version is read from the
installed distribution: importing TensorFlow here would cost every collection its import.)"""
try:
    from importlib.metadata import version as _version  # novermin (Python 3.8+; 3.7 below)
except ImportError:  # Python 3.7
    import pkg_resources

    def _version(name):
        return pkg_resources.get_distribution(name).version


def _tensorflow_version():
    for name in ("tensorflow", "tensorflow-cpu", "tensorflow-gpu"):
        try:
            return tuple(int(v) for v in _version(name).split(".")[:2])
        except Exception:  # not this distribution name
            continue
    return (0, 0)  # unknown: collect everything


collect_ignore = [] if _tensorflow_version() < (2, 16) else ["test_user_commands.py"]
