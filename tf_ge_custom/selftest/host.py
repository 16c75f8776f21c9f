"""What this host has, for the selftest's decisions: cheap looks, no TensorFlow, no device call.

:func:`probe` fills a :class:`Host`; :meth:`Host.missing` turns each requirement of
:data:`tf_ge_custom.selftest.stages.REQUIREMENTS` into "" (present) or the words a SKIP line
shows (what is missing and how to get it). Tests build a Host by hand.
"""
import argparse
import glob
import importlib.util
import os
import platform
import re
import sys

from .. import _library
from .._build import cann_toolkit
from .._version import __version__
from ..errors import MissingToolchainError, OpLibraryError

_DEVICE_NODE = re.compile(r"^/dev/davinci[0-9]+$")
ADAPTER_HINT = ("install the TF Adapter wheel that matches your CANN and TensorFlow "
                "(github.com/hicann/tensorflow) and source CANN's set_env.sh")  # for device.py


def _importable(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def npu_device_nodes(pattern="/dev/davinci*"):
    """The Ascend driver's device nodes (``/dev/davinci0`` ...; not ``davinci_manager``)."""
    return sorted(p for p in glob.glob(pattern) if _DEVICE_NODE.match(p))


def build_kernels_has_cache():
    """Whether ``tf-ge-custom build-kernels`` takes ``--cache`` (compile at graph build)."""
    try:
        from .._commands import build_kernels
    except ImportError:
        return False
    parser = argparse.ArgumentParser()
    build_kernels.add_arguments(parser)
    return any("--cache" in action.option_strings for action in parser._actions)


class Host(object):
    """The facts; every argument has the meaning of :func:`probe`'s finding."""

    def __init__(self, modules=None, npu_devices=(), cann_home=None, cann_version=None, cann_reason="",
                 atc=None, ge_built=False, ge_reason="", om_runner=None, soc=None, soc_source=None,
                 soc_error="", build_kernels_cache=False, build_info_error=""):
        self.modules = dict(modules or {})
        self.npu_devices = list(npu_devices)
        self.cann_home, self.cann_version, self.cann_reason = cann_home, cann_version, cann_reason
        self.atc = atc
        self.ge_built, self.ge_reason = ge_built, ge_reason
        self.om_runner = om_runner
        self.soc, self.soc_source, self.soc_error = soc, soc_source, soc_error
        self.build_kernels_cache = build_kernels_cache
        self.build_info_error = build_info_error

    def has(self, module):
        return bool(self.modules.get(module))

    @property
    def adapter(self):
        """The TF Adapter the NPU stages use: npu_bridge (TF1) first, else npu_device (TF2)."""
        for name in ("npu_bridge", "npu_device"):
            if self.has(name):
                return name
        return None

    def missing(self, requirement):
        """"" when the host has ``requirement``; else what is missing, in a SKIP line's words
        (docs/selftest.md says how to get each piece)."""
        if requirement == "tf_adapter":
            return "" if self.adapter else "TF Adapter (neither npu_bridge nor npu_device is importable)"
        if requirement in ("npu_bridge", "npu_device"):
            if self.has(requirement):
                return ""
            other = "npu_device" if requirement == "npu_bridge" else "npu_bridge"
            return "%s (TF Adapter for %s; not importable%s)" % (
                requirement, "TF1" if requirement == "npu_bridge" else "TF2",
                ", this host has %s" % other if self.has(other) else "")
        if requirement == "npu":
            return "" if self.npu_devices else "an Ascend NPU (no /dev/davinci<N>)"
        if requirement == "soc":
            return "" if self.soc else "the SoC name (pass --soc, e.g. --soc Ascend910B1%s)" % (
                "; the device did not say: " + self.soc_error if self.soc_error else "")
        if requirement == "cann":
            return "" if self.cann_home and os.path.isdir(self.cann_home) else "a CANN toolkit (%s)" % (
                "ASCEND_HOME_PATH=%s is not a folder" % self.cann_home if self.cann_home
                else "ASCEND_HOME_PATH is not set: source <CANN install>/set_env.sh")
        if requirement == "atc":
            return "" if self.atc else "atc (CANN's model converter, not on PATH)"
        if requirement == "ge_library":
            reason = (self.ge_reason or self.build_info_error or "no reason recorded").split(";")[0]
            return "" if self.ge_built else "the GE library (this build has none: %s)" % reason
        if requirement == "om_runner":
            return "" if self.om_runner else "the OM runner (built only with a CANN toolkit)"
        if requirement == "build_kernels_cache":
            return "" if self.build_kernels_cache else (
                "`tf-ge-custom build-kernels --cache` (compile at graph build; not in tf-ge-custom %s)" % __version__)
        raise KeyError("unknown requirement %r" % requirement)

    def as_dict(self):
        return {"modules": dict(self.modules), "npu_devices": list(self.npu_devices),
                "cann": {"home": self.cann_home, "version": self.cann_version, "reason": self.cann_reason},
                "atc": self.atc, "ge_library": {"built": self.ge_built, "reason": self.ge_reason},
                "om_runner": self.om_runner,
                "soc": {"name": self.soc, "source": self.soc_source, "error": self.soc_error},
                "build_kernels_cache": self.build_kernels_cache}

    @classmethod
    def from_dict(cls, d):
        return cls(modules=d["modules"], npu_devices=d["npu_devices"], cann_home=d["cann"]["home"],
                   cann_version=d["cann"]["version"], cann_reason=d["cann"]["reason"], atc=d["atc"],
                   ge_built=d["ge_library"]["built"], ge_reason=d["ge_library"]["reason"],
                   om_runner=d["om_runner"], soc=d["soc"]["name"], soc_source=d["soc"]["source"],
                   soc_error=d["soc"]["error"], build_kernels_cache=d["build_kernels_cache"])


def probe(soc=None, detect_soc=None, env=None):
    """What this host has. ``soc``: the --soc value; else, on a host with an NPU,
    ``detect_soc()`` is asked (it returns ``(name, error)``; it runs in a child process)."""
    env = os.environ if env is None else env
    from tf_ge_custom.export.cann_tools import toolchain

    modules = {name: _importable(name) for name in ("npu_bridge", "npu_device")}
    devices = npu_device_nodes()
    toolkit = cann_toolkit.from_environment(env)
    cann_reason = "" if toolkit.home and os.path.isdir(toolkit.home) else toolkit.reason
    try:
        atc = toolchain.find_atc(env)
    except MissingToolchainError:
        atc = None
    build_info_error = ""
    try:
        ge = _library.build_info().get("ge") or {}
    except OpLibraryError as e:
        ge, build_info_error = {}, str(e)
    try:
        om_runner = toolchain.find_om_runner(env)
    except MissingToolchainError:
        om_runner = None
    soc_source, soc_error = ("--soc" if soc else None), ""
    if not soc and devices and detect_soc is not None:
        soc, soc_error = detect_soc()
        soc_source = "the device (pyACL's acl.get_soc_name)" if soc else None
    return Host(modules=modules, npu_devices=devices, cann_home=toolkit.home, cann_version=toolkit.version,
                cann_reason=cann_reason, atc=atc, ge_built=bool(ge.get("built")), ge_reason=ge.get("reason") or "",
                om_runner=om_runner, soc=soc or None, soc_source=soc_source, soc_error=soc_error,
                build_kernels_cache=build_kernels_has_cache(), build_info_error=build_info_error)


def platform_facts():
    return {"python": platform.python_version(), "executable": sys.executable, "system": platform.system(),
            "machine": platform.machine(), "release": platform.release()}
