"""The replicated search rules of TF Adapter (TF1, TF2) and GE, on temporary trees.

Each expectation is what the adapter's or GE's source does (cited per test), worked out by
hand for the tree the test builds: new and old OPP layouts, missing folders, several
entries, later-overrides-earlier.
"""
import json

import pytest

from tf_ge_custom import _path_rules as path_rules

JSON = "framework/tensorflow/npu_supported_ops.json"
ADD = {"isGray": False, "isHeavy": False}


def write_json(root, document, name=JSON):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return str(path)


@pytest.fixture
def cann(tmp_path):
    """A CANN opp folder; new layout (built-in/) unless a test removes it."""
    opp = tmp_path / "cann" / "opp"
    (opp / "built-in").mkdir(parents=True)
    write_json(opp, {"Add": {}}, "built-in/" + JSON)
    return opp


def entry(tmp_path, name, document=None):
    root = tmp_path / name
    root.mkdir(parents=True)
    if document is not None:
        write_json(root, document)
    return root


def env(cann, *entries):
    return {"ASCEND_OPP_PATH": str(cann),
            "ASCEND_CUSTOM_OPP_PATH": ":".join(str(e) for e in entries)}


# --- TF1: tf_adapter/util/npu_ops_identifier.cc ---------------------------------------


def test_tf1_new_layout_reads_each_custom_entry(cann, tmp_path):
    ours = entry(tmp_path, "ours", {"AddCustom": ADD})
    result = path_rules.tf1_lookup("AddCustom", env(cann, ours))
    assert result.supported and result.source == str(ours / JSON)
    assert [r.role for r in result.reads] == ["built-in", "entry", "opp-custom"]
    assert result.reads[0].path == str(cann) + "/built-in/" + JSON


def test_tf1_old_layout_ignores_the_custom_path(cann, tmp_path):
    (cann / "built-in").rename(cann / "not-built-in")
    ours = entry(tmp_path, "ours", {"AddCustom": ADD})
    result = path_rules.tf1_lookup("AddCustom", env(cann, ours))
    assert not result.supported
    assert [r.path for r in result.reads] == [
        str(cann) + "/framework/built-in/tensorflow/npu_supported_ops.json",
        str(cann) + "/framework/custom/tensorflow/npu_supported_ops.json"]
    assert any("old OPP layout" in n for n in result.notes)


def test_tf1_old_layout_custom_folder_is_still_read(cann, tmp_path):
    (cann / "built-in").rename(cann / "gone")
    write_json(cann, {"AddCustom": ADD}, "framework/custom/tensorflow/npu_supported_ops.json")
    result = path_rules.tf1_lookup("AddCustom", env(cann))
    assert result.supported and "framework/custom" in result.source


def test_tf1_later_entries_override_earlier_ones(cann, tmp_path):
    good = entry(tmp_path, "good", {"AddCustom": ADD})
    bad = entry(tmp_path, "bad", {"AddCustom": "not an object"})
    result = path_rules.tf1_lookup("AddCustom", env(cann, good, bad))
    assert not result.supported and result.source == str(bad / JSON)
    result = path_rules.tf1_lookup("AddCustom", env(cann, bad, good))
    assert result.supported and result.source == str(good / JSON)


def test_tf1_skips_empty_missing_and_non_folder_entries(cann, tmp_path):
    ours = entry(tmp_path, "ours", {"AddCustom": ADD})
    a_file = tmp_path / "plain-file"
    a_file.write_text("")
    environ = {"ASCEND_OPP_PATH": str(cann),
               "ASCEND_CUSTOM_OPP_PATH": ":%s::%s:%s:" % (tmp_path / "missing", a_file, ours)}
    result = path_rules.tf1_lookup("AddCustom", environ)
    assert result.supported
    assert [r.path for r in result.reads if r.role == "entry"] == [str(ours / JSON)]
    assert sum("skipped" in n for n in result.notes) == 5


