"""Build and install tf-ge-custom.

``pip install .`` (with or without build isolation) and ``pip wheel .`` both work: the op
library is compiled against the TensorFlow of the interpreter that runs pip, which the
build asks directly (see tf_ge_custom/_build/tensorflow_info.py). The build steps live in
tf_ge_custom/_build/, one module each.
"""
import builtins
import os
import re
import shutil
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
# Importing tf_ge_custom here must not import TensorFlow or load the op library.
builtins.__TF_GE_CUSTOM_SETUP__ = True
sys.path.insert(0, HERE)
from tf_ge_custom import _build, _checkout  # noqa: E402
from tf_ge_custom._build import (ge_step, kernels_step, object_cache, op_library,  # noqa: E402
                                 opp_step)


def _version():
    with open(os.path.join(HERE, "tf_ge_custom", "_version.py")) as f:
        return re.search(r'__version__ = "([^"]+)"', f.read()).group(1)


class BuildPyWithNative(build_py):
    """build_py, then the native build steps into the package being built."""

    def run(self):
        if not getattr(self, "editable_mode", False):
            # setuptools copies modules into build/lib but never removes one: a module moved
            # or deleted since an earlier build from this checkout would still be shipped.
            shutil.rmtree(os.path.join(self.build_lib, "tf_ge_custom"), ignore_errors=True)
        super().run()
        if getattr(self, "editable_mode", False):
            package_dir = os.path.join(HERE, "tf_ge_custom")
        else:
            package_dir = os.path.join(self.build_lib, "tf_ge_custom")
        build_temp = os.path.join(HERE, "build", "temp-tf-ge-custom")
        # Everything under _lib/ and opp/ is written by the steps below: a build folder left
        # by an earlier build must not ship what this build no longer makes.
        for generated in ("_lib", "opp"):
            shutil.rmtree(os.path.join(package_dir, generated), ignore_errors=True)
        try:
            # compiled objects kept between builds: a reinstall compiles only what changed
            ctx = _build.BuildContext(HERE, package_dir, build_temp, verbose=self.verbose > 1,
                                      cache_dir=object_cache.cache_dir(HERE))
            # what this build read: a clone's source tree imported in place hands over to
            # this copy only while the clone still has these sources (tf_ge_custom/_checkout.py)
            ctx.build_info["source"] = {"files": _checkout.source_files(HERE)}
            ge_step.decide()  # TF_GE_CUSTOM_REQUIRE_GE=1 without a usable toolkit: fail at once
            # the OPP step after the GE step: its JSON lists the ops only if GE can run them
            _build.run_steps(ctx, [op_library, ge_step, opp_step, kernels_step])
        except _build.BuildError as e:
            sys.stderr.write("\ntf-ge-custom build failed:\n%s\n" % e)
            raise SystemExit(1)


class BinaryDistribution(Distribution):
    """The wheel carries native libraries: tag it for this platform."""

    def has_ext_modules(self):
        return True


with open(os.path.join(HERE, "README.md")) as f:
    long_description = f.read()

setup(
    name="tf-ge-custom",
    version=_version(),
    description="Triton kernels as TensorFlow custom ops on Ascend NPUs (TF Adapter + GE): "
                "AddCustom, LeakyReluCustom",
    long_description=long_description,
    long_description_content_type="text/markdown",
    # SPDX (PEP 639): setuptools >= 77 writes License-Expression, older ones License; the
    # wheel carries the text (dist-info/licenses/LICENSE, or dist-info/LICENSE before)
    license="Apache-2.0",
    license_files=["LICENSE"],
    python_requires=">=3.7",
    packages=[
        "tf_ge_custom",
        "tf_ge_custom._build",
        "tf_ge_custom._commands",
        "tf_ge_custom.doctor",
        "tf_ge_custom.npu",
        "tf_ge_custom.kernels",
        "tf_ge_custom.export",
        "tf_ge_custom.export.cann_tools",
        "tf_ge_custom.export.checking",
        "tf_ge_custom.export.freezing",
        "tf_ge_custom.selftest",
        "tf_ge_custom.testing",
    ],
    # the top-level kernels/ folder (kernel source + builder) installs as tf_ge_custom.kernels
    package_dir={"tf_ge_custom.kernels": "kernels"},
    # TensorFlow is not a requirement on purpose: Ascend hosts bring their own build
    # (1.15 or 2.6.5 with TF Adapter), and the op library is built against it.
    install_requires=[],
    entry_points={"console_scripts": ["tf-ge-custom = tf_ge_custom.cli:main"]},
    cmdclass={"build_py": BuildPyWithNative},
    distclass=BinaryDistribution,
    zip_safe=False,
)
