"""The ATC command line, and finding the OM it wrote.

    atc --mode=0 --framework=3 --model=M.pb  --output=PREFIX --soc_version=SOC [--input_shape=...]
        [--out_nodes=...] [--dynamic_batch_size=... | --dynamic_dims=...] [extra options]
    atc --mode=0 --framework=1 --model=M.air --output=PREFIX --soc_version=SOC ...

Framework codes (``api/atc/atc_flags.cc`` of hicann/ge): 3 = TensorFlow frozen GraphDef,
1 = AIR (listed as "MindSpore", whose export format AIR is). ATC appends ``.om`` to
``--output``; with ``--host_env_os``/``--host_env_cpu`` it inserts ``_<os>_<cpu>`` before it
(``base/common/helper/model_helper.cc``), which :func:`written_om` also accepts.
The options this package sets itself cannot be passed again as extra options.
"""
import glob
import os
import re

from tf_ge_custom.errors import ExportError, ExternalToolError
from tf_ge_custom.export.cann_tools.input_shapes import DYNAMIC_OPTIONS, format_shapes

FRAMEWORK_AIR = 1
FRAMEWORK_TENSORFLOW = 3
# ATC option -> the export option that sets it (these may not appear among the extras)
OWNED = {
    "model": "the MODEL argument",
    "framework": "--via air|pb",
    "output": "--output",
    "soc_version": "--soc",
    "mode": "nothing (the export always converts: --mode=0)",
    "input_shape": "--input-shape",
    "out_nodes": "--outputs",
}
_OPTION = re.compile(r"^--([A-Za-z][A-Za-z0-9_]*)(=(.*))?$", re.S)


def parse_extra_options(options):
    """Check extra ATC options (``--name=value`` or ``--name``); returns ``{name: value}``."""
    parsed = {}
    for option in options or ():
        match = _OPTION.match(option)
        if not match:
            raise ExportError("extra ATC option %r: expected --name=value (e.g. "
                              "--precision_mode_v2=origin)" % option)
        name = match.group(1)
        if name in OWNED:
            raise ExportError("ATC option --%s is set by the export; use %s" % (name, OWNED[name]))
        if name in parsed:
            raise ExportError("ATC option --%s is given twice" % name)
        parsed[name] = match.group(3) if match.group(2) else None
    return parsed


def dynamic_options(extra, batch_size=None, dims=None):
    """``{atc_name: value}`` of ATC's dynamic options, from our flags and the extra options."""
    options = {atc: extra.get(atc) for _, atc in DYNAMIC_OPTIONS if extra.get(atc)}
    for atc, value, flag in (("dynamic_batch_size", batch_size, "--dynamic-batch-size"),
                             ("dynamic_dims", dims, "--dynamic-dims")):
        if value:
            if atc in options:
                raise ExportError("%s is given both as %s and as an extra ATC option" % (atc, flag))
            options[atc] = value
    return options


def atc_command(atc, model, framework, output, soc, input_shapes=None, out_nodes=None,
                dynamic=None, extra=()):
    """The argument list of one ATC run (no shell involved: no quoting needed)."""
    if framework not in (FRAMEWORK_AIR, FRAMEWORK_TENSORFLOW):
        raise ValueError("framework must be 1 (AIR) or 3 (TensorFlow), got %r" % (framework,))
    cmd = [atc, "--mode=0", "--framework=%d" % framework, "--model=" + model,
           "--output=" + output, "--soc_version=" + soc]
    if input_shapes:
        cmd.append("--input_shape=" + format_shapes(input_shapes))
    if out_nodes:
        cmd.append("--out_nodes=" + ";".join(out_nodes))
    extra_names = set()
    for option in extra:
        extra_names.add(option[2:].split("=")[0])
    for name, value in sorted((dynamic or {}).items()):
        if name not in extra_names:
            cmd.append("--%s=%s" % (name, value))
    cmd.extend(extra)
    return cmd


def written_om(output):
    """The ``.om`` ATC wrote for ``--output=output`` (``output.om`` or ``output_<os>_<cpu>.om``)."""
    plain = output + ".om"
    if os.path.isfile(plain):
        return plain
    found = sorted(glob.glob(glob.escape(output) + "_*.om"))
    if len(found) == 1:
        return found[0]
    raise ExternalToolError("atc exited with status 0 but wrote no %s%s" % (
        plain, "" if not found else " (it wrote %s)" % ", ".join(found)))