def test_tf1_an_entry_without_the_json_is_read_and_contributes_nothing(cann, tmp_path):
    empty = entry(tmp_path, "empty")
    result = path_rules.tf1_lookup("AddCustom", env(cann, empty))
    assert not result.supported
    assert [(r.role, r.exists) for r in result.reads if r.role == "entry"] == [("entry", False)]


def test_tf1_unparsable_json_counts_as_no_ops(cann, tmp_path):
    broken = entry(tmp_path, "broken", '{"AddCustom": {"isGray": false}')
    result = path_rules.tf1_lookup("AddCustom", env(cann, broken))
    assert not result.supported
    assert result.reads[1].error.startswith("cannot parse")


def test_tf1_json_whose_top_level_is_not_an_object_counts_as_no_ops(cann, tmp_path):
    listed = entry(tmp_path, "listed", ["AddCustom"])
    assert not path_rules.tf1_lookup("AddCustom", env(cann, listed)).supported


def test_tf1_vendor_files_come_after_the_custom_entries(cann, tmp_path):
    (cann / "vendors").mkdir()
    (cann / "vendors" / "config.ini").write_text("load_priority=v1, v2\n")
    write_json(cann / "vendors" / "v2", {"AddCustom": None})
    ours = entry(tmp_path, "ours", {"AddCustom": ADD})
    result = path_rules.tf1_lookup("AddCustom", env(cann, ours))
    assert [r.role for r in result.reads] == ["built-in", "entry", "vendor", "vendor"]
    assert result.reads[2].path == "%s/vendors/v1/%s" % (cann, JSON)
    # v2 is read last and maps AddCustom to null: TF1 would not place it.
    assert not result.supported and result.source == "%s/vendors/v2/%s" % (cann, JSON)


def test_tf1_malformed_vendor_config_falls_back_to_framework_custom(cann, tmp_path):
    (cann / "vendors").mkdir()
    (cann / "vendors" / "config.ini").write_text("load_priority=a=b\n")
    result = path_rules.tf1_lookup("AddCustom", env(cann))
    assert result.reads[-1].path == str(cann) + "/framework/custom/tensorflow/npu_supported_ops.json"


def test_tf1_gray_ops_stay_on_cpu_only_in_mix_compile_mode(cann, tmp_path):
    gray = entry(tmp_path, "gray", {"AddCustom": {"isGray": True, "isHeavy": False}})
    assert path_rules.tf1_lookup("AddCustom", env(cann, gray)).supported
    assert not path_rules.tf1_lookup("AddCustom", env(cann, gray), mix_compile_mode=True).supported


def test_tf1_defaults_to_usr_local_ascend_opp(tmp_path):
    result = path_rules.tf1_lookup("AddCustom", {})
    assert result.reads[0].path.startswith("/usr/local/Ascend/opp/")
    assert any("ASCEND_OPP_PATH is unset" in n for n in result.notes)


def test_tf1_relative_entries_resolve_against_the_working_directory(cann, tmp_path, monkeypatch):
    entry(tmp_path, "ours", {"AddCustom": ADD})
    environ = {"ASCEND_OPP_PATH": str(cann), "ASCEND_CUSTOM_OPP_PATH": "ours"}
    monkeypatch.chdir(tmp_path)
    assert path_rules.tf1_lookup("AddCustom", environ).supported
    monkeypatch.chdir(cann)
    assert not path_rules.tf1_lookup("AddCustom", environ).supported


# --- TF2: tf_adapter_2.x/npu_device/core/npu_device.cpp --------------------------------


def test_tf2_reads_custom_entries_whatever_the_layout(cann, tmp_path):
    (cann / "built-in").rename(cann / "gone")
    ours = entry(tmp_path, "ours", {"AddCustom": ADD})
    result = path_rules.tf2_lookup("AddCustom", env(cann, ours))
    assert result.supported and result.source == str(ours / JSON)


def test_tf2_only_looks_at_keys(tmp_path):
    odd = entry(tmp_path, "odd", {"AddCustom": "anything"})
    assert path_rules.tf2_lookup("AddCustom", {"ASCEND_CUSTOM_OPP_PATH": str(odd)}).supported


