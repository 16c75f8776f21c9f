"""What TF Adapter's online path needs before a graph with our ops parses: GE's TF parser
generates a ``REG_OP`` for each op and compiles it with ``g++`` in ``./custom_op_tmp_<pid>/``
of the working directory, against ``ASCEND_HOME_PATH`` (docs/cann.md, "The online op
compile"). One line per need, each with its fix: ``g++`` on ``PATH``, the toolkit
``ASCEND_HOME_PATH`` names, a writable working directory.

Each is a FAIL where TF Adapter is installed (the online path is in use) and a WARN elsewhere.
"""
from .. import _path_rules as path_rules
from . import remedies
from .results import FAIL, OK, WARN, Check, check, Instruction, is_command


def _found(ctx):
    return path_rules.ge_online_compile(ctx.environ, ctx.cwd, ctx.which, remedies.source_cann(ctx))


def _report(ctx, name, found, need, ok_detail):
    """The line of one need: OK, or each of its problems with their fixes. The fix runs as
    printed only when it is the command that sets up CANN; the others are prose."""
    source = remedies.source_cann(ctx)
    problems = found.of(need)
    data = dict(found.as_dict(), need=need, problems=[what for what, _ in problems])
    if not problems:
        return Check(name, OK, ok_detail, data=data)
    adapter = ctx.has_module("npu_bridge") or ctx.has_module("npu_device")
    detail = ("GE's TF parser compiles a REG_OP for %s when it parses a graph, and would fail: %s"
              % (remedies.op_names(), "; ".join(what for what, _ in problems)))
    if not adapter:
        detail += " (TF Adapter is not installed, so this only matters on an NPU host)"
    fixes = []
    for _, fix in problems:
        if fix not in fixes:
            fixes.append(fix)
    fix = "; ".join(fixes)
    if not all(f == source and is_command(source) for f in fixes):
        fix = Instruction(fix)
    return Check(name, FAIL if adapter else WARN, detail, fix, data)


@check("online compile: g++",
       "GE's TF parser compiles the `REG_OP` it generates for each op with `g++` from `PATH` "
       "(TF Adapter's online path, `docs/cann.md`)")
def check_online_compiler(ctx):
    found = _found(ctx)
    return _report(ctx, "online compile: g++", found, path_rules.COMPILER,
                   "%s, the g++ GE's TF parser runs" % found.compiler)


@check("online compile: ASCEND_HOME_PATH",
       "the toolkit GE's TF parser compiles the generated `REG_OP` against: "
       "`ASCEND_HOME_PATH` set, a path GE accepts, with the headers and libraries it uses "
       "(`docs/cann.md`)")
def check_online_toolkit(ctx):
    found = _found(ctx)
    return _report(ctx, "online compile: ASCEND_HOME_PATH", found, path_rules.TOOLKIT,
                   "headers and libraries under %s" % found.home)


@check("online compile: working directory",
       "the working directory, where GE's TF parser writes `custom_op_tmp_<pid>/` to compile "
       "the generated `REG_OP`: writable (`docs/cann.md`)")
def check_online_working_directory(ctx):
    found = _found(ctx)
    return _report(ctx, "online compile: working directory", found, path_rules.WORKING_DIRECTORY,
                   "%s is writable (GE writes custom_op_tmp_<pid>/ in the working directory of "
                   "the program that parses the graph: run it from such a folder)" % found.cwd)
