"""GE in the loop: the CANN-facing sources (ge_ops/cann/, unchanged) run against GE's own
open-source context code, one pytest item per harness case and tag.

For each tag of tests/native/ge_in_loop/upstream_files.json, the upstream files listed there are
extracted from the hicann/ge and hicann/metadef snapshots (TF_GE_CUSTOM_GE_REPO,
TF_GE_CUSTOM_METADEF_REPO) with ``git archive`` and built with the stand-ins of
tests/native/ge_in_loop/stand_ins/ (securec, logging, error reports, the platform component, a few
libgraph symbols, a recording ACL: each named as a stand-in, docs/ge-library.md "GE in the
loop" lists what each leaves unproven) into the harness's test program, which loads the GE
library as GE does and drives every CANN-facing entry point through metadef's context
builders. Without the snapshots every test here skips, naming the variables.
"""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]
HARNESS = SOURCE_ROOT / "tests" / "native" / "ge_in_loop"
_TEST_RE = re.compile(r"^TEST\((\w+),\s*(\w+)\)", re.M)


def _tags():
    import json
    return sorted(json.loads((HARNESS / "upstream_files.json").read_text())["tags"])


def _case_names(tag=None):
    """The cases of the driver (for a tag: without the om2_*.cc cases unless its GE has the
    OM2 code generator, as tests/native/ge_in_loop/CMakeLists.txt builds them)."""
    import json
    om2 = tag is None or json.loads((HARNESS / "upstream_files.json").read_text())["tags"][tag]["om2"]
    names = []
    for path in sorted((HARNESS / "driver").glob("*.cc")):
        if path.name.startswith("om2_") and not om2:
            continue
        names += ["%s.%s" % m for m in _TEST_RE.findall(path.read_text())]
    return names


