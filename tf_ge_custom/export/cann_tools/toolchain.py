"""Where the CANN-side tools are, what they need, and the environment they run in.

- ``atc``: ``$TF_GE_CUSTOM_ATC``, else ``atc`` on ``PATH`` (CANN's ``set_env.sh`` puts it
  there), else ``$ASCEND_HOME_PATH/bin/atc``.
- the AIR tool and the OM runner: built with the package when a CANN toolkit was present
  (``<package>/_lib/``); ``$TF_GE_CUSTOM_AIR_TOOL`` / ``$TF_GE_CUSTOM_OM_RUNNER`` override.
  Both link CANN's libraries, so they also need the toolkit's environment (``set_env.sh``).
- the deliverables an OM with the package's op nodes needs from our OPP root: the GE library,
  the TF parser plugin, and an npubin for the target SoC for each (op type, dtype) of the
  graph's nodes.

``atc`` and the AIR tool run with our OPP root first in ``ASCEND_CUSTOM_OPP_PATH``; the OM
runner runs with the variable removed, so that a passing run proves the OM carries the
kernel (docs/export.md).
"""
import os
import shutil

from tf_ge_custom._environment import CUSTOM_OPP_PATH_VAR, with_opp_root
from tf_ge_custom.errors import MissingToolchainError
from tf_ge_custom import opp
from tf_ge_custom.export.graph_record import DEFAULT_OP

ATC_ENV = "TF_GE_CUSTOM_ATC"
AIR_TOOL_ENV = "TF_GE_CUSTOM_AIR_TOOL"
OM_RUNNER_ENV = "TF_GE_CUSTOM_OM_RUNNER"
AIR_TOOL_NAME = "tf_ge_custom_air_tool"
OM_RUNNER_NAME = "tf_ge_custom_om_runner"
GE_LIBRARY = "libtf_ge_custom_ge.so"
PARSER_LIBRARY = "libtf_ge_custom_parsers.so"
SOURCE_CANN = ("source the CANN toolkit's environment: `source /usr/local/Ascend/ascend-toolkit/"
               "set_env.sh` (or set_env.sh of your CANN install)")
REINSTALL = ("with the CANN environment sourced, reinstall tf-ge-custom so that it builds "
             "them: pip install --no-deps --force-reinstall .")
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _executable(path):
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def _explicit(var, env):
    path = env.get(var)
    if not path:
        return None
    if not _executable(path):
        raise MissingToolchainError("%s=%s is not an executable file" % (var, path))
    return path


def find_atc(env=None):
    """The ``atc`` to run; :class:`MissingToolchainError` saying how to get it."""
    env = os.environ if env is None else env
    found = _explicit(ATC_ENV, env) or shutil.which("atc", path=env.get("PATH", os.defpath))
    if found:
        return found
    home = env.get("ASCEND_HOME_PATH")
    if home and _executable(os.path.join(home, "bin", "atc")):
        return os.path.join(home, "bin", "atc")
    raise MissingToolchainError(
        "atc (CANN's model converter) was not found: not on PATH%s. Install the CANN toolkit and %s"
        % ("" if not home else ", not in %s/bin" % home, SOURCE_CANN))


def built_tool(name, var, env=None, package_dir=_PACKAGE_DIR):
    """Path of our tool ``name`` (``_lib/<name>`` or ``$var``), or None when it was not built."""
    env = os.environ if env is None else env
    explicit = _explicit(var, env)
    if explicit:
        return explicit
    path = os.path.join(package_dir, "_lib", name)
    return path if _executable(path) else None


def find_air_tool(env=None, package_dir=_PACKAGE_DIR):
    return built_tool(AIR_TOOL_NAME, AIR_TOOL_ENV, env, package_dir)


def find_om_runner(env=None, package_dir=_PACKAGE_DIR):
    return built_tool(OM_RUNNER_NAME, OM_RUNNER_ENV, env, package_dir)


