"""Every kernel of a set has its own entry symbol (docs/kernel-manifest.md, "Entry names").

GE keeps one binary per kernel name in a model, so the 47 kernels of a set (AddCustom's 11
variants x 4 dtypes, LeakyReluCustom's one variant x 3 dtypes) need 47 names, and none may be
another project's (GE's own Triton sample launches ``add_kernel``). The names are stated here by
hand (``tf_ge_custom_<python name>_<variant>_<dtype>``)
and checked against the op definition, against what ``tf-ge-custom build-kernels --ir-only``
writes through the installed console script (each name the device entry of its own HIVM IR,
the compiler being the oracle), and against the kernel names of GE's samples in the hicann/ge
snapshot. A definition giving two kernels one name is refused before anything compiles.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from tf_ge_custom import op_def
from tf_ge_custom.errors import KernelBuildError
from tf_ge_custom.kernels import builder

pytestmark = pytest.mark.kind("oracle")

VARIANTS = ("flat", "scalar", "row_1x4096", "row_16x256", "row_128x32", "col_1x4096", "col_16x256",
            "col_128x32", "outer_1x4096", "outer_16x256", "outer_128x32")
DTYPES = ("float32", "float16", "bfloat16", "int32")
# Kernel names other projects launch, as their sources spell them: GE's Triton and Ascend C
# samples (examples/custom_op/) and triton's tutorial add kernel.
OTHER_PROJECTS = ("add_kernel", "add_custom", "add_custom_kernel", "triton_add_kernel")


def _expected(variant, dtype, python_name="add_custom"):
    return "tf_ge_custom_%s_%s_%s" % (python_name, variant, dtype)


LEAKY_NAMES = ["tf_ge_custom_leaky_relu_custom_flat_float32",
               "tf_ge_custom_leaky_relu_custom_flat_float16",
               "tf_ge_custom_leaky_relu_custom_flat_bfloat16"]


def _every_ops_names(ops=None):
    """Each op's names, in the records' order, written out by this test's own rule."""
    return [_expected(v.name, d, op.python_name) for op in (op_def.OPS if ops is None else ops)
            for v in op.kernel.variants for d in op.dtypes]


def test_the_op_definition_names_all_44_kernels_apart():
    op = op_def.ADD_CUSTOM
    assert tuple(v.name for v in op.kernel.variants) == VARIANTS and op.dtypes == DTYPES
    names = [op.entry_name(v, d) for v in VARIANTS for d in DTYPES]
    assert names == [_expected(v, d) for v in VARIANTS for d in DTYPES]
    assert len(set(names)) == 44
    assert [n for n, _, _, _ in op_def.entry_names((op,))] == names
    # the package's kernels: AddCustom's, then LeakyReluCustom's (then any op added to the
    # records'), all apart
    every = [n for n, _, _, _ in op_def.entry_names()]
    assert every[:len(names) + len(LEAKY_NAMES)] == names + LEAKY_NAMES
    assert every == _every_ops_names() and len(set(every)) == len(every)
    assert op_def.entry_name_problems() == []
    assert not set(names) & set(OTHER_PROJECTS)


def test_the_second_op_names_its_kernels_apart_from_the_first():
    """LeakyReluCustom, the package's second op: 3 names of its own, written out here, none of them
    AddCustom's or another project's, each within the 49 characters a kernel name may have;
    both ops' 47 kernels can sit in one model."""
    leaky = op_def.LEAKY_RELU_CUSTOM
    names = [n for n, _, _, _ in op_def.entry_names((leaky,))]
    assert names == LEAKY_NAMES
    assert max(len(n) for n in names) == 44
    both = op_def.entry_names((op_def.ADD_CUSTOM, leaky))
    assert len(set(n for n, _, _, _ in both)) == 47
    assert op_def.entry_name_problems((op_def.ADD_CUSTOM, leaky)) == []
    assert not set(names) & set(OTHER_PROJECTS + ("leaky_relu_kernel",))
    assert [leaky.binary_name("flat", d) for d in leaky.dtypes] == [
        "leaky_relu_custom_flat_float32.npubin", "leaky_relu_custom_flat_float16.npubin",
        "leaky_relu_custom_flat_bfloat16.npubin"]


class _OneNamePerDtype(op_def.OpDefinition):
    """A defective definition: every variant of a dtype under one name (the mutation)."""

    def entry_name(self, variant, dtype):
        return "tf_ge_custom_%s_%s" % (self.python_name, dtype)