TAGS = _tags()
CASES = _case_names()
TAG_CASES = [(tag, case) for tag in TAGS for case in _case_names(tag)]
SANITIZER_OPTIONS = {"ASAN_OPTIONS": "abort_on_error=1:detect_leaks=1",
                     "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}
DOUBLE = SOURCE_ROOT / "tests" / "ge" / "doubles" / "kernel_compiler_double"


def _oracle():
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "_tf_ge_custom_launch_oracle", str(SOURCE_ROOT / "tests" / "ge" / "launch_oracle.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _scenario(path):
    """The whole-model scenario (driver/whole_model_tests.cc): tests/ge/launch_oracle.py's
    launches for the node tables of tests/ge/fixtures/."""
    return _oracle().write_scenario(str(path))


def harness_env(scratch, op_def, sanitize=False, other_build=None):
    """The harness's environment: no toolkit, no hivmc; Compile's builder is the TEST DOUBLE
    tests/ge/doubles/kernel_compiler_double (real builder entry point and cache protocol,
    made-up build step) with a cache of its own; the package the builder imports is the
    installed one; the whole-model scenario and the op table's (launch_oracle.py's rule 6 over
    op_def, the op_def.py the library's table was generated from: the generic cases,
    driver/any_op_tests.cc) written into the scratch folder; other_build, another build of the
    GE library (the third op's), for the cases that load an OM of another build
    (driver/unload_tests.cc)."""
    import sys
    import tf_ge_custom
    scratch = pathlib.Path(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TF_GE_CUSTOM_", "BISHENG", "ASAN_", "UBSAN_")) and k != "ASCEND_HOME_PATH"}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", os.defpath).split(os.pathsep)
                                  if p and not os.path.isfile(os.path.join(p, "hivmc")))
    env.update(TF_GE_CUSTOM_CACHE_DIR=str(scratch / "cache"), TF_GE_CUSTOM_PYTHON=str(DOUBLE),
               TF_GE_CUSTOM_DOUBLE_PYTHON=sys.executable, TF_GE_CUSTOM_DOUBLE_MODE="build",
               TF_GE_CUSTOM_DOUBLE_COUNT=str(scratch / "builds.txt"),
               TF_GE_IN_LOOP_PACKAGE=os.path.dirname(os.path.abspath(tf_ge_custom.__file__)),
               TF_GE_IN_LOOP_MODELS=_scenario(scratch / "whole_models.json"),
               TF_GE_IN_LOOP_OPS=_oracle().write_op_scenario(str(scratch / "op_table.json"), str(op_def)),
               TMPDIR=str(scratch))
    if sanitize:
        env.update(SANITIZER_OPTIONS)
    if other_build is not None:
        env["TF_GE_IN_LOOP_OTHER_BUILD"] = str(other_build)
    return env


def _run(exe, env, extra=()):
    proc = subprocess.run([str(exe)] + list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=600)
    import json
    records = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            records[record["name"]] = record
    return records, proc


@pytest.fixture(scope="module")
def runs(ge_in_loop, third_op_def, tmp_path_factory):
    """run(tag) -> (build, test program, records, process): the harness of the tag, built and run
    once under AddressSanitizer + UBSan. One build per tag serves every test here: the sanitized
    run passes or fails each case as an unsanitized one would, and also fails on what the
    sanitizers find (a second, unsanitized build of the same -O0 upstream code would add a build
    of every tag and check nothing more). run.other[tag]: the GE library of the same tag built
    over the third op's table (third_op_def), the other build the unload cases load an OM of."""
    cache = {}

    def run(tag):
        if tag not in cache:
            build, exe = ge_in_loop(tag, sanitize=True)
            scratch = tmp_path_factory.mktemp("ge-in-loop")
            run.other[tag] = _build_library(build, scratch, "third-op",
                                            extra=["-DGE_IN_LOOP_OP_DEF=" + str(third_op_def)])
            cache[tag] = (build, exe) + _run(exe, harness_env(scratch, build.op_def, sanitize=True,
                                                              other_build=run.other[tag]))
        return cache[tag]

    run.other = {}
    return run


def test_without_the_snapshots_the_harness_skips_naming_the_variables(hicann_snapshots):
    snapshots = type(hicann_snapshots)(environ={})
    reason = snapshots.missing(["v9.2.0-beta.1"], ["v9.2.0-beta.1"])
    assert reason.startswith("needs the hicann snapshots: ")
    assert "TF_GE_CUSTOM_GE_REPO is unset" in reason and "TF_GE_CUSTOM_METADEF_REPO is unset" in reason
    bogus = type(hicann_snapshots)(environ={"TF_GE_CUSTOM_GE_REPO": "/nonexistent/ge",
                                            "TF_GE_CUSTOM_METADEF_REPO": "/nonexistent/md"})
    reason = bogus.missing(["HEAD"], ["HEAD"])
    assert reason.startswith("needs the hicann snapshots: ")
    assert "TF_GE_CUSTOM_GE_REPO=/nonexistent/ge is not a git directory" in reason


@pytest.mark.parametrize("tag", TAGS)
def test_every_listed_upstream_file_is_at_its_tag(hicann_snapshots, tag):
    import json
    entry = json.loads((HARNESS / "upstream_files.json").read_text())["tags"][tag]
    hicann_snapshots.require([entry["ge"]], [entry["metadef"]])
    for source in entry["runtime"] + entry["registry"] + entry["loader"]:
        repo, path = source.split(":", 1)
        assert hicann_snapshots.has_file(hicann_snapshots.repo(repo), entry[repo], path), (tag, source)
    # "om2": the tag's GE has the OM2 code generator whose generated code deserializes into GE's
    # factory's instance (the om2_*.cc cases follow it)
    om2 = hicann_snapshots.has_file(hicann_snapshots.ge, entry["ge"],
                                    "base/common/om2/codegen/emitter/stable_parts/stable_part_provider.cc")
    if om2:
        generated = subprocess.run(["git", "-C", str(hicann_snapshots.ge), "show", entry["ge"] +
                                    ":base/common/om2/codegen/emitter/stable_parts/stable_part_provider.cc"],
                                   stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
        om2 = "CustomOpFactory::CreateOrGetCustomOp" in generated and "Deserialize(kernel_bin_buffer)" in generated
    assert entry["om2"] == om2, (tag, om2)
    # The tag's own annotated_kernel_args.cc says how an InputAddr is described.
    text = subprocess.run(["git", "-C", str(hicann_snapshots.ge), "show",
                           entry["ge"] + ":graph_metadef/exe_graph/runtime/annotated_kernel_args.cc"],
                          stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    kind = "instance" if "AddrType::INPUT_INSTANCE" in text else "ir"
    assert "AddrType::INPUT" in text
    assert entry["address_descriptors"] == kind, (tag, kind)


def test_the_harness_builds_every_adapter_source_the_package_builds():
    """The harness takes every .cc of ge_ops/cann/ but op_proto.cc (CMakeLists.txt's glob);
    the package's GE library lists its sources in ge_ops/CMakeLists.txt. The two sets agree, so
    an adapter file the package gains is in the harness too, and none the package dropped."""
    text = (SOURCE_ROOT / "ge_ops" / "CMakeLists.txt").read_text()
    listed = re.search(r"add_library\(tf_ge_custom_ge SHARED([^)]*)\)", text)
    assert listed, "ge_ops/CMakeLists.txt no longer defines tf_ge_custom_ge"
    package = sorted(os.path.basename(s) for s in listed.group(1).split())
    in_folder = sorted(p.name for p in (SOURCE_ROOT / "ge_ops" / "cann").glob("*.cc"))
    assert package == in_folder, (package, in_folder)
    assert "ge_report.cc" in package and "kernel_op.cc" in package
    harness = [name for name in in_folder if name != "op_proto.cc"]
    assert len(harness) == len(package) - 1


@pytest.mark.parametrize("tag", TAGS)
def test_every_case_in_the_driver_is_registered(runs, tag):
    build, exe, _, proc = runs(tag)
    print("GE in the loop %s: built in %.0f s (%.0f CPU s)" % (tag, build.seconds, build.cpu_seconds))
    # the whole-model cases' figures (driver/whole_model_tests.cc)
    print("\n".join(line for line in proc.stdout.splitlines() if line.startswith("# ")))
    listed = subprocess.run([str(exe), "--list"], stdout=subprocess.PIPE, universal_newlines=True,
                            check=True)
    assert sorted(listed.stdout.split()) == sorted(_case_names(tag))


@pytest.mark.parametrize("tag, case", TAG_CASES)
def test_ge_in_loop(runs, tag, case):
    _, _, records, proc = runs(tag)
    assert case in records, "the harness ended before %s:\n%s" % (case, proc.stderr[-4000:])
    assert records[case]["passed"], "\n".join(records[case]["failures"])


@pytest.mark.slow
@pytest.mark.parametrize("tag", TAGS)
def test_every_case_passes_under_asan_and_ubsan(runs, tag):
    """ASan + UBSan over the adapter, the core and GE's context code of each tag, the whole
    models included (UBSan's vptr check off: GE's polymorphic classes need libgraph's
    typeinfo, tests/native/ge_in_loop/CMakeLists.txt)."""
    _, _, records, proc = runs(tag)
    failed = {name: r["failures"] for name, r in records.items() if not r["passed"]}
    assert proc.returncode == 0, (failed, proc.stderr[-6000:])
    assert sorted(records) == sorted(_case_names(tag))
    assert "runtime error" not in proc.stderr and "AddressSanitizer" not in proc.stderr


# Deliberate defects put into a scratch copy of ge_ops/cann/: each must make the harness fail,
# in the cases named (a mutation nothing catches would show a blind spot).
# name: (file, [(text, mutant), ...], cases that must fail)
OM_LOAD_CASES = [
    "OmLoad.ResNet50BuiltOnAnotherHostRunsItsOwnKernelsFromTheMemfdCopyOnAscend910B1AndTheBoard",
    "OmLoad.MobileNetV2BuiltOnAnotherHostRunsItsOwnKernelsFromTheMemfdCopyOnAscend910B1AndTheBoard",
    "OmLoad.TheEncoderBuiltOnAnotherHostRunsItsOwnKernelsFromTheMemfdCopyOnAscend910B1AndTheBoard"]
MUTATIONS = {
    "inputs_read_in_the_wrong_order": (
        # Execute's line (DeclareLaunchArgs' twin carries a comment after it).
        "kernel_op.cc", [("call.inputs[i] = Address(t->GetAddr());\n",
                          "call.inputs[op_->inputs.size() - 1 - i] = Address(t->GetAddr());\n")],
        ["Execute.FlatFloat32LaunchesOnceWithTheA2ArgumentBytesOnTheContextsStream",
         "Execute.EveryTiledVariantGetsItsExtentsStridesAndGrid",
         "Execute.MoreThanTwoToThe31ElementsAreChunkedWithoutAllocatingThem"]),
    "launch_on_the_default_stream": (
        "acl_runtime.cc", [("ctx_->GetStream(), nullptr, host_args->data()", "nullptr, nullptr, host_args->data()")],
        ["Execute.FlatFloat32LaunchesOnceWithTheA2ArgumentBytesOnTheContextsStream",
         "Execute.EveryTiledVariantGetsItsExtentsStridesAndGrid"]),
    "output_shape_of_the_first_dimension": (
        "kernel_op.cc", [("out->SetDim(k, shape.value()[k]);", "out->SetDim(k, shape.value()[0]);")],
        ["InferShape.BroadcastsAsTfMathAdd", "InferShape.GesRankLimitHolds"]),
    "output_address_declared_as_an_input": (
        "kernel_op.cc", [("return args->AppendArg(gert::OutputAddr{w.index, Pointer(w.value)});",
                          "return args->AppendArg(gert::InputAddr{w.index, Pointer(w.value)});")],
        ["DeclareLaunchArgs.FlatFloat32IsOneLaunchOfTheFlatKernelAsGesHandlerRecordsIt",
         "DeclareLaunchArgs.ARowBroadcastDeclaresTheTiledKernelsExtentsStridesAndGrid",
         "DeclareLaunchArgs.Float16DeclaresItsOwnBinaryWithTheElementCount"]),
    # The OM's own copy of the library registering no creator of its own: the op registered
    # with GE's factory directly (the online path works) instead of REG_AUTO_MAPPING_OP, so the
    # copy's GetRegisteredCustomOpCreators lists nothing and GE's loader finds no AddCustom.
    "the_memfd_copy_registers_no_creator": (
        "custom_ops.cc", [
            ('#include "kernel_op.h"\n', '#include "kernel_op.h"\n#include "graph/custom_op_factory.h"\n'),
            ("  REG_AUTO_MAPPING_OP(op);",
             "  static const bool tgc_registered_##op = ge::CustomOpFactory::RegisterCustomOpCreator( \\\n"
             "      ge::AscendString(#op), [] { return std::unique_ptr<ge::BaseCustomOp>(new op()); }) == ge::GRAPH_SUCCESS;")],
        ["OmLoad.TheModelsLibraryCopyRegistersAddCustomIntoItsOwnCreatorListWhereLibgraphsIsLoaded"] + OM_LOAD_CASES),
    # Deserialize in a copy outside any OPP root taking the package's kernels first (from the
    # OPP root the host exports), so the model runs the package's binaries, not its own.
    "deserialize_picks_the_packages_binary": (
        "kernel_op.cc", [(
            "    auto restored = core::KernelRegistry::FromSerialized(buffer);\n",
            "    auto restored = core::KernelRegistry::FromSerialized(buffer);\n"
            "    if (restored.ok() && std::getenv(\"ASCEND_CUSTOM_OPP_PATH\") != nullptr) {\n"
            "      auto package = core::KernelRegistry::FromOppRoot(std::getenv(\"ASCEND_CUSTOM_OPP_PATH\"));\n"
            "      if (package->AddSerialized(buffer).ok()) restored = package;\n"
            "    }\n")],
        OM_LOAD_CASES),
}
# The copy leaves with its model (driver/unload_tests.cc): Execute's scratch kept in a C++
# thread_local again (its destructor registered with glibc pins the copy while the thread
# lives), and the kernel cache given no way to free its programs.
UNLOAD_CASES = ["Unload.ALongLoadRunUnloadLoopUnmapsEveryCopyAndUnloadsItsPrograms",
                "Unload.AnOmOfAnotherBuildLoadedUnderTheSameFdPathRunsThatBuildsCode"]
MUTATIONS.update({
    "execute_scratch_in_a_thread_local": (
        "kernel_op.cc", [("    ExecuteScratch &scratch = execute_scratches.Get();\n",
                          "    thread_local ExecuteScratch scratch;\n")],
        UNLOAD_CASES),
    "programs_never_unloaded": (
        "acl_runtime.cc", [("core::KernelUnloader AclRuntime::Unloader() const { return &UnloadProgram; }",
                            "core::KernelUnloader AclRuntime::Unloader() const { return nullptr; }")],
        UNLOAD_CASES[:1]),
})
# HEAD's OM2 path: a model deserialized into the global instance joining its registry whatever
# its bytes (what AddSerialized alone did): the second model's nodes run the first one's.
OM2_NODE_INFO = "Om2NodeInfo."
OM2_MUTATIONS = {
    "om2_model_runs_the_first_models_binaries": (
        "kernel_op.cc", [("const core::Status added = models_.Add(*registry.value(), buffer, &note);",
                          "const core::Status added = registry.value()->AddSerialized(buffer);")],
        ["Om2.TwoModelsWithOtherBinariesUnderOneKeyEachRunTheirOwnOnTheGlobalInstance"]),
    # OM2's 88-byte block read as if it had an attribute area, nothing measured: the count and
    # alpha read past the block (a heap-buffer-overflow the sanitizers stop, or a garbage alpha).
    "om2_reads_the_attribute_area_that_is_not_there": (
        "kernel_op.cc", [
            ("    const bool om2 = !AttrAreaOf(*ctx, &area);", "    const bool om2 = !AttrAreaOf(*ctx, &area) && false;"),
            ("    if (attrs_ == nullptr || !area_.HoldsOffsets(0)) return false;\n"
             "    const size_t count = attrs_->GetAttrNum();\n"
             "    return index < count && area_.HoldsOffsets(count);",
             "    if (attrs_ == nullptr) return false;\n    return index < attrs_->GetAttrNum();"),
            ("    return area_.Holds(value, sizeof(T)) ? value : nullptr;", "    return value;")],
        [OM2_NODE_INFO + "LeakyRelusAlphaWordIsTheBinary32BitsOfTheNodesAlpha"]),
    # An OM2 node served by name alone, not by the model its thread loaded last: its words are
    # nowhere, and of two models under one name the wrong one runs.
    "om2_node_goes_by_name_only": (
        "kernel_op.cc", [("om2 ? models_.ForOm2Node(node, &model) : models_.ForNode(node, &model)",
                          "models_.ForNode(node, &model)")],
        [OM2_NODE_INFO + "EveryOpRunsWithTheAttributeWordsItsCompileRecordedInBothDtypes",
         OM2_NODE_INFO + "AModelIsKnownByItsBytesAndEachThreadsNodesRunTheModelItLoadedLast"]),
    # An empty OM2 output asked of OM2's allocator, which returns nothing.
    "om2_empty_output_asks_the_allocator": (
        "kernel_op.cc", [("    if (one_element && om2_) {", "    if (one_element && om2_ && false) {")],
        [OM2_NODE_INFO + "AnEmptyOutputKeepsTheAddressTheModelGaveIt"]),
}
# What a sanitizer's report holds when it stops the program (halt_on_error, abort_on_error).
SANITIZER_STOPS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error: ")


def _stopped_by_a_sanitizer(proc, reports):
    """Whether a sanitizer stopped the run: its report on stderr, or in a file under reports (a
    case that captures stderr while the adapter runs takes the report with it)."""
    texts = [proc.stderr] + [p.read_text(errors="replace") for p in sorted(pathlib.Path(reports).glob("sanitizer*"))]
    return proc.returncode != 0 and any(s in t for t in texts for s in SANITIZER_STOPS)


def _caught(exe, env, expected, scratch):
    """The cases of expected that fail with the mutant library, run together; a case the program
    never reported because a sanitizer stopped it runs again alone, and counts as caught when a
    sanitizer stops that run too. Returns (caught, records)."""
    env = dict(env)
    reports = pathlib.Path(scratch) / "sanitizer-reports"
    for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
        env[name] = env.get(name, "") + ":log_path=" + str(reports / "sanitizer")
    reports.mkdir(parents=True, exist_ok=True)
    records, proc = _run(exe, env, [a for case in expected for a in ("--filter", case)])
    caught = set(c for c, r in records.items() if not r["passed"])
    for case in expected:
        if case in records:
            continue
        assert _stopped_by_a_sanitizer(proc, reports), (case, sorted(records), proc.returncode, proc.stderr[-3000:])
        for old in reports.glob("sanitizer*"):
            old.unlink()
        alone, again = _run(exe, env, ["--filter", case])
        if case not in alone and _stopped_by_a_sanitizer(again, reports):
            caught.add(case)
            print("mutant case %s: stopped by a sanitizer" % case)
        elif case in alone:
            records[case] = alone[case]
            if not alone[case]["passed"]:
                caught.add(case)
    return sorted(caught), records
MUTATION_TAG = "HEAD" if "HEAD" in TAGS else TAGS[0]


def _mutation_table(tag):
    import json
    om2 = json.loads((HARNESS / "upstream_files.json").read_text())["tags"][tag]["om2"]
    return dict(MUTATIONS, **(OM2_MUTATIONS if om2 else {}))


def _build_library(build, tmp_path, name, cann=None, extra=()):
    """A GE library of ge_ops/cann/ (or the mutated copy cann) built with the same upstream
    libraries as build, into its own folder; returns its path."""
    return build.build(build_dir=tmp_path / ("lib-" + name), cann_dir=cann, prebuilt=build, target="tf_ge_custom_ge",
                       extra=extra)


@pytest.mark.slow
def test_deliberate_adapter_defects_are_caught(runs, tmp_path):
    """Each mutant GE library is built from a mutated copy of ge_ops/cann/ (with the same
    upstream libraries) and run by the same test program; the cases named must fail, and the
    unmutated library passes them (test_ge_in_loop). Each mutant runs only the cases named for
    it (the clean run passed them all). The mutant's folder is kept between
    mutants and only the files that differ are written, so each build compiles at most the
    file the last mutant changed and the one this mutant changes."""
    build, exe, clean, _ = runs(MUTATION_TAG)
    table = _mutation_table(MUTATION_TAG)
    assert all(clean[c]["passed"] for m in table.values() for c in m[2])
    cann = tmp_path / "cann"
    shutil.copytree(str(SOURCE_ROOT / "ge_ops" / "cann"), str(cann))
    caught = {}
    for name, (filename, edits, expected) in sorted(table.items()):
        original = (SOURCE_ROOT / "ge_ops" / "cann" / filename).read_text()
        mutated = original
        for text, mutant in edits:
            assert mutated.count(text) == 1, "the mutation %s no longer applies to %s: update MUTATIONS" % (
                name, filename)
            mutated = mutated.replace(text, mutant)
        for other in (SOURCE_ROOT / "ge_ops" / "cann").iterdir():  # only this mutation in the copy
            wanted = mutated if other.name == filename else other.read_text()
            if (cann / other.name).read_text() != wanted:  # a new time: CMake compiles it again
                (cann / other.name).write_text(wanted)
        library = _build_library(build, tmp_path, "mutant", cann)
        env = harness_env(tmp_path / name, build.op_def, sanitize=True, other_build=runs.other[MUTATION_TAG])
        (tmp_path / name).mkdir(exist_ok=True)
        env["TF_GE_IN_LOOP_LIBRARY"] = str(library)
        # only the cases that must fail: under the sanitizers a whole run takes minutes; a
        # sanitizer's stop counts as caught (_caught)
        caught[name], records = _caught(exe, env, expected, tmp_path / name)
        print("mutation %s: %d of %d cases fail: %s" % (name, len(caught[name]), len(expected),
                                                         ", ".join(caught[name])))
    for name, (_, _, expected) in table.items():
        assert set(expected) <= set(caught[name]), (name, caught[name])


COPY_CASE = "OmLoad.TheModelsLibraryCopyRegistersAddCustomIntoItsOwnCreatorListWhereLibgraphsIsLoaded"


@pytest.mark.slow
def test_the_memfd_copy_keeps_its_own_creators_whatever_the_registry_archives_visibility(runs, tmp_path):
    """In a process with libgraph's creator registry loaded globally, the model's copy of the
    library must register AddCustom into its own list. GE's CMake builds
    custom_op_registry_static with hidden symbols, which binds the copy's registrations to its
    own registry; the package's link option -Bsymbolic-functions (ge_ops/cmake/
    ge_library_link.cmake) keeps it so for an archive built without them. Built here both
    ways: the archive with default visibility and the package's link passes; the same without
    that option registers AddCustom into libgraph's list and leaves the copy's empty, which is
    what the option prevents."""
    build, exe, clean, _ = runs(MUTATION_TAG)
    assert clean[COPY_CASE]["passed"]
    outcomes = {}
    for name, extra in (("default_visibility", ["-DGE_IN_LOOP_REGISTRY_VISIBILITY=default"]),
                        ("default_visibility_no_link_option", ["-DGE_IN_LOOP_REGISTRY_VISIBILITY=default",
                                                               "-DGE_IN_LOOP_LIBRARY_LINK=none"])):
        library = _build_library(build, tmp_path, name, extra=extra)
        env = harness_env(tmp_path / name, build.op_def, sanitize=True)
        env["TF_GE_IN_LOOP_LIBRARY"] = str(library)
        records, proc = _run(exe, env, ["--filter", "OmLoad.TheModelsLibraryCopy"])
        assert COPY_CASE in records, proc.stderr[-3000:]
        outcomes[name] = records[COPY_CASE]
        print("registry archive %s: %s" % (name, "passed" if records[COPY_CASE]["passed"] else
                                           "failed: " + "; ".join(records[COPY_CASE]["failures"])[:600]))
    assert outcomes["default_visibility"]["passed"], outcomes["default_visibility"]["failures"]
    assert not outcomes["default_visibility_no_link_option"]["passed"]


# ---- an op the harness was not written for: the third op of tests/package/test_adding_an_op.py ----
# (its GE library is also the other build of driver/unload_tests.cc: runs builds it once per tag)

ADDING_AN_OP = SOURCE_ROOT / "tests" / "package" / "test_adding_an_op.py"
ANY_OP_CASES = [c for c in CASES if c.startswith("AnyOp.")]


def _third_op_record():
    """The RECORD text test_adding_an_op.py appends to its copy's op_def.py (read from that
    file's source, not imported: one statement of the third op)."""
    import ast
    for node in ast.parse(ADDING_AN_OP.read_text()).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["RECORD"]:
            return ast.literal_eval(node.value)
    raise AssertionError("%s no longer assigns RECORD" % ADDING_AN_OP)


@pytest.fixture(scope="module")
def third_op_def(tmp_path_factory):
    """The copy's tf_ge_custom/op_def.py of test_adding_an_op.py: the checkout's with the third
    op's record appended (its OPS then ends with SquareCustom), kernel_contract.py beside it.
    Nothing else of the copy is read by GE in the loop: the adapter's sources and the driver are
    the checkout's (the copy's are the same files), the kernels test_support's fake npubins."""
    folder = tmp_path_factory.mktemp("third_op") / "tf_ge_custom"
    folder.mkdir()
    package = SOURCE_ROOT / "tf_ge_custom"
    (folder / "op_def.py").write_text((package / "op_def.py").read_text() + _third_op_record())
    shutil.copy2(str(package / "kernel_contract.py"), str(folder / "kernel_contract.py"))
    return folder / "op_def.py"


@pytest.mark.parametrize("tag", TAGS)
def test_a_third_op_runs_through_ge_in_the_loop_from_its_record_alone(runs, third_op_def, tag, tmp_path):
    """SquareCustom, added by its record alone, through GE in the loop: the GE library built
    from the checkout's adapter sources over the copy's op_def.py (its table generated there;
    the upstream libraries of the tag's sanitized build reused), loaded into the same test
    program, whose generic cases (driver/any_op_tests.cc) run every op of that table from the
    oracle's reading of the records: nothing of the harness names the op."""
    import json
    build, exe, _, _ = runs(tag)
    library = runs.other[tag]  # built by runs for the unload cases, with the copy's op_def.py
    env = harness_env(tmp_path / "run", third_op_def, sanitize=True)
    env["TF_GE_IN_LOOP_LIBRARY"] = str(library)
    records, proc = _run(exe, env, ["--filter", "AnyOp."])
    print("\n".join(line for line in proc.stdout.splitlines() if line.startswith("# ")))
    failed = {name: r["failures"] for name, r in records.items() if not r["passed"]}
    assert proc.returncode == 0 and not failed, (failed, proc.stderr[-6000:])
    assert sorted(records) == sorted(ANY_OP_CASES) and len(ANY_OP_CASES) >= 5
    assert "runtime error" not in proc.stderr and "AddressSanitizer" not in proc.stderr
    # the table the library and the cases ran: the copy's OPS, the third op last, and every
    # launch of each of its dtypes checked at each step
    with open(env["TF_GE_IN_LOOP_OPS"]) as f:
        table = {op["type"]: op for op in json.load(f)["ops"]}
    from tf_ge_custom import op_def as checkout_records

    assert list(table) == [op.type_name for op in checkout_records.OPS] + ["SquareCustom"]
    square = table["SquareCustom"]
    assert square["dtypes"] == ["float32", "float16"] and square["inputs"] == 1
    for step in ("Execute", "DeclareLaunchArgs", "through GE's OM loader"):
        assert "# AnyOp SquareCustom %s: %d launches of 2 dtypes checked" % (step, len(square["cases"])) in proc.stdout