def _build_reason():
    try:
        from tf_ge_custom._library import build_info
        reason = (build_info().get("ge") or {}).get("reason")
    except Exception:  # a broken record must not hide the real message
        reason = None
    return (" (the build said: %s)" % reason) if reason else ""


def require_built_tool(path, what, var):
    """``path`` or :class:`MissingToolchainError` saying how to build ``what``."""
    if path:
        return path
    raise MissingToolchainError(
        "the %s was not built: this tf-ge-custom was installed without a CANN toolkit%s; %s "
        "(or set %s)" % (what, _build_reason(), REINSTALL, var))


def require_cann_environment(what, env=None):
    """Our CANN-linked tools need the toolkit's environment (its libraries on the path)."""
    env = os.environ if env is None else env
    if not env.get("ASCEND_HOME_PATH") and not env.get("ASCEND_TOOLKIT_HOME"):
        raise MissingToolchainError("the %s needs the CANN libraries, but ASCEND_HOME_PATH is not "
                                    "set: %s" % (what, SOURCE_CANN))


def tool_environment(opp_root, env=None):
    """The environment for ``atc`` and the AIR tool: our OPP root first in the custom path."""
    env = dict(os.environ if env is None else env)
    env[CUSTOM_OPP_PATH_VAR] = with_opp_root(env.get(CUSTOM_OPP_PATH_VAR), opp_root)
    return env


def runner_environment(env=None):
    """The environment for the OM runner: ``ASCEND_CUSTOM_OPP_PATH`` removed."""
    env = dict(os.environ if env is None else env)
    env.pop(CUSTOM_OPP_PATH_VAR, None)
    return env


def deliverable_problems(opp_root, soc, kernels, arch=None):
    """What an OM with custom op nodes for ``soc`` lacks in ``opp_root``.

    ``kernels``: the (op type, dtype) pairs of the graph's nodes (``GraphRecord.kernels()``);
    a bare dtype stands for AddCustom's, as the records before a second op shipped had it."""
    from tf_ge_custom import kernel_manifest

    kernels = sorted(set(k if isinstance(k, tuple) else (DEFAULT_OP, k) for k in kernels or ()))
    problems = []
    library = os.path.join(opp_root, opp.ge_library_dir(arch), GE_LIBRARY)
    parser = os.path.join(opp_root, "framework", "tensorflow", PARSER_LIBRARY)
    missing = [what for path, what in ((library, "GE library " + GE_LIBRARY),
                                       (parser, "TF parser plugin " + PARSER_LIBRARY))
               if not os.path.isfile(path)]
    ops = sorted(set(op for op, _ in kernels)) or [DEFAULT_OP]
    if missing:
        problems.append("the OPP root %s lacks the %s, which ATC needs for %s%s; %s"
                        % (opp_root, " and the ".join(missing), " and ".join(ops), _build_reason(),
                           REINSTALL))
    if not (soc and kernels):
        return problems
    manifest_path = os.path.join(opp_root, opp.KERNELS_DIR, soc, kernel_manifest.MANIFEST_NAME)
    if not os.path.isfile(manifest_path):
        problems.append("no npubins for %s under %s: build them on a CANN host (tf-ge-custom "
                        "build-kernels --soc %s), then reinstall" % (soc, os.path.dirname(manifest_path), soc))
    else:
        try:
            manifest = kernel_manifest.load_manifest(manifest_path, check_files=True)
        except kernel_manifest.ManifestError as e:
            problems.append("the npubins for %s are not usable: %s" % (soc, e))
        else:
            have = set((k.op, k.dtype) for k in manifest.kernels if k.binary)
            for op in ops:  # one sentence per op, its dtypes in it
                missing = [d for o, d in kernels if o == op and (o, d) not in have]
                if missing:
                    problems.append("no npubin for %s on %s (the graph's %s nodes use it): build "
                                    "it (tf-ge-custom build-kernels --soc %s --dtype %s), then "
                                    "reinstall" % (", ".join(sorted(missing)), soc, op, soc,
                                                   ",".join(sorted(missing))))
    return problems
