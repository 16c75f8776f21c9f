"""What a user's (or a damaged installation's) files do to the
commands, run from the console script or a fresh ``python -c``, never inside this process."""
import json
import os
import sys

import pytest

pytestmark = pytest.mark.kind("plumbing")  # our messages; the run-om cases drive the OM runner's TEST DOUBLE

LONG_NUMBER = "1" * 5000  # Python 3.11 refuses ints of more than 4300 digits with ValueError


# --- finding 2: tf.load_op_library(library_path()) on a damaged library -----------------

def test_load_op_library_of_library_path_refuses_a_truncated_library(user, package_copy, open_tmp):
    site, package = package_copy
    library = package / "_lib" / "libtf_ge_custom_ops.so"
    with open(str(library), "r+b") as f:
        f.truncate(os.path.getsize(str(library)) // 2)
    ran = user.run(user.python(
        "import tensorflow as tf",
        "import tf_ge_custom, sys",
        "assert tf_ge_custom.__file__.startswith(sys.argv[1]), tf_ge_custom.__file__",
        "try:",
        "    tf.load_op_library(tf_ge_custom.library_path())",
        "except tf_ge_custom.OpLibraryError as e:",
        "    print('REFUSED', e)",
        "else:",
        "    print('LOADED')", ) + [str(site)], open_tmp, env=user.env(PYTHONPATH=str(site)))
    assert ran.status == 0, ran  # before: killed by SIGBUS (-7)
    assert "REFUSED" in ran.out and str(library) in ran.out, ran
    assert "pip install" in ran.out, ran  # the rebuild command


# --- finding 3: a FIFO as the model ---------------------------------------------------

@pytest.mark.parametrize("name", ["m.pb", "m.keras", "m.meta"])
def test_export_refuses_a_fifo_as_the_model_at_once(tf_ge_custom_cmd, tmp_path, name):
    fifo = tmp_path / name
    os.mkfifo(str(fifo))
    ran = tf_ge_custom_cmd("export", str(fifo), "--output", str(tmp_path / "out"), cwd=tmp_path,
                           timeout=120)  # before: waited for a writer for ever
    assert ran.status == 1, ran
    assert "FIFO" in ran.err and str(fifo) in ran.err, ran


def test_export_refuses_a_fifo_as_an_input_file(tf_ge_custom_cmd, models, tmp_path):
    fifo = tmp_path / "x.npy"
    os.mkfifo(str(fifo))
    ran = tf_ge_custom_cmd("export", models["frozen_pb"], "--output", str(tmp_path / "m"),
                           "--inputs", "%s,%s" % (fifo, models["y"]), cwd=tmp_path, timeout=300)
    assert ran.status == 1 and "FIFO" in ran.err, ran


# --- finding 4: JSON integers of more than 4300 digits ----------------------------------

def _damage_build_record(package):
    path = package / "build_info.json"
    record = json.loads(path.read_text())
    record["tensorflow"]["library_size"] = "@@"
    path.write_text(json.dumps(record).replace('"@@"', LONG_NUMBER))
    return path


@pytest.mark.parametrize("args", [["--version"], ["doctor"]])
def test_a_huge_integer_in_the_build_record_is_a_named_error(user, tf_ge_custom_cmd, package_copy, open_tmp, args):
    site, package = package_copy
    record = _damage_build_record(package)
    ran = tf_ge_custom_cmd(*args, cwd=open_tmp, env=user.env(PYTHONPATH=str(site)))
    assert str(record) in "".join(ran.text.split()), ran  # names the file (argparse wraps
    # --version's text); before: a bare ValueError traceback
    assert LONG_NUMBER not in ran.text  # and does not echo the number


def test_doctor_json_always_prints_json(user, tf_ge_custom_cmd, package_copy, open_tmp):
    site, package = package_copy
    _damage_build_record(package)
    ran = tf_ge_custom_cmd("doctor", "--json", cwd=open_tmp, env=user.env(PYTHONPATH=str(site)))
    document = json.loads(ran.out)  # before: no JSON at all
    assert document["status"] == "FAIL" and ran.status == 1, ran
    assert any("build record" in c["detail"] for c in document["checks"] if c["status"] == "FAIL")


def test_import_with_a_huge_integer_in_the_build_record(user, package_copy, open_tmp):
    site, package = package_copy
    _damage_build_record(package)
    ran = user.run(user.python("import warnings; warnings.simplefilter('always')",
                      "import tf_ge_custom",
                      "try:",
                      "    tf_ge_custom.add_custom(1.0, 2.0)",
                      "except tf_ge_custom.OpLibraryError as e:",
                      "    print('REFUSED', str(e)[:300])"), open_tmp, env=user.env(PYTHONPATH=str(site)))
    assert ran.status == 0 and "REFUSED" in ran.out and "build record" in ran.out, ran


def test_a_huge_integer_in_a_kernel_manifest(tf_ge_custom_cmd, tmp_path):
    soc = tmp_path / "kernels" / "Ascend910B1"
    soc.mkdir(parents=True)
    (soc / "manifest.json").write_text('{"version": %s}' % LONG_NUMBER)
    ran = tf_ge_custom_cmd("list-kernels", "--dir", str(tmp_path / "kernels"), cwd=tmp_path)
    assert ran.status != 0 and "manifest" in ran.text, ran
    assert LONG_NUMBER not in ran.text


def test_a_huge_integer_in_an_npu_option_value(user, open_tmp):
    ran = user.run(user.python("from tf_ge_custom import npu",
                      "try:",
                      "    npu.session_config(profiling_options='{\"x\": %s}')" % LONG_NUMBER,
                      "except ValueError as e:",
                      "    print(type(e).__name__, str(e)[:400])"), open_tmp)
    assert ran.status == 0 and "NpuOptionError" in ran.out and "profiling_options" in ran.out, ran


# --- finding 5: output paths ------------------------------------------------------------

def test_export_refuses_a_directory_where_the_pb_goes_before_freezing(tf_ge_custom_cmd, models, tmp_path):
    (tmp_path / "model.pb").mkdir()
    ran = tf_ge_custom_cmd("export", models["frozen_pb"], "--output", str(tmp_path / "model"), cwd=tmp_path)
    assert ran.status == 1 and "model.pb is in the way" in ran.err, ran
    assert "verification" not in ran.out  # refused before the work
    assert sorted(os.listdir(str(tmp_path))) == ["model.pb"]


def test_export_refuses_a_name_too_long_before_freezing(tf_ge_custom_cmd, models, tmp_path):
    ran = tf_ge_custom_cmd("export", models["frozen_pb"], "--output", str(tmp_path / ("m" * 300)),
                           cwd=tmp_path)
    assert ran.status == 1 and "too long" in ran.err, ran
    assert "m" * 100 not in ran.err  # a short prefix of the name only
    assert os.listdir(str(tmp_path)) == []


def test_export_refuses_an_unwritable_folder_before_freezing(user, tf_ge_custom_cmd, models, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    with user.unwritable(folder):
        ran = tf_ge_custom_cmd("export", models["frozen_pb"], "--output", str(folder / "model"), cwd=tmp_path)
    assert ran.status == 1 and "not writable" in ran.err, ran
    assert "verification" not in ran.out
    assert os.listdir(str(folder)) == []


def test_export_refuses_a_file_where_the_output_folder_goes(tf_ge_custom_cmd, models, tmp_path):
    (tmp_path / "out").write_text("a file")
    ran = tf_ge_custom_cmd("export", models["frozen_pb"], "--output", str(tmp_path / "out" / "model"),
                           cwd=tmp_path)
    assert ran.status == 1 and "is not a folder" in ran.err, ran


def test_selftest_json_naming_a_directory_is_refused_first_and_leaves_nothing(tf_ge_custom_cmd, tmp_path):
    (tmp_path / "report").mkdir()
    ran = tf_ge_custom_cmd("selftest", "--only", "DOCTOR", "--json", str(tmp_path / "report"), cwd=tmp_path)
    assert ran.status == 2 and "is a folder" in ran.err, ran
    assert "DOCTOR=" not in ran.out  # refused before any stage ran
    assert sorted(os.listdir(str(tmp_path))) == ["report"]  # no report.tmp


@pytest.mark.slow
def test_selftest_json_writes_the_report_whole(tf_ge_custom_cmd, tmp_path):
    ran = tf_ge_custom_cmd("selftest", "--only", "DOCTOR", "--json", str(tmp_path / "new" / "r.json"),
                           cwd=tmp_path)
    assert "DOCTOR=PASS" in ran.out, ran
    document = json.load(open(str(tmp_path / "new" / "r.json")))
    assert document["format"] == "tf-ge-custom-selftest"
    assert os.listdir(str(tmp_path / "new")) == ["r.json"]


# --- finding 6: a damaged XLA kernel library -------------------------------------------

def _truncate_xla(package):
    record = json.loads((package / "build_info.json").read_text())
    relative = record["tensorflow"].get("xla_library")
    if not relative:
        pytest.fail("this build made no XLA kernel library (%s): the XLA tests need one"
                    % record["tensorflow"].get("xla_library_missing_because"))
    path = package / relative
    with open(str(path), "r+b") as f:
        f.truncate(os.path.getsize(str(path)) // 2)
    return path


def test_a_damaged_xla_library_is_reported_at_import(user, package_copy, open_tmp):
    site, package = package_copy
    library = _truncate_xla(package)
    ran = user.run(user.python("import tf_ge_custom", "tf_ge_custom.add_custom(1.0, 2.0)"), open_tmp,
              env=user.env(PYTHONPATH=str(site)))
    assert ran.status == 0, ran
    assert "XLA kernel library is not used" in ran.err and str(library) in ran.err, ran


def test_doctor_reports_a_damaged_xla_library(user, tf_ge_custom_cmd, package_copy, open_tmp):
    site, package = package_copy
    _truncate_xla(package)
    ran = tf_ge_custom_cmd("doctor", "--json", cwd=open_tmp, env=user.env(PYTHONPATH=str(site)))
    checks = {c["name"]: c for c in json.loads(ran.out)["checks"]}
    assert checks["XLA kernels"]["status"] == "FAIL", checks["XLA kernels"]
    assert "has" in checks["XLA kernels"]["detail"] and "bytes" in checks["XLA kernels"]["detail"]


def test_doctor_says_the_xla_library_is_fine(tf_ge_custom_cmd, tmp_path):
    ran = tf_ge_custom_cmd("doctor", "--json", cwd=tmp_path)
    checks = {c["name"]: c for c in json.loads(ran.out)["checks"]}
    assert checks["XLA kernels"]["status"] == "OK", checks["XLA kernels"]


# --- every input a user hands over: one error line naming the file, never a traceback ----------

def _one_error(ran, prog, *words):
    """``ran`` failed with exactly one ``PROG: error:`` line, holding each of ``words``."""
    errors = [l for l in ran.err.splitlines() if l.startswith("%s: error: " % prog)]
    assert ran.status == 1 and len(errors) == 1, ran
    for word in words:
        assert word in errors[0], (word, ran)
    return errors[0]


@pytest.mark.kind("doubles")
@pytest.mark.parametrize("field, value, words", [
    ("index", "<absent>", 'has no "index"'), ("name", "<absent>", 'has no "name"'),
    ("dtype", "<absent>", 'has no "dtype"'), ("dims", "<absent>", 'has no "dims"'),
    ("size", "<absent>", 'has no "size"'), ("file", "<absent>", 'has no "file"'),
    ("index", "0", 'has "index": "0", not a whole number'), ("index", -1, 'has "index": -1, not'),
    ("index", True, 'has "index": true, not'), ("name", 3, 'has "name": 3, not a string'),
    ("dtype", 7, 'has "dtype": 7, not a dtype name'), ("dims", "6", 'has "dims": "6", not a list'),
    ("dims", [2, "3"], 'has "dims": [2, "3"], not a list of whole numbers'),
    ("dims", [-1, 6], 'has "dims": [-1, 6], not'), ("size", 1.5, 'has "size": 1.5, not'),
    ("file", None, 'has "file": null, not the path of a file'),
    ("dims", [2, 4], "has 24 bytes, but dims [2, 4] of float32 need 32"),
    ("dtype", "float99", "reported dtype 'float99', which numpy does not know"),
    ("file", "/nonexistent/output_0.bin", "cannot read the runner's file /nonexistent/output_0.bin"),
])
def test_run_om_names_each_malformed_field_of_the_runners_output(tf_ge_custom_cmd, om_runner_double, tmp_path,
                                                                 field, value, words):
    """A runner line with a field missing or of the wrong type (the OM runner TEST DOUBLE prints
    it): one error line naming the runner's log and the field; before, a KeyError traceback."""
    args, env = om_runner_double
    env["TF_GE_CUSTOM_TEST_OUTPUT_FIELDS"] = json.dumps({field: value})
    ran = tf_ge_custom_cmd(*args, cwd=tmp_path, env=env)
    log = tmp_path / "m.outputs" / "run-om.log"
    where = ("%s, line " % log) if words.startswith(("has \"", "has no")) else "output 0 (z): "  # a line, or a file
    _one_error(ran, "tf-ge-custom run-om", where, words)
    assert ran.out.splitlines()[-1] == "RUN_OM=FAIL", ran


@pytest.fixture(scope="module")
def weighty(tmp_path_factory, user):
    """Models with weights to damage (make_models.py, in a fresh process)."""
    folder = tmp_path_factory.mktemp("weighty")
    here = os.path.dirname(os.path.abspath(__file__))
    made = user.run([sys.executable, os.path.join(here, "make_models.py"), str(folder), "variables_saved_model",
                     "tf1_saved_model", "checkpoint", "dense_keras", "dense_h5"], folder)
    assert made.status == 0, made
    return json.loads((folder / "made.json").read_text())


def _truncate(path, keep):
    with open(path, "r+b") as f:
        f.truncate(keep(os.path.getsize(path)))


def _damage(kind, model):
    """Damage the copy ``model`` as ``kind`` says; (the export's argv tail, the file named)."""
    import glob
    import zipfile

    if kind.startswith("saved model"):
        data = glob.glob(os.path.join(model, "variables", "variables.data-*"))[0]
        index = os.path.join(model, "variables", "variables.index")
        if kind.endswith("truncated data"):
            _truncate(data, lambda n: n // 2)
            return [], os.path.basename(data)
        if kind.endswith("garbage index"):
            open(index, "wb").write(b"\x7f" * os.path.getsize(index))
            return [], os.path.basename(index)
        os.remove(data)
        return [], data
    if kind.startswith("checkpoint"):
        prefix = model[: -len(".meta")]
        if kind.endswith("truncated data"):
            data = glob.glob(prefix + ".data-*")[0]
            _truncate(data, lambda n: n // 2)
            return ["--outputs", "z"], os.path.basename(data)
        if kind.endswith("garbage index"):
            open(prefix + ".index", "wb").write(b"\x7f" * 64)
            return ["--outputs", "z"], os.path.basename(prefix + ".index")
        _truncate(model, lambda n: n // 3)
        return ["--outputs", "z"], model
    if kind == "h5 truncated":
        _truncate(model, lambda n: n // 2)
        return [], model
    if kind == "h5 damaged tree":
        data = open(model, "rb").read()
        at = data.find(b"TREE")
        with open(model, "r+b") as f:
            f.seek(at)
            f.write(b"\0" * 64)
        return [], model
    if kind == "keras truncated":
        _truncate(model, lambda n: n // 2)
        return [], model
    assert kind == "keras truncated member"
    with zipfile.ZipFile(model) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    member = [n for n in members if n.endswith(".h5")][0]
    members[member] = members[member][: len(members[member]) // 2]
    with zipfile.ZipFile(model, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return [], member


@pytest.mark.parametrize("kind, source, words", [
    ("saved model truncated data", "variables_saved_model", "shorter than its index says"),
    ("saved model garbage index", "variables_saved_model", "not a checkpoint index"),
    ("saved model missing data", "variables_saved_model", "a file is missing"),
    ("saved model truncated data", "tf1_saved_model", "shorter than its index says"),
    ("checkpoint truncated data", "checkpoint", "shorter than its index says"),
    ("checkpoint garbage index", "checkpoint", "not a checkpoint index"),
    ("checkpoint truncated meta graph", "checkpoint", "not a MetaGraphDef"),
    ("h5 truncated", "dense_h5", "truncated file"),
    ("h5 damaged tree", "dense_h5", "B-tree"),
    ("keras truncated", "dense_keras", "not a .keras archive"),
    ("keras truncated member", "dense_keras", "its member"),
])
def test_a_damaged_model_file_is_one_error_line_naming_it(tf_ge_custom_cmd, weighty, tmp_path, kind, source, words):
    import shutil

    if source not in weighty:
        pytest.fail("make_models.py made no %s with this TensorFlow: %s" % (source, sorted(weighty)))
    original = weighty[source]
    folder = tmp_path / "copy"
    if source == "checkpoint":
        shutil.copytree(os.path.dirname(original), str(folder))
        model = str(folder / os.path.basename(original))
    elif os.path.isdir(original):
        shutil.copytree(original, str(folder))
        model = str(folder)
    else:
        folder.mkdir()
        model = str(folder / os.path.basename(original))
        shutil.copy(original, model)
    extra, named = _damage(kind, model)
    ran = tf_ge_custom_cmd("export", model, "--output", str(tmp_path / "out" / "m"), *extra, cwd=tmp_path)
    _one_error(ran, "tf-ge-custom export", model, named, words)  # before: IndexError, OpError tracebacks
    assert not os.path.exists(str(tmp_path / "out" / "m.pb"))


def _zip_bomb():
    import importlib.util

    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "zip_bomb.py")
    spec = importlib.util.spec_from_file_location("zip_bomb", here)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_keras_bomb_is_one_line_naming_its_member_and_what_it_declares(tf_ge_custom_cmd, weighty, tmp_path):
    """A .keras of 330 KiB whose weights member inflates to 320 MiB (its declared size true), more than the 256 MiB a diagnosis reads. Before,
    the diagnosis after Keras' refusal ran testzip() and read the member whole."""
    if "dense_keras" not in weighty:
        pytest.fail("make_models.py made no dense_keras with this TensorFlow: %s" % sorted(weighty))
    bomb = str(tmp_path / "bomb.keras")
    member = _zip_bomb().keras_bomb(bomb, weighty["dense_keras"], 320)
    assert os.path.getsize(bomb) < 2 << 20
    ran = tf_ge_custom_cmd("export", bomb, "--output", str(tmp_path / "out" / "m"), cwd=tmp_path)
    _one_error(ran, "tf-ge-custom export", bomb, "its member %s declares %d bytes" % (member, 320 << 20),
               "zip bomb")
    assert not os.path.exists(str(tmp_path / "out" / "m.pb"))


def test_the_diagnosis_of_a_large_member_streams_it_under_an_address_space_limit(user, weighty, tmp_path):
    """A weights member of 240 MiB of zeros: under the cap, so the diagnosis reads it, and not an
    HDF5 file. With the address space limited to 96 MiB above what the process holds after
    importing TensorFlow, reading the member whole fails with MemoryError (the code before);
    streaming it through a spooled copy names what is wrong."""
    if "dense_keras" not in weighty:
        pytest.fail("make_models.py made no dense_keras with this TensorFlow: %s" % sorted(weighty))
    bomb = str(tmp_path / "large.keras")
    member = _zip_bomb().keras_bomb(bomb, weighty["dense_keras"], 240)
    child = "\n".join([
        "import resource, sys, zipfile",
        "from tf_ge_custom.export.freezing import damaged_files",
        "import h5py",
        "size = [int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmSize:')][0] * 1024",
        "resource.setrlimit(resource.RLIMIT_AS, (size + (96 << 20), resource.RLIM_INFINITY))",
        "try:",
        "    zipfile.ZipFile(sys.argv[1]).read(%r)" % member,
        "    print('read whole')",
        "except MemoryError:",
        "    print('whole: MemoryError')",
        "print('problem: ' + damaged_files.keras_member_problem(sys.argv[1]))",
    ])
    ran = user.run([sys.executable, "-c", child, bomb], str(tmp_path))
    assert ran.status == 0, ran
    lines = ran.out.splitlines()
    assert "whole: MemoryError" in lines, ran  # the limit is real: the old reading cannot pass it
    problem = [l for l in lines if l.startswith("problem: ")]
    assert problem and "its member %s cannot be read" % member in problem[0], ran


@pytest.mark.parametrize("command", ["export", "run-om"])
def test_an_npy_whose_header_claims_more_than_the_file_holds_is_refused_before_allocating(
        tf_ge_custom_cmd, models, om_runner_double, tmp_path, command):
    """A 24-byte .npy whose header claims 10^12 float32 (4 TB): before, numpy tried to allocate
    them (_ArrayMemoryError: Unable to allocate 3.64 TiB)."""
    import struct

    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }"
    header += " " * (118 - len(header)) + "\n"
    huge = tmp_path / "huge.npy"
    huge.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    truncated = tmp_path / "truncated.npy"
    truncated.write_bytes((tmp_path / "x.npy").read_bytes()[:-4])
    for bad, words in ((huge, "says shape [1000000000000] of float32, 4000000000000 bytes of data, but the file "
                              "holds 0"), (truncated, "24 bytes of data, but the file holds 20")):
        if command == "export":
            ran = tf_ge_custom_cmd("export", models["frozen_pb"], "--output", str(tmp_path / "m"), "--inputs",
                                   "%s,%s" % (bad, models["y"]), cwd=tmp_path, timeout=300)
        else:
            args, env = om_runner_double
            ran = tf_ge_custom_cmd(*(args[:2] + ["--input", str(bad), "--input", str(bad)]), cwd=tmp_path, env=env)
        _one_error(ran, "tf-ge-custom " + command, "input file %s" % bad, words)


BROKEN_TENSORFLOW = "raise ImportError('libtensorflow_cc.so.2: failed to map segment from shared object (double)')\n"


@pytest.mark.parametrize("how", ["a tensorflow TEST DOUBLE that fails to import", "ulimit -v 800000"])
def test_a_tensorflow_that_cannot_be_imported_is_one_line_and_verbose_shows_the_rest(
        tf_ge_custom_cmd, user, models, tmp_path, how):
    import subprocess

    env = user.env()
    prefix = ""
    if how.startswith("a tensorflow"):
        fake = tmp_path / "fake" / "tensorflow"
        fake.mkdir(parents=True)
        (fake / "__init__.py").write_text(BROKEN_TENSORFLOW)
        env["PYTHONPATH"] = str(tmp_path / "fake")
    else:
        prefix = "ulimit -v 800000; "
    line = prefix + "exec '%s' export '%s' --output '%s'" % (user.script, models["saved_model"], tmp_path / "m")
    runs = [subprocess.run(["bash", "-c", line + extra], cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=300) for extra in ("", " --verbose")]
    plain, verbose = runs
    assert "Traceback" not in plain.stdout + plain.stderr, plain.stderr
    errors = [l for l in plain.stderr.splitlines() if l.startswith("tf-ge-custom export: error: ")]
    assert plain.returncode == 1 and len(errors) == 1, plain.stderr
    assert "TensorFlow cannot be imported" in errors[0] and "ImportError: " in errors[0], errors
    assert "failed to map segment" in errors[0], errors  # the reason, in the one line
    assert "--verbose" in plain.stderr
    assert verbose.returncode == 1 and "Traceback (most recent call last)" in verbose.stderr, verbose.stderr
    assert verbose.stderr.rstrip().splitlines()[-2].startswith("tf-ge-custom export: error: TensorFlow cannot"), \
        verbose.stderr
    assert not os.listdir(str(tmp_path)) or sorted(os.listdir(str(tmp_path))) == ["fake"]


@pytest.mark.parametrize("args", [["--help"], ["export", "--help"], ["run-om", "--help"], ["--version"],
                                  ["list-kernels"], ["selftest", "--list"]])
def test_help_or_results_written_to_a_full_device_fail_with_the_systems_message(user, tmp_path, args):
    """As ``cat --help >/dev/full`` does: exit status 1, "No space left on device" (the
    system's words, os.strerror(ENOSPC)); before, --help and --version exited 0 in silence."""
    import errno
    import subprocess

    with open("/dev/full", "w") as full:
        proc = subprocess.run([user.script] + args, cwd=str(tmp_path), env=user.env(), stdout=full,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tf-ge-custom") and ": error: " in lines[0], proc.stderr
    assert lines[0].endswith(os.strerror(errno.ENOSPC)), proc.stderr