def test_tf2_skips_missing_json_and_broken_files(tmp_path):
    empty = entry(tmp_path, "empty")
    broken = entry(tmp_path, "broken", "{")
    ours = entry(tmp_path, "ours", {"AddCustom": ADD})
    result = path_rules.tf2_lookup("AddCustom", {
        "ASCEND_CUSTOM_OPP_PATH": "%s::%s:%s" % (empty, broken, ours)})
    assert result.supported and result.source == str(ours / JSON)
    assert [r.path for r in result.reads] == [str(broken / JSON), str(ours / JSON)]


def test_tf2_without_the_variable_finds_nothing(tmp_path):
    for environ in ({}, {"ASCEND_CUSTOM_OPP_PATH": ""}):
        result = path_rules.tf2_lookup("AddCustom", environ)
        assert not result.supported and result.reads == []


# --- GE: graph_metadef/register/op_lib_register.cc ------------------------------------


def touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF")
    return path


def test_ge_loads_every_so_of_the_host_folder_in_name_order(tmp_path):
    root = entry(tmp_path, "ours")
    lib = root / "op_graph" / "lib" / "linux"
    touch(lib / "x86_64" / "libb.so")
    touch(lib / "x86_64" / "liba.so")
    touch(lib / "x86_64" / "libc.so.1")  # not "*.so"
    touch(lib / "x86_64" / "sub.so" / "libd.so")  # a folder, and a file below it
    touch(lib / "aarch64" / "libarm.so")
    result = path_rules.ge_custom_op_libraries({"ASCEND_CUSTOM_OPP_PATH": str(root)}, "x86_64")
    assert [p for p, _ in result.libraries] == [
        "%s/op_graph/lib/linux/x86_64/liba.so" % root, "%s/op_graph/lib/linux/x86_64/libb.so" % root]
    result = path_rules.ge_custom_op_libraries({"ASCEND_CUSTOM_OPP_PATH": str(root)}, "aarch64")
    assert [p for p, _ in result.libraries] == ["%s/op_graph/lib/linux/aarch64/libarm.so" % root]


def test_ge_loads_cust_opapi_first_then_op_graph_entry_by_entry(tmp_path):
    first = entry(tmp_path, "first")
    second = entry(tmp_path, "second")
    touch(first / "libcust_opapi.so")
    touch(first / "op_graph" / "lib" / "linux" / "x86_64" / "libone.so")
    touch(second / "op_graph" / "lib" / "linux" / "x86_64" / "libtwo.so")
    environ = {"ASCEND_CUSTOM_OPP_PATH": "%s::%s:%s" % (first, tmp_path / "missing", second)}
    result = path_rules.ge_custom_op_libraries(environ, "x86_64")
    assert [(p.rsplit("/", 1)[1], e) for p, e in result.libraries] == [
        ("libcust_opapi.so", str(first)), ("libone.so", str(first)), ("libtwo.so", str(second))]
    assert result.from_entry(str(second)) == ["%s/op_graph/lib/linux/x86_64/libtwo.so" % second]


def test_ge_parser_plugins_need_the_new_layout_and_are_found_recursively(cann, tmp_path):
    ours = entry(tmp_path, "ours")
    touch(ours / "framework" / "tensorflow" / "libparsers.so")
    touch(ours / "framework" / "deep" / "er" / "libnested.so")
    touch(ours / "framework" / "caffe" / "lib_caffe_parser.so")
    libraries, notes = path_rules.ge_parser_plugins(env(cann, ours))
    assert sorted(p.rsplit("/", 1)[1] for p, _ in libraries) == ["libnested.so", "libparsers.so"]
    (cann / "built-in").rename(cann / "gone")
    libraries, notes = path_rules.ge_parser_plugins(env(cann, ours))
    assert libraries == [] and "old OPP layout" in notes[0]
    libraries, notes = path_rules.ge_parser_plugins({"ASCEND_CUSTOM_OPP_PATH": str(ours)})
    assert libraries == [] and "ASCEND_OPP_PATH is unset" in notes[0]
