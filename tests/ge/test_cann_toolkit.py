"""Feature detection of the CANN toolkit (tf_ge_custom/_build/cann_toolkit.py) on synthetic
trees: each piece the GE library needs, taken away alone, is named with the CANN that has
it; the version comes from the toolkit's own records; nothing else changes the decision.

The synthetic trees hold exactly the text the detector looks for, so those tests check our
own table's plumbing (kind "plumbing"). The oracle is the last test: the detector over the
real public headers of every hicann/ge and hicann/metadef release tag (the snapshots), each
feature found exactly from the first release the table says has it.
"""
import os
import re
import subprocess

import pytest

from tf_ge_custom._build import cann_toolkit as cann

pytestmark = pytest.mark.kind("plumbing")

REQUIRED = [r for r in cann.REQUIREMENTS if r.required]
# How to take each feature away: drop its file, or rewrite the header without it.
_CLASSES = ("EagerExecuteOp", "PortableOp", "ShapeInferOp", "CompilableOp")
_WITHOUT = {
    key: "".join("class %s : x {};\n" % c for c in _CLASSES if c != left_out)
    for key, left_out in (("eager_execute_op", "EagerExecuteOp"), ("portable_op", "PortableOp"),
                          ("shape_infer_op", "ShapeInferOp"), ("compilable_op", "CompilableOp"))
}


def _without(requirement):
    """(drop, replace) arguments of fake_toolkit that remove exactly ``requirement``."""
    if requirement.key in _WITHOUT:
        return (), {"include/" + requirement.path: _WITHOUT[requirement.key]}
    if requirement.kind == "library":
        return ("lib64/" + requirement.path,), {}
    if requirement.kind == "header":
        return ("include/" + requirement.path,), {}
    return (), {"include/" + requirement.path: "// stand-in without the declaration\n"}


def test_a_complete_toolkit_is_built(fake_toolkit):
    toolkit = cann.inspect(fake_toolkit())
    assert toolkit.build and toolkit.decision == "build" and toolkit.reason == ""
    assert toolkit.missing == () and all(toolkit.features.values())
    assert (toolkit.version, toolkit.version_file) == ("9.2.0-beta.1", "x86_64-linux/ascend_toolkit_install.info")
    assert toolkit.as_dict()["decision"] == "build" and toolkit.as_dict()["missing"] == []


@pytest.mark.parametrize("requirement", REQUIRED, ids=lambda r: r.key)
def test_each_missing_piece_alone_skips_naming_it(fake_toolkit, requirement):
    drop, replace = _without(requirement)
    home = fake_toolkit(version="9.1.0", drop=drop, replace=replace)
    toolkit = cann.inspect(home)
    assert not toolkit.build and toolkit.decision == "skip"
    assert [r.key for r in toolkit.missing] == [requirement.key]
    absent = [k for k, present in toolkit.features.items() if not present]
    if requirement.key == "custom_op_header":  # its classes go with it
        assert absent == ["custom_op_header", "eager_execute_op", "portable_op", "shape_infer_op",
                          "compilable_op"]
    else:
        assert absent == [requirement.key]
    assert toolkit.reason.startswith("CANN 9.1.0 at %s cannot host the GE library: %s" % (home, requirement.what))
    if requirement.since:
        assert "%s (since CANN %s)" % (requirement.what, requirement.since) in toolkit.reason
    assert toolkit.reason.endswith("it needs CANN >= 9.2.0-beta.1")
    assert "\n" not in toolkit.reason
    assert toolkit.as_dict()["missing"] == [
        {"feature": requirement.key, "what": requirement.what, "since": requirement.since}]


def test_without_custom_op_h_its_classes_are_not_listed_again(fake_toolkit):
    toolkit = cann.inspect(fake_toolkit(drop=("include/graph/custom_op.h",)))
    assert [r.key for r in toolkit.missing] == ["custom_op_header"]
    assert not toolkit.features["shape_infer_op"]


