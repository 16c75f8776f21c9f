"""Build step: the GE side (``ge_ops/``). It builds only what the package ships.

Always: the ``REG_OP`` headers generated from ``op_def.py`` by ``ge_ops/codegen/`` (pure
Python, no compiler), installed into ``opp/op_graph/include/``.

Only when ``ASCEND_HOME_PATH`` points at a CANN toolkit that can host them (feature
detection, :mod:`.cann_toolkit`): the GE library (``opp/op_graph/lib/linux/<arch>/``) and the
TF parser plugin (``opp/framework/tensorflow/``), built by the CMake project ``ge_ops/`` with
the CANN-free core they link. Otherwise neither CMake nor a compiler runs here: the step says
once, in one line, that it skipped them and why (toolkit version, what is missing, the CANN
that has it), and records the decision in ``build_info["ge"]`` (``tf-ge-custom doctor``
reports it); the CPU op still installs. ``TF_GE_CUSTOM_REQUIRE_GE=1`` turns that skip into a
build failure. A toolkit that passes detection and then fails to compile stops the build,
showing the compiler's first error.

The core's native tests and fuzz driver (tests/native/) and the Execute-path benchmark
(benchmarks/ge_bench/) live outside ``ge_ops/``: the tests (tests/ge/conftest.py) and the
benchmark add them to a build of it with :func:`configure_and_build` and
``-DTF_GE_CUSTOM_TESTS_DIR`` / ``-DTF_GE_CUSTOM_BENCH_DIR``; an install passes both empty.
"""
import importlib.util
import os
import shutil
import sys

from . import BuildError, run_command
from . import cann_toolkit as cann
from .._atomic_files import copy_file
from ..opp import GE_INCLUDE_DIR, ge_library_dir

GE_SOURCE_DIR = "ge_ops"
BUILD_SUBDIR = "ge"
GE_LIBRARY = "libtf_ge_custom_ge.so"
PARSER_LIBRARY = "libtf_ge_custom_parsers.so"
TOOL_DIR = "_lib"
CANN_TARGETS = ("tf_ge_custom_ge", "tf_ge_custom_parsers")
# the offline-export tools (ge_ops/export/, CANN only), installed into _lib/ (docs/export.md)
AIR_TOOL = "tf_ge_custom_air_tool"
EXPORT_TOOLS = (AIR_TOOL, "tf_ge_custom_om_runner")


def cann_toolkit(env=None):
    """``(ascend_home, None)`` for a toolkit that can host the GE library, else
    ``(ascend_home_or_None, reason)``: the short form of ``cann_toolkit.from_environment``."""
    toolkit = cann.from_environment(env)
    return toolkit.home, (toolkit.reason or None)


def cmake_command():
    cmake = shutil.which("cmake")
    if cmake is None:
        raise BuildError("cmake is needed to build ge_ops/ (the GE libraries against CANN, or the "
                         "core's tests) but is not on PATH; install it (apt-get install cmake, "
                         "or pip install cmake)")
    return cmake


def generate_sources(source_root, out_dir):
    """The sources ``ge_ops/codegen/generate_op_sources.py`` writes from op_def.py and
    kernel_contract.py (the same files CMake generates); returns their paths."""
    path = os.path.join(source_root, GE_SOURCE_DIR, "codegen", "generate_op_sources.py")
    spec = importlib.util.spec_from_file_location("_tf_ge_custom_codegen", path)
    codegen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(codegen)
    return codegen.generate(os.path.join(source_root, "tf_ge_custom", "op_def.py"), out_dir)


def configure(source_root, build_dir, options=(), log=None, verbose=False):
    """Configure ge_ops/ into build_dir (nothing built); returns build_dir."""
    log = log or (lambda message: sys.stderr.write(message + "\n"))
    cmd = [cmake_command(), "-S", os.path.join(source_root, GE_SOURCE_DIR), "-B", build_dir,
           "-DCMAKE_BUILD_TYPE=Release",
           "-DPython3_EXECUTABLE=" + sys.executable,
           "-DTF_GE_CUSTOM_OP_DEF=" + os.path.join(source_root, "tf_ge_custom", "op_def.py")]
    run_command(cmd + list(options), log, verbose)
    return build_dir


