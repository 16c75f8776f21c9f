"""The fixes the checks print: the rebuild command, ``source`` of CANN's set_env.sh found on
this host, the ``export`` line for ASCEND_CUSTOM_OPP_PATH. Checks refer to ``remedies.REBUILD``
through the module, so that one value serves (and a test may replace) them all."""
import os
import shlex

from .. import _library, _environment as environment, op_def, _path_rules as path_rules
from .._build import cann_toolkit
from .results import Instruction

REBUILD = _library.rebuild_command()
if REBUILD == _library.REBUILD_COMMAND:  # no source folder known: where to run it is the user's
    REBUILD = Instruction(REBUILD)


SET_ENV = "set_env.sh"


# Where the CANN installer puts the toolkit under an install folder: cann/ (the layout of
# CANN's documents since 8.5.0), ascend-toolkit/ (the older one, with the toolkit itself in
# ascend-toolkit/latest); docs/cann.md, "Where CANN is installed".
CANN_INSTALL_SUBDIRS = ("cann", "ascend-toolkit")


NEW_OPP_LAYOUT = Instruction("use a CANN whose opp folder has built-in/ (CANN 6.0 or later) "
                             "and source its set_env.sh")


def source_cann(ctx, then=None):
    """The fix that sets up the CANN environment (and then runs ``then``): ``source`` of the
    set_env.sh found on this host, or an Instruction where there is none."""
    script = ctx.set_env_script()
    if script:
        command = "source " + shlex.quote(script)
        if isinstance(then, Instruction):
            return Instruction("run %s, then %s" % (command, then))
        return command + " && " + then if then else command
    return Instruction("install the CANN toolkit, then source its set_env.sh (/usr/local/Ascend/"
                       "cann/set_env.sh for an install as root)%s" % (", then run: " + then
                                                                      if then else ""))


def toolkit_home(script):
    folder = os.path.dirname(script)
    latest = os.path.join(folder, "latest")
    return latest if os.path.isdir(latest) else folder


def ge_rebuild_fix(ctx):
    """How to rebuild so that the GE library is built: the rebuild itself where this shell's
    toolkit can host it, ``source`` + rebuild where a found one can, else an Instruction."""
    if cann_toolkit.from_environment(ctx.environ).build:
        return REBUILD
    script = ctx.set_env_script()
    if script and cann_toolkit.inspect(toolkit_home(script)).build:
        return source_cann(ctx, REBUILD)
    return Instruction("install a CANN toolkit >= %s, source its set_env.sh, then rebuild: %s"
                       % (cann_toolkit.MINIMUM_CANN, REBUILD))


def export_line(root, value=None):
    """The shell command that puts ``root`` first in ASCEND_CUSTOM_OPP_PATH, keeping only the
    entries of ``value`` that every program resolves alike (existing absolute folders)."""
    kept = [e for e in environment.split_path_list(value or "")
            if e and os.path.isabs(e) and os.path.isdir(e)
            and not environment.contains_root(e, root)]
    return "export %s=%s" % (path_rules.CUSTOM_OPP_PATH_VAR,
                             shlex.quote(":".join([root] + list(dict.fromkeys(kept)))))


def op_names():
    """Every op of the package in words: "AddCustom and LeakyReluCustom"."""
    return op_def.type_names()