def test_a_forward_declaration_is_not_the_class(fake_toolkit):
    header = ("class EagerExecuteOp : x {};\nclass PortableOp : x {};\n"
              "class CompilableOp : x {};\nclass ShapeInferOp;  // declared, not defined\n")
    toolkit = cann.inspect(fake_toolkit(replace={"include/graph/custom_op.h": header}))
    assert [r.key for r in toolkit.missing] == ["shape_infer_op"]


def test_headers_are_found_where_the_compiler_looks(fake_toolkit, tmp_path):
    home = fake_toolkit(drop=("include/graph/custom_op.h",))
    moved = tmp_path / "cann" / "include" / "external" / "graph" / "custom_op.h"
    moved.parent.mkdir(parents=True)
    moved.write_text(_WITHOUT["eager_execute_op"] + "class EagerExecuteOp : x {};\n")
    assert cann.inspect(home).build
    assert cann.find_header(home, "graph/custom_op.h") == str(moved)


def test_the_tf_parser_api_is_recorded_but_not_required(fake_toolkit):
    toolkit = cann.inspect(fake_toolkit(drop=("include/parser/tensorflow_parser.h",)))
    assert toolkit.build and toolkit.features["tf_parser_api"] is False


def test_no_toolkit_and_a_missing_folder(tmp_path):
    none = cann.inspect(None)
    assert not none.build and none.reason.startswith("ASCEND_HOME_PATH is not set")
    assert "CANN >= 9.2.0-beta.1" in none.reason
    gone = cann.inspect(str(tmp_path / "gone"))
    assert not gone.build and "is not a folder" in gone.reason
    assert cann.from_environment({}).reason == none.reason
    assert cann.from_environment({"ASCEND_HOME_PATH": str(tmp_path / "gone")}).home == str(tmp_path / "gone")


@pytest.mark.parametrize("files, expected", [
    ({"aarch64-linux/ascend_toolkit_install.info": "package_name=Ascend-cann-toolkit\nversion=8.3.RC2\n"
                                                   "innerversion=V100R001C23SPC002B210\n"},
     ("8.3.RC2", "aarch64-linux/ascend_toolkit_install.info")),
    ({"version.cfg": "# version: 1.0\nruntime_running_version=[7.6.0.1.220:8.0.0]\n"
                     "toolkit_running_version=[7.6.0.1.221:8.0.1]\n",
      "compiler/version.info": "Version=7.6.0.1.220\n"},
     ("8.0.1", "version.cfg")),
    ({"compiler/version.info": "Version=7.6.0.1.220\n"}, ("7.6.0.1.220", "compiler/version.info")),
    ({"x86_64-linux/ascend_toolkit_install.info": "package_name=Ascend-cann-toolkit\n",
      "version.cfg": "runtime_running_version=[7.7.T20.0.B210:8.1.RC1]\n"},
     ("8.1.RC1", "version.cfg")),
    ({}, (None, None)),
])
def test_the_version_comes_from_the_toolkits_own_records(tmp_path, files, expected):
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert cann.toolkit_version(str(tmp_path)) == expected


def test_the_version_never_decides(fake_toolkit):
    old_name = cann.inspect(fake_toolkit("a", version="8.5.0"))
    unknown = cann.inspect(fake_toolkit("b", version=None))
    assert old_name.build and unknown.build and unknown.version is None
    broken = cann.inspect(fake_toolkit("c", version=None, drop=("lib64/libgert.so",)))
    assert broken.reason.startswith("a CANN toolkit of unknown version at ")


@pytest.mark.parametrize("value, required", [(None, False), ("", False), ("0", False), ("1", True), (" 1 ", True)])
def test_require_ge_values(value, required):
    env = {} if value is None else {"TF_GE_CUSTOM_REQUIRE_GE": value}
    assert cann.require_ge(env) is required


def test_require_ge_refuses_other_values():
    with pytest.raises(ValueError) as info:
        cann.require_ge({"TF_GE_CUSTOM_REQUIRE_GE": "yes"})
    assert "TF_GE_CUSTOM_REQUIRE_GE must be 0 or 1, found 'yes'" in str(info.value)


