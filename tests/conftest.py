"""Suite-wide rules.

- The tests import the *installed* package (pytest runs in importlib mode, so the source
  tree is not on sys.path); a package without its built op library is reported at once.
- Under CI (TF_GE_CUSTOM_STRICT_SKIPS=1) a skipped test fails the run, unless its reason
  starts with one of ALLOWED_SKIP_PREFIXES: only an Ascend host, a CANN toolkit, or a
  feature TensorFlow 1.15 does not have (in the compat run) may excuse a test, never a
  missing Python package.
"""
import os

import pytest

ALLOWED_SKIP_PREFIXES = ("needs an Ascend NPU", "needs a CANN toolkit", "TensorFlow 1.15 has no")


def needs_ascend(reason):
    """skip marker for a test that can only run on an Ascend host."""
    return pytest.mark.skip(reason="needs an Ascend NPU: " + reason)


_bad_skips = []


def pytest_runtest_logreport(report):
    if report.skipped and os.environ.get("TF_GE_CUSTOM_STRICT_SKIPS") == "1":
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.replace("Skipped: ", "", 1)
        if not reason.startswith(ALLOWED_SKIP_PREFIXES):
            _bad_skips.append("%s: %s" % (report.nodeid, reason))


def pytest_sessionfinish(session, exitstatus):
    if _bad_skips:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter):
    if _bad_skips:
        terminalreporter.section("skips not allowed in CI (TF_GE_CUSTOM_STRICT_SKIPS=1)")
        for line in _bad_skips:
            terminalreporter.write_line(line)


class OddFiles(object):
    """What a reader may find where it expects a regular file, and a guard against hangs.

    ``make(kind, path)`` puts one of :data:`KINDS` at ``path``; ``finishes(f, *args)`` runs
    ``f`` in a thread and fails the test if it blocks (opening a FIFO for reading would).
    """

    KINDS = ("directory", "fifo", "symlink loop", "dangling symlink")

    @staticmethod
    def make(kind, path):
        path = str(path)
        if kind == "directory":
            os.mkdir(path)
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "symlink loop":
            os.symlink(path, path)
        elif kind == "dangling symlink":
            os.symlink(path + ".gone", path)
        else:
            raise ValueError("unknown kind %r; kinds: %s" % (kind, ", ".join(OddFiles.KINDS)))

    @staticmethod
    def finishes(function, *args, **kwargs):
        import threading

        timeout = kwargs.pop("timeout", 30)
        result = {}

        def target():
            try:
                result["value"] = function(*args, **kwargs)
            except BaseException as e:  # handed to the test
                result["error"] = e

        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        thread.join(timeout)
        assert not thread.is_alive(), "%s blocked" % getattr(function, "__name__", function)
        if "error" in result:
            raise result["error"]
        return result["value"]


@pytest.fixture
def odd_files():
    return OddFiles


# --- synthetic CANN toolkits (tf_ge_custom/_build/cann_toolkit.py; tests/ge, tests/doctor) --

# One stand-in file per feature the build detects, with just the text detection looks for.
# They are not CANN's files: a toolkit made of them passes detection and fails to compile.
_FAKE_TOOLKIT_FILES = {
    "include/graph/custom_op.h": (
        "namespace ge {\nclass BaseCustomOp {};\n"
        "class EagerExecuteOp : virtual public BaseCustomOp {};\n"
        "class PortableOp : virtual public BaseCustomOp {};\n"
        "class ShapeInferOp : virtual public BaseCustomOp {};\n"
        "class CompilableOp : virtual public BaseCustomOp {};\n}\n"),
    "include/register/register.h": "// stand-in\nvoid AutoMappingByOpFn();\n",
    "include/acl/acl_rt.h": "// stand-in\nint aclrtLaunchKernelWithHostArgs();\n",
    "include/parser/tensorflow_parser.h": "// stand-in\nint aclgrphParseTensorFlow();\n",
    "lib64/libcustom_op_registry_static.a": "",
    "lib64/libascendcl.so": "",
    "lib64/libgraph.so": "",
    "lib64/libregister.so": "",
    "lib64/libgert.so": "",
    "lib64/liblowering.so": "",
    "lib64/libfmk_parser.so": "",
}


@pytest.fixture
def fake_toolkit(tmp_path):
    """make(name, version="9.2.0-beta.1", drop=(), replace={}) -> path of a synthetic toolkit
    with every feature the GE build looks for, minus the files in ``drop``; ``replace`` maps
    a file to other text. ``version=None`` writes no install record."""

    def make(name="cann", version="9.2.0-beta.1", drop=(), replace=None):
        home = tmp_path / name
        files = dict(_FAKE_TOOLKIT_FILES)
        files.update(replace or {})
        for rel, text in files.items():
            if rel in drop:
                continue
            (home / rel).parent.mkdir(parents=True, exist_ok=True)
            (home / rel).write_text(text)
        if version is not None:
            record = home / "x86_64-linux" / "ascend_toolkit_install.info"
            record.parent.mkdir(parents=True, exist_ok=True)
            record.write_text("package_name=Ascend-cann-toolkit\nversion=%s\narch=x86_64\n" % version)
        home.mkdir(exist_ok=True)
        return str(home)

    return make


# --- a second, synthetic op (docs/adding-an-op.md): what every generator and step does with it

# Appended to a copy of tf_ge_custom/op_def.py: an op unlike AddCustom in every field a
# generator writes (three inputs, another type attr, two dtypes, its own kernel entry, one variant).
SECOND_OP = '''

SCALED_MUL = OpDefinition(
    type_name="ScaledMulCustom",
    python_name="scaled_mul_custom",
    inputs=("a", "b", "scale"),
    outputs=("out",),
    type_attr="U",
    dtypes=("float16", "int32"),
    kernel=KernelSpec(
        source="add_kernel.py",
        variants=(KernelVariant("flat", "scaled_mul_kernel", "equal", (2048,),
                                (("BLOCK_SIZE", 2048),),
                                ("input:0", "input:1", "input:2", "output:0", "num_elements")),)),
)
OPS = OPS + (SCALED_MUL,)
'''


@pytest.fixture
def two_op_source(tmp_path):
    """A source tree whose op definition holds AddCustom and the synthetic ScaledMulCustom:
    ``(source root, the loaded op_def module)``. Everything else is the repository's own
    (linked), so the generators and build steps run unchanged over it."""
    import importlib.util
    import pathlib

    repo = pathlib.Path(__file__).resolve().parents[1]
    source = tmp_path / "source"
    package = source / "tf_ge_custom"
    package.mkdir(parents=True)
    for entry in ("ge_ops", "tf_ops", "kernels"):
        (source / entry).symlink_to(repo / entry)
    for path in (repo / "tf_ge_custom").glob("*.py"):
        if path.name != "op_def.py":
            (package / path.name).symlink_to(path)
    op_def_path = package / "op_def.py"
    op_def_path.write_text((repo / "tf_ge_custom" / "op_def.py").read_text() + SECOND_OP)
    spec = importlib.util.spec_from_file_location("_two_op_def", str(op_def_path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return source, module