def configure_and_build(source_root, build_dir, targets, jobs=2, options=(), log=None,
                        verbose=False):
    """Configure ge_ops/ into build_dir and build targets; returns build_dir.

    Also used by the tests (tests/ge/), so that they build the core as setup.py does.
    """
    log = log or (lambda message: sys.stderr.write(message + "\n"))
    configure(source_root, build_dir, options, log, verbose)
    build = [cmake_command(), "--build", build_dir, "--parallel", str(max(1, jobs))]
    for target in targets:
        build += ["--target", target]
    run_command(build, log, verbose)
    return build_dir


def cann_options(toolkit):
    """The CMake options of the install's build against ``toolkit`` (one that can host the GE
    library). The development builds' folders are passed empty: a build folder the tests
    configured before (tests/ge/test_ge_step.py) keeps no test target."""
    return ["-DTF_GE_CUSTOM_WITH_CANN=ON", "-DTF_GE_CUSTOM_TESTS_DIR=", "-DTF_GE_CUSTOM_BENCH_DIR=",
            "-DASCEND_HOME_PATH=" + toolkit.home,
            "-DTF_GE_CUSTOM_CANN_REGISTRY_ARCHIVE=" + os.path.join(
                toolkit.home, cann.LIBRARY_DIR, "libcustom_op_registry_static.a")]


def export_tools(toolkit):
    """The export tools this toolkit can build: the OM runner needs only ACL; the AIR tool
    also the TF parser API (without it, `export` takes the .pb route: docs/export.md)."""
    return tuple(t for t in EXPORT_TOOLS if t != AIR_TOOL or toolkit.air_tool)


def install_targets(toolkit):
    """The CMake targets the install builds against ``toolkit``."""
    return CANN_TARGETS + export_tools(toolkit)


def decide(env=None):
    """The toolkit record for this build; raises BuildError when a skip is not allowed."""
    try:
        required = cann.require_ge(env)
    except ValueError as e:
        raise BuildError(str(e))
    toolkit = cann.from_environment(env)
    if required and not toolkit.build:
        raise BuildError("%s=1 asks for the GE library, but it cannot be built: %s"
                         % (cann.REQUIRE_VAR, toolkit.reason))
    return toolkit


def run(ctx):
    build_dir = os.path.join(ctx.build_temp, BUILD_SUBDIR)
    toolkit = decide()
    generate_sources(ctx.source_root, os.path.join(build_dir, "generated"))
    if toolkit.build:
        options = cann_options(toolkit)
        ctx.log("building the GE library and TF parser plugin against %s at %s"
                % (cann.describe(toolkit.version), toolkit.home))
        from .. import _heartbeat

        try:
            with _heartbeat.Heartbeat(ctx.log, "building the GE library and TF parser plugin"):
                configure_and_build(ctx.source_root, build_dir, install_targets(toolkit),
                                    ctx.jobs, options, ctx.log, ctx.verbose)
        except BuildError as e:
            raise BuildError("building the GE library against %s at %s failed (the toolkit has "
                             "every feature it needs, so this is not skipped)%s\n%s" % (
                                 cann.describe(toolkit.version), toolkit.home,
                                 "; first error:\n  %s" % e.first_error if e.first_error else "", e),
                             e.first_error)
    else:
        ctx.log("GE library and TF parser plugin skipped: " + toolkit.reason)

    headers = []
    proto_dir = os.path.join(build_dir, "generated", "op_proto")
    for name in sorted(os.listdir(proto_dir)):
        if name.endswith(".h"):
            relative = GE_INCLUDE_DIR + "/" + name
            copy_file(os.path.join(proto_dir, name), os.path.join(ctx.opp_root, relative))
            headers.append(relative)

    libraries = []
    if toolkit.build:
        for built, relative in ((GE_LIBRARY, ge_library_dir() + "/" + GE_LIBRARY),
                                (PARSER_LIBRARY, "framework/tensorflow/" + PARSER_LIBRARY)):
            copy_file(os.path.join(build_dir, built), os.path.join(ctx.opp_root, relative))
            libraries.append(relative)
        for tool in export_tools(toolkit):
            copy_file(os.path.join(build_dir, "export", tool), os.path.join(ctx.package_dir, TOOL_DIR, tool))
    ctx.build_info["ge"] = {
        "built": toolkit.build,
        "reason": toolkit.reason,
        "ascend_home": toolkit.home,
        "toolkit": toolkit.as_dict(),
        "libraries": libraries,
        "headers": headers,
        "export_tools": [TOOL_DIR + "/" + t for t in export_tools(toolkit)] if toolkit.build else [],
    }