def test_the_air_tool_needs_the_tf_parser_api_but_the_ge_library_does_not(fake_toolkit):
    for drop in (("include/parser/tensorflow_parser.h",), ("lib64/libfmk_parser.so",)):
        toolkit = cann.inspect(fake_toolkit(name=drop[0].replace("/", "_"), drop=drop))
        assert toolkit.build and not toolkit.air_tool and toolkit.missing == ()
    assert cann.inspect(fake_toolkit()).air_tool
    assert not cann.inspect(fake_toolkit(name="old", drop=("lib64/libgert.so",))).air_tool


# Where each header the detector reads lives in the public repositories (hicann/ge and
# hicann/metadef); acl/acl_rt.h is in neither (it ships in CANN and the torch-npu wheel).
_PUBLIC_HEADERS = {
    "graph/custom_op.h": ("TF_GE_CUSTOM_GE_REPO", "inc/graph_metadef/external/graph/custom_op.h"),
    "register/register.h": ("TF_GE_CUSTOM_METADEF_REPO", "inc/external/register/register.h"),
    "parser/tensorflow_parser.h": ("TF_GE_CUSTOM_GE_REPO", "inc/parser/external/parser/tensorflow_parser.h"),
}


_OLDEST_CHECKED = "8.5.0"


def _release_key(version):
    """Order of CANN release names: 9.1.0-beta.2.pre < 9.1.0-beta.2 < 9.1.0-beta.3 < 9.1.0-rc.1
    < 9.1.0.pre < 9.1.0."""
    m = re.match(r"^(\d+)\.(\d+)\.(\d+)(?:-(beta|rc)\.(\d+))?(\.pre)?$", version)
    assert m, version
    stage = {"beta": 0, "rc": 1, None: 2}[m.group(4)]
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), stage, int(m.group(5) or 0),
            0 if m.group(6) else 1)


def _show(repo, tag, path):
    proc = subprocess.run(["git", "-C", repo, "show", "%s:%s" % (tag, path)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    return proc.stdout if proc.returncode == 0 else None


@pytest.mark.kind("oracle")
def test_each_header_feature_is_found_in_exactly_the_public_releases_since_the_table_says(needs, tmp_path):
    needs("hicann_snapshots", "reads every release tag's public headers")
    repos = {var: os.environ[var] for var in ("TF_GE_CUSTOM_GE_REPO", "TF_GE_CUSTOM_METADEF_REPO")}
    tags = subprocess.run(["git", "-C", repos["TF_GE_CUSTOM_GE_REPO"], "tag", "--list", "v*"],
                          stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.split()
    features = [r for r in cann.REQUIREMENTS if r.kind != "library" and r.path in _PUBLIC_HEADERS and r.since]
    assert {r.key for r in features} >= {"custom_op_header", "eager_execute_op", "portable_op",
                                         "shape_infer_op", "compilable_op", "tf_parser_registration"}
    compared, wrong = 0, []
    # The ".pre" tags are pre-release tags, not releases: the table's "since" names releases
    # (docs/cann.md notes what v9.1.0-beta.2.pre already has).
    releases = [t for t in tags if not t.endswith(".pre")]
    for tag in sorted(releases, key=lambda t: _release_key(t[1:])):
        home = tmp_path / tag
        present = set()
        for header, (var, path) in _PUBLIC_HEADERS.items():
            text = _show(repos[var], tag, path)
            if text is not None:
                (home / "include" / header).parent.mkdir(parents=True, exist_ok=True)
                (home / "include" / header).write_bytes(text)
                present.add(header)
        found = cann.inspect(str(home)).features
        for r in features:
            if r.kind == "declaration" and r.path != "graph/custom_op.h" and r.path not in present:
                continue  # that repository has no such tag: nothing to compare
            compared += 1
            # docs/cann.md: since "8.5.0" means present in 8.5.0, the oldest release checked
            # (its betas included)
            expected = r.since == _OLDEST_CHECKED or _release_key(tag[1:]) >= _release_key(r.since)
            if found[r.key] != expected:
                wrong.append("%s %s: found %s, the table says since %s" % (tag, r.key, found[r.key], r.since))
    assert wrong == []
    assert compared >= 60 and len(releases) >= 10
