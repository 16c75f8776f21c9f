"""Helpers for the selftest's tests: the console script, the doubles folder, a host double."""
import os
import sys

import pytest

DOUBLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "doubles")
COMMAND = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")


def doubles_env(behaviours="", **extra):
    """The environment for children that import the test doubles (tests/selftest/doubles)."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", TF_GE_CUSTOM_SELFTEST_DOUBLE=behaviours, **extra)
    env["PYTHONPATH"] = DOUBLES + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


@pytest.fixture
def full_host(tmp_path):
    """A HOST DOUBLE that has every piece of the Ascend stack (nothing here is real)."""
    from tf_ge_custom.selftest.host import Host

    def make(**changes):
        facts = dict(modules={"npu_bridge": True, "npu_device": True}, npu_devices=["/dev/davinci0"],
                     cann_home=str(tmp_path), cann_version="9.2.0-beta.1", atc="/usr/bin/true", ge_built=True,
                     om_runner="/usr/bin/true", soc="Ascend910B1", soc_source="--soc", build_kernels_cache=True)
        facts.update(changes)
        return Host(**facts)

    return make


@pytest.fixture(scope="session")
def selftest_paths():
    return {"doubles": DOUBLES, "command": COMMAND, "env": doubles_env}