def test_a_definition_giving_two_variants_one_name_is_refused_before_compiling(tmp_path):
    colliding = _OneNamePerDtype(*op_def.ADD_CUSTOM)
    problems = op_def.entry_name_problems((colliding,))
    # 10 of the 11 variants of each of the 4 dtypes repeat the flat kernel's name
    assert len(problems) == 40
    assert "AddCustom flat float32 and AddCustom scalar float32 share the entry name " \
        "tf_ge_custom_add_custom_float32" in problems[0]
    out = tmp_path / "out"
    with pytest.raises(KernelBuildError) as e:
        builder.build_kernels(["Ascend910B1"], "all", str(out), ir_only=True, ops=colliding)
    assert "share the entry name" in str(e.value) and "OpDefinition.entry_name" in str(e.value)
    assert str(e.value).count("share the entry name") == 3 and "(and 37 more)" in str(e.value)
    assert not out.exists()  # refused before any folder was made or anything compiled
    # a name outside the package's namespace, or no C symbol, is refused too
    foreign = type("Foreign", (op_def.OpDefinition,), {
        "entry_name": lambda self, v, d: "add_kernel" if v == "flat" else "tf-ge %s %s" % (v, d)})
    problems = op_def.entry_name_problems((foreign(*op_def.ADD_CUSTOM),))
    assert len(problems) == 44 and all("is not a C symbol starting with" in p for p in problems)


def _entries_of(hivm_text):
    """The device entries of an HIVM IR text, read with this test's own pattern."""
    return re.findall(r"func\.func (?:public |private )?@(\w+)\([^\n]*\)[^\n]*attributes \{[^\n]*\bhacc\.entry\b",
                      hivm_text)


@pytest.mark.slow
def test_build_kernels_ir_only_writes_47_distinct_names_each_its_hivm_entry(tmp_path):
    """The documented command, through the installed console script in a fresh process."""
    exe = shutil.which("tf-ge-custom") or os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
    out = tmp_path / "kernels"
    proc = subprocess.run([exe, "build-kernels", "--soc", "Ascend910B1", "--ir-only", "--out", str(out),
                           "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=3000)
    assert proc.returncode == 0, proc.stderr[-4000:]
    with open(str(out / "Ascend910B1" / "manifest.json")) as f:
        kernels = json.load(f)["kernels"]
    # every op's: AddCustom's 44 (11 variants x 4 dtypes), LeakyReluCustom's 3, and those of
    # any op the records add
    expected = _every_ops_names()
    assert len(kernels) == len(expected)
    names = [k["entry"] for k in kernels]
    assert len(set(names)) == len(expected)
    assert set([_expected(v, d) for v in VARIANTS for d in DTYPES] + LEAKY_NAMES) <= set(names)
    assert sorted(names) == sorted(expected)
    python_names = {op.type_name: op.python_name for op in op_def.OPS}
    for k in kernels:
        assert k["entry"] == _expected(k["variant"], k["dtype"], python_names[k["op"]])
        stem = "%s_%s_%s" % (python_names[k["op"]], k["variant"], k["dtype"])
        with open(str(out / "Ascend910B1" / "ir" / (stem + ".hivm.mlir"))) as f:
            assert _entries_of(f.read()) == [k["entry"]], stem
    assert not set(names) & set(OTHER_PROJECTS)


def _ge_sample_kernel_names(ge_repo, tag):
    """Kernel names GE's samples (examples/) launch at ``tag``: their @triton.jit functions, and
    the names they hand to aclrtBinaryGetFunction, aclrtcCreateProg or a launch info."""
    def grep(*args):
        return subprocess.run(["git", "-C", str(ge_repo), "grep", "-h", "-I"] + list(args)
                              + [tag, "--", "examples"], stdout=subprocess.PIPE,
                              universal_newlines=True).stdout

    names = set(re.findall(r"^\s*def (\w+)\(", grep("-A3", "@triton.jit"), re.M))
    text = grep("-E", "GetFunction|KernelName|kernel_name")
    names.update(re.findall(r"aclrtBinaryGetFunction\([^,]*,\s*\"(\w+)\"", text))
    names.update(re.findall(r"[kK]ernel_?[nN]ame\w*\s*=\s*\"(\w+)\"", text))
    return names


@pytest.mark.parametrize("tag", ["v9.2.0-beta.1", "HEAD"])
def test_no_entry_name_is_one_of_ges_sample_kernels(needs, tag):
    needs("hicann_snapshots", "reads GE's samples (TF_GE_CUSTOM_GE_REPO)")
    theirs = _ge_sample_kernel_names(os.environ["TF_GE_CUSTOM_GE_REPO"], tag)
    assert "add_kernel" in theirs  # the Triton sample: the pattern finds what it should
    ours = {n for n, _, _, _ in op_def.entry_names()}
    assert not ours & theirs, sorted(ours & theirs)
    assert not any(n.startswith(op_def.ENTRY_PREFIX) for n in theirs)
