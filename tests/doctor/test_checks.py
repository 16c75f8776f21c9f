"""Doctor's checks over OPP trees, build records and environments made in temp dirs.

Each test builds the situation by hand (a CANN opp folder with or without built-in/, a
build_info record, an environment) and states the verdict the stack's rules imply.
``find_spec``/``which``/``dlopen_check`` and the kernel manifest reader are replaced by
test doubles where the real thing needs an NPU host; they test doctor's handling only.
"""
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

import tf_ge_custom
from tf_ge_custom import doctor, op_def
from tf_ge_custom._build import BuildContext, opp_step

REPO = Path(__file__).resolve().parents[2]
ARCH = {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(
    os.uname().machine, os.uname().machine)
GE_LIB = "op_graph/lib/linux/%s/libtf_ge_custom_ge.so" % ARCH
PARSER = "framework/tensorflow/libtf_ge_custom_parsers.so"
# every op of the records, in their order (an op added to them included), and in words
# written out here ("A, B and C")
TYPES = [op.type_name for op in op_def.OPS]
EVERY_OP = TYPES[0] if len(TYPES) == 1 else "%s and %s" % (", ".join(TYPES[:-1]), TYPES[-1])


def make_root(base, ge):
    """An OPP root as the build makes it after a GE step that recorded ``ge``."""
    ctx = BuildContext(str(REPO), str(base / "pkg" / "tf_ge_custom"), str(base / "t"))
    if ge is not None:
        ctx.build_info["ge"] = ge
    opp_step.run(ctx)
    return Path(ctx.opp_root)


@pytest.fixture
def root(tmp_path):
    """The OPP root of a build with the GE library: its JSON lists AddCustom."""
    return make_root(tmp_path, ge_built()["ge"])


@pytest.fixture
def cann(tmp_path):
    home = tmp_path / "Ascend" / "cann"
    (home / "opp" / "built-in").mkdir(parents=True)
    return home


def context(root, environ=None, build_info=None, modules=(), atc=None, **kw):
    return doctor.Context(
        root=str(root), build_info={} if build_info is None else build_info,
        environ={} if environ is None else environ, shell_custom_opp_path=kw.pop("shell", None),
        find_spec=lambda name: object() if name in modules else None,
        which=lambda name, path=None: atc if name == "atc" else None, arch=ARCH, **kw)


def cann_env(cann, *entries):
    return {"ASCEND_HOME_PATH": str(cann), "ASCEND_OPP_PATH": str(cann / "opp"),
            "ASCEND_CUSTOM_OPP_PATH": ":".join(str(e) for e in entries)}


def ge_built(*libraries, headers=("op_graph/include/add_custom.h",)):
    return {"ge": {"built": True, "reason": "", "ascend_home": "/cann",
                   "libraries": list(libraries), "headers": list(headers)}}


def place(root, *relative):
    for rel in relative:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\x7fELF")


# --- OPP root --------------------------------------------------------------------------


def test_fresh_opp_root_is_ok(root):
    check = doctor.check_opp_root(context(root, build_info=ge_built()))
    assert check.status == doctor.OK and "lists AddCustom" in check.detail


def test_a_root_built_without_the_ge_library_lists_no_op(tmp_path):
    skipped = {"ge": {"built": False, "reason": "CANN 8.5.0 at /cann cannot host it"}}
    root = make_root(tmp_path, skipped["ge"])
    check = doctor.check_opp_root(context(root, build_info=skipped))
    assert check.status == doctor.OK and "lists no op" in check.detail
    # the JSON must say what the build record says, either way round
    check = doctor.check_opp_root(context(root, build_info=ge_built()))
    assert check.status == doctor.FAIL and "should list AddCustom" in check.detail
    listed = make_root(tmp_path / "with-ge", ge_built()["ge"])
    check = doctor.check_opp_root(context(listed, build_info=skipped))
    assert check.status == doctor.FAIL and "should list no op" in check.detail


def test_missing_root_fails(tmp_path):
    check = doctor.check_opp_root(context(tmp_path / "nowhere"))
    assert check.status == doctor.FAIL and "not built" in check.detail


def test_json_that_drifted_fails(root):
    (root / "framework/tensorflow/npu_supported_ops.json").write_text('{"AddCustom": true}')
    check = doctor.check_opp_root(context(root, build_info=ge_built()))
    assert check.status == doctor.FAIL and "does not match" in check.detail


def test_missing_skeleton_folder_fails(root):
    shutil.rmtree(str(root / "kernels"))
    assert "kernels is missing" in doctor.check_opp_root(context(root)).detail


def test_a_library_under_framework_fails_unless_the_ge_step_made_it(root):
    place(root, PARSER)
    assert doctor.check_opp_root(context(root)).status == doctor.FAIL
    assert doctor.check_opp_root(context(root, build_info=ge_built(PARSER))).status == doctor.OK


def test_cust_opapi_next_to_op_graph_fails(root):
    place(root, "libcust_opapi.so")
    check = doctor.check_opp_root(context(root))
    assert check.status == doctor.FAIL and "libcust_opapi.so" in check.detail


# --- environment -----------------------------------------------------------------------


def test_custom_opp_path_with_root_first_is_ok(root, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    check = doctor.check_custom_opp_path(context(root, {"ASCEND_CUSTOM_OPP_PATH": "%s:%s" % (root, other)}))
    assert check.status == doctor.OK


@pytest.mark.parametrize("value, words", [
    (None, "does not contain"),
    ("{root}:relative/dir", "relative entries"),
    ("{root}::{tmp}", "empty entries"),
    ("{root}:{tmp}/missing", "not folders"),
])
def test_custom_opp_path_problems_warn(root, tmp_path, value, words):
    environ = {} if value is None else {
        "ASCEND_CUSTOM_OPP_PATH": value.format(root=root, tmp=tmp_path)}
    check = doctor.check_custom_opp_path(context(root, environ))
    assert check.status == doctor.WARN and words in check.detail and check.fix


def test_opted_out_without_root_warns_with_the_export_line(root):
    check = doctor.check_custom_opp_path(context(root, {"TF_GE_CUSTOM_SET_OPP_PATH": "0"}))
    assert check.status == doctor.WARN and "TF_GE_CUSTOM_SET_OPP_PATH=0" in check.detail
    assert check.fix.startswith("export ASCEND_CUSTOM_OPP_PATH=%s" % root)


def test_another_root_declaring_addcustom_warns(root, tmp_path):
    rival = tmp_path / "rival"
    (rival / "framework" / "tensorflow").mkdir(parents=True)
    (rival / "framework/tensorflow/npu_supported_ops.json").write_text('{"AddCustom": {}}')
    check = doctor.check_custom_opp_path(
        context(root, {"ASCEND_CUSTOM_OPP_PATH": "%s:%s" % (root, rival)}))
    assert check.status == doctor.WARN and str(rival) in check.detail


def test_shell_environment_is_what_atc_sees(root):
    assert doctor.check_shell_environment(context(root, shell="/x:%s" % root)).status == doctor.OK
    check = doctor.check_shell_environment(context(root, shell=None))
    assert check.status == doctor.WARN and "export ASCEND_CUSTOM_OPP_PATH=" in check.fix


def test_opp_path_layouts(root, cann, tmp_path):
    assert doctor.check_opp_path(context(root, {})).status == doctor.WARN
    assert doctor.check_opp_path(context(root, {"ASCEND_OPP_PATH": str(cann / "opp")})).status == doctor.OK
    old = tmp_path / "old-opp"
    old.mkdir()
    check = doctor.check_opp_path(context(root, {"ASCEND_OPP_PATH": str(old)}))
    assert check.status == doctor.WARN and "old OPP layout" in check.detail


# --- would TF Adapter find the JSON? ---------------------------------------------------


def test_tf1_finds_our_json_on_the_new_layout(root, cann):
    check = doctor.check_tf1_finds_json(context(root, cann_env(cann, root), ge_built(),
                                                modules={"npu_bridge"}))
    assert check.status == doctor.OK and str(root) in check.detail


def test_tf1_old_layout_fails_where_npu_bridge_is_installed(root, cann):
    (cann / "opp" / "built-in").rmdir()
    environ = cann_env(cann, root)
    check = doctor.check_tf1_finds_json(context(root, environ, ge_built(), modules={"npu_bridge"}))
    assert check.status == doctor.FAIL and "ignored" in check.detail
    # Without npu_bridge the same finding is only a warning.
    assert doctor.check_tf1_finds_json(context(root, environ, ge_built())).status == doctor.WARN


def test_tf1_later_entry_overriding_ours_is_reported(root, cann, tmp_path):
    rival = tmp_path / "rival"
    (rival / "framework" / "tensorflow").mkdir(parents=True)
    (rival / "framework/tensorflow/npu_supported_ops.json").write_text('{"AddCustom": {"isGray": false}}')
    check = doctor.check_tf1_finds_json(context(root, cann_env(cann, root, rival), ge_built()))
    assert check.status == doctor.WARN and str(rival) in check.detail


def test_tf2_needs_the_root_in_the_variable(root):
    with_root = {"ASCEND_CUSTOM_OPP_PATH": str(root)}
    assert doctor.check_tf2_finds_json(
        context(root, with_root, ge_built(), modules={"npu_device"})).status == doctor.OK
    assert doctor.check_tf2_finds_json(
        context(root, {}, ge_built(), modules={"npu_device"})).status == doctor.FAIL
    assert doctor.check_tf2_finds_json(context(root, {}, ge_built())).status == doctor.WARN


# --- without the GE library, AddCustom stays on the CPU kernel (the JSON lists no op) -----


NOT_BUILT = {"ge": {"built": False, "reason": "CANN 8.5.0 at /cann cannot host the GE library: "
                    "no graph/custom_op.h", "ascend_home": "/cann", "libraries": [],
                    "headers": []}}


@pytest.mark.parametrize("check_fn, module", [(doctor.check_tf1_finds_json, "npu_bridge"),
                                              (doctor.check_tf2_finds_json, "npu_device")])
def test_without_the_ge_library_the_adapters_keep_addcustom_on_the_cpu_as_intended(
        tmp_path, cann, check_fn, module):
    root = make_root(tmp_path, NOT_BUILT["ge"])
    check = check_fn(context(root, cann_env(cann, root), NOT_BUILT, modules={module}))
    assert check.status == doctor.OK, check
    assert "would keep AddCustom on the CPU kernel, as this install intends" in check.detail
    # ... unless another root declares it: TF Adapter would hand it to GE all the same
    rival = tmp_path / "rival"
    (rival / "framework" / "tensorflow").mkdir(parents=True)
    (rival / "framework/tensorflow/npu_supported_ops.json").write_text('{"AddCustom": {}}')
    check = check_fn(context(root, cann_env(cann, root, rival), NOT_BUILT, modules={module}))
    assert check.status == doctor.WARN and str(rival) in check.detail


def test_npu_placement_says_which_case_this_install_is_in(tmp_path, fake_toolkit):
    built = doctor.check_npu_placement(context(make_root(tmp_path / "a", ge_built()["ge"]),
                                               build_info=ge_built()))
    assert built.status == doctor.OK and built.data["npu_ops"] == TYPES
    assert TYPES[:2] == ["AddCustom", "LeakyReluCustom"]
    assert ("lists %s: where TF Adapter runs a graph, it hands %s to GE" % (EVERY_OP, EVERY_OP)) in built.detail
    root = make_root(tmp_path / "b", NOT_BUILT["ge"])
    check = doctor.check_npu_placement(context(root, build_info=NOT_BUILT))
    assert check.status == doctor.WARN
    assert ("lists no op, so %s stay on the CPU kernel, also where TF Adapter runs the "
            "graph, because the GE library was not built: CANN 8.5.0 at /cann" % EVERY_OP) in check.detail
    # no toolkit that can host the library anywhere here: an instruction, not a command
    assert not doctor.is_command(check.fix) and "CANN toolkit >= 9.2.0-beta.1" in check.fix
    # this shell's toolkit can host it: the rebuild itself is the fix
    home = fake_toolkit("new")
    check = doctor.check_npu_placement(context(root, {"ASCEND_HOME_PATH": home}, NOT_BUILT))
    assert check.fix == doctor.REBUILD and doctor.is_command(check.fix)


# --- GE --------------------------------------------------------------------------------


def test_ge_finds_the_built_library_and_parser(root, cann):
    place(root, GE_LIB, PARSER)
    check = doctor.check_ge_finds_library(context(root, cann_env(cann, root), ge_built(GE_LIB, PARSER)))
    assert check.status == doctor.OK, check


def test_ge_would_miss_the_library_when_root_is_not_in_the_variable(root, cann):
    place(root, GE_LIB)
    environ = cann_env(cann)
    assert doctor.check_ge_finds_library(context(root, environ, ge_built(GE_LIB))).status == doctor.FAIL
    del environ["ASCEND_HOME_PATH"]  # no CANN here: only a warning
    assert doctor.check_ge_finds_library(context(root, environ, ge_built(GE_LIB))).status == doctor.WARN


def test_ge_parser_plugin_ignored_on_old_layout_warns(root, cann):
    place(root, GE_LIB, PARSER)
    (cann / "opp" / "built-in").rmdir()
    check = doctor.check_ge_finds_library(context(root, cann_env(cann, root), ge_built(GE_LIB, PARSER)))
    assert check.status == doctor.WARN and "parser" in check.detail


def test_ge_library_states(root, cann):
    assert doctor.check_ge_library(context(root)).status == doctor.WARN
    not_built = {"ge": {"built": False, "reason": "no CANN toolkit found", "ascend_home": None,
                        "libraries": [], "headers": []}}
    check = doctor.check_ge_library(context(root, build_info=not_built))
    assert check.status == doctor.WARN and "no CANN toolkit found" in check.detail
    check = doctor.check_ge_library(context(root, build_info=ge_built(GE_LIB)))
    assert check.status == doctor.FAIL and "missing" in check.detail
    place(root, GE_LIB, "op_graph/include/add_custom.h")
    assert doctor.check_ge_library(context(root, build_info=ge_built(GE_LIB))).status == doctor.OK


def test_ge_library_whose_dependencies_do_not_resolve_fails(root, cann):
    place(root, GE_LIB, "op_graph/include/add_custom.h")
    failing = context(root, cann_env(cann, root), ge_built(GE_LIB),
                      dlopen_check=lambda path, env: "libgraph.so: cannot open shared object file")
    check = doctor.check_ge_library(failing)
    assert check.status == doctor.FAIL and "libgraph.so" in check.detail
    loading = context(root, cann_env(cann, root), ge_built(GE_LIB), dlopen_check=lambda p, e: "")
    assert doctor.check_ge_library(loading).status == doctor.OK


def test_dlopen_in_a_child_reports_unresolved_dependencies(tmp_path):
    # A real library that loads, and one whose dependency is missing (the op library
    # without TensorFlow's libraries on the search path).
    source = tmp_path / "ok.c"
    source.write_text("int tf_ge_custom_probe(void) { return 7; }\n")
    library = tmp_path / "libok.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    assert doctor.dlopen_in_child(str(library), {}) == ""
    error = doctor.dlopen_in_child(tf_ge_custom.library_path(), {})
    assert "libtensorflow_framework" in error


# --- the rest of the stack -------------------------------------------------------------


def test_npu_stack_pieces(root, cann):
    assert doctor.check_npu_bridge(context(root)).status == doctor.WARN
    assert doctor.check_npu_bridge(context(root, modules={"npu_bridge"})).status == doctor.OK
    assert doctor.check_npu_device(context(root, modules={"npu_device"})).status == doctor.OK
    assert doctor.check_cann(context(root)).status == doctor.WARN
    check = doctor.check_cann(context(root, cann_env(cann), atc="/cann/bin/atc"))
    assert check.status == doctor.OK and "/cann/bin/atc" in check.detail


# --- npubins (the manifest reader is a test double here) ---------------------------------


class ManifestError(ValueError):
    def __init__(self, kind, message):
        super(ManifestError, self).__init__(message)
        self.kind = kind


def reader(manifests, verdicts):
    """A stand-in for tf_ge_custom.kernel_manifest with the documented interface."""
    def load_manifest(path, check_files=True):
        assert check_files
        verdict = verdicts[path]
        if isinstance(verdict, ManifestError):
            raise verdict
        # (dtype, binary) of AddCustom, or (op type, dtype, binary)
        kernels = [types.SimpleNamespace(op=k[0] if len(k) == 3 else "AddCustom", dtype=k[-2], binary=k[-1])
                   for k in verdict]
        return types.SimpleNamespace(soc=path.split("/")[-2], kernels=kernels)

    return types.SimpleNamespace(find_manifests=lambda root: dict(manifests),
                                 load_manifest=load_manifest, ManifestError=ManifestError)


# AddCustom's four dtypes, then every other op's of the records (LeakyReluCustom's three, and
# any op added to them)
OTHER_OPS = [op for op in op_def.OPS if op.type_name != "AddCustom"]
ALL = [(d, "add_kernel_%s.npubin" % d) for d in ("float32", "float16", "bfloat16", "int32")] + [
    (op.type_name, d, "%s_flat_%s.npubin" % (op.python_name, d)) for op in OTHER_OPS for d in op.dtypes]


def test_npubins_for_every_dtype_are_ok(root):
    a2, a3 = "/k/Ascend910B1/manifest.json", "/k/Ascend910_9392/manifest.json"
    ctx = context(root, manifest_reader=reader({"Ascend910B1": a2, "Ascend910_9392": a3},
                                               {a2: ALL, a3: ALL}))
    check = doctor.check_kernels(ctx)
    assert check.status == doctor.OK and "Ascend910_9392" in check.detail
    assert check.data["socs"]["Ascend910B1"]["missing"] == []


def test_missing_dtypes_and_ir_only_manifests_warn(root):
    path = "/k/Ascend910B1/manifest.json"
    partial = [("float32", "add_kernel_float32.npubin"), ("int32", None)]
    check = doctor.check_kernels(context(root, manifest_reader=reader({"Ascend910B1": path}, {path: partial})))
    assert check.status == doctor.WARN
    # every (op, dtype) of the package without an npubin, named by op
    missing = check.data["socs"]["Ascend910B1"]["missing"]
    assert missing[:6] == [
        "AddCustom float16", "AddCustom bfloat16", "AddCustom int32", "LeakyReluCustom float32",
        "LeakyReluCustom float16", "LeakyReluCustom bfloat16"]
    assert missing == ["AddCustom float16", "AddCustom bfloat16", "AddCustom int32"] + [
        "%s %s" % (op.type_name, d) for op in OTHER_OPS for d in op.dtypes]


def test_broken_checksum_fails(root):
    path = "/k/Ascend910B1/manifest.json"
    error = ManifestError("checksum", "add_kernel_float32.npubin: sha256 differs")
    check = doctor.check_kernels(context(root, manifest_reader=reader({"Ascend910B1": path}, {path: error})))
    assert check.status == doctor.FAIL and "checksum" in check.detail


def test_no_npubins_warns_unless_the_build_recorded_some(root):
    empty = reader({}, {})
    assert doctor.check_kernels(context(root, manifest_reader=empty)).status == doctor.WARN
    recorded = {"kernels": {"source": "/x", "socs": {"Ascend910B1": ["float32"]}}}
    check = doctor.check_kernels(context(root, build_info=recorded, manifest_reader=empty))
    assert check.status == doctor.FAIL


def test_without_the_manifest_reader_the_check_warns(root, monkeypatch):
    monkeypatch.setitem(sys.modules, "tf_ge_custom.kernel_manifest", None)
    check = doctor.check_kernels(context(root))
    assert check.status == doctor.WARN and "reader" in check.detail


# --- running the checks ------------------------------------------------------------------


def test_a_crashing_check_becomes_a_fail_line(root):
    def check_explodes(ctx):
        raise RuntimeError("boom")

    (result,) = doctor.run_checks(context(root), checks=(check_explodes,))
    assert result.status == doctor.FAIL and "boom" in result.detail and result.name == "explodes"


def test_exit_status_is_nonzero_only_on_fail(monkeypatch, capsys):
    from tf_ge_custom._commands import doctor as doctor_command

    args = types.SimpleNamespace(json=True, soc=None)
    for statuses, code in (([doctor.OK, doctor.WARN], 0), ([doctor.OK, doctor.FAIL], 1)):
        monkeypatch.setattr(doctor.reporting, "run_checks", lambda ctx, s=statuses: [
            doctor.Check("c%d" % i, st, "d") for i, st in enumerate(s)])
        assert doctor_command.run(args) == code
        assert json.loads(capsys.readouterr().out)["status"] == max(
            statuses, key=[doctor.OK, doctor.WARN, doctor.FAIL].index)
