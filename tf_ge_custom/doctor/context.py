"""What the checks look at: the OPP root, the build record, the environment, what a child
process found of TensorFlow; tests build one over temporary trees."""
import importlib
import importlib.util
import os
import shutil

from .. import _library, _lifecycle, _environment as environment, opp, _path_rules as path_rules
from ..errors import OpLibraryError
from . import probe, remedies

_FROM_PROCESS = object()


def _find_spec(name):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


class Context(object):
    """What the checks look at; tests build one over temporary trees."""

    def __init__(self, root=None, build_info=None, environ=None,
                 shell_custom_opp_path=_FROM_PROCESS,
                 find_spec=None, which=None, arch=None, manifest_reader=None,
                 dlopen_check=None, tensorflow_probe=None, build_info_error="",
                 install_dirs=("/usr/local/Ascend",), cwd=None):
        self.root = root or opp.opp_root()
        self.build_info_error = build_info_error  # why the build record is unusable
        if build_info is None:
            try:
                build_info = _library.build_info()
            except OpLibraryError as e:
                build_info, self.build_info_error = {}, str(e)
        self.build_info = build_info
        self.environ = os.environ if environ is None else environ
        # ASCEND_CUSTOM_OPP_PATH as the shell exported it (what atc sees; None: unset).
        self.shell_custom_opp_path = (environment.original_custom_opp_path()
                                      if shell_custom_opp_path is _FROM_PROCESS
                                      else shell_custom_opp_path)
        self._find_spec = find_spec or _find_spec
        self.which = which or shutil.which
        self.arch = arch or opp.host_arch()
        self._manifest_reader = manifest_reader
        self.dlopen_check = dlopen_check or probe.dlopen_in_child
        # where GE's online compile would write (docs/cann.md); a deleted one is named so
        self.cwd = cwd or _lifecycle.working_directory() or "%s (deleted)" % (
            os.environ.get("PWD") or "the working directory")
        # () -> what a child process found of TensorFlow and the op library (probe_tensorflow)
        self._tensorflow_probe = tensorflow_probe or probe.probe_tensorflow
        self._tensorflow = None
        self.install_dirs = install_dirs  # where CANN and the driver install by default

    def has_module(self, name):
        return self._find_spec(name) is not None

    def tensorflow(self):
        """What one child process found of TensorFlow and the op library (asked once)."""
        if self._tensorflow is None:
            self._tensorflow = self._tensorflow_probe()
        return self._tensorflow

    def ascend_components(self):
        """What of the Ascend stack this host has, in words (empty: none at all)."""
        found = ["%s (importable)" % m for m in ("npu_bridge", "npu_device") if self.has_module(m)]
        found += ["$%s" % var for var in sorted(self.environ)
                  if var.startswith("ASCEND_") and var != path_rules.CUSTOM_OPP_PATH_VAR]
        others = [e for e in environment.split_path_list(
            self.environ.get(path_rules.CUSTOM_OPP_PATH_VAR) or "")
            if e and not environment.contains_root(e, self.root)]
        if others:
            found.append("other ASCEND_CUSTOM_OPP_PATH entries (%s)" % ", ".join(others))
        path = self.environ.get("PATH")
        found += ["%s on PATH" % tool for tool in ("atc", "npu-smi")
                  if self.which(tool, path=path)]
        found += [folder for folder in self.install_dirs if os.path.isdir(folder)]
        ge = self.ge_info() or {}
        if ge.get("built"):
            found.append("a GE library built by this package")
        if (self.build_info.get("kernels") or {}).get("socs"):
            found.append("npubins recorded by this build")
        return found

    def manifest_reader(self):
        """The kernel manifest reader module (raises ImportError when not built yet)."""
        if self._manifest_reader is None:
            self._manifest_reader = importlib.import_module("tf_ge_custom.kernel_manifest")
        return self._manifest_reader

    def cann_home(self):
        """The CANN toolkit folder from the environment set_env.sh exports, or None."""
        for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
            value = self.environ.get(var)
            if value and os.path.isdir(value):
                return value
        return None

    def ge_info(self):
        return self.build_info.get("ge")

    def set_env_script(self):
        """The ``set_env.sh`` of a CANN toolkit on this host, or None: beside the toolkit the
        environment names, else in the default install folders (docs/cann.md, "Where CANN
        is installed")."""
        candidates = []
        home = self.cann_home()
        if home:
            home = home.rstrip("/")
            candidates += [os.path.join(home, remedies.SET_ENV),
                           os.path.join(os.path.dirname(home), remedies.SET_ENV)]
        for folder in self.install_dirs:
            candidates += [os.path.join(folder, sub, remedies.SET_ENV)
                           for sub in remedies.CANN_INSTALL_SUBDIRS]
        return next((c for c in candidates if os.path.isfile(c)), None)
