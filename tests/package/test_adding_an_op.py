"""A third op is its record, its Triton kernel file and its CPU functor, and nothing else
(docs/adding-an-op.md): ``SquareCustom`` (``y = x * x``, float32 and float16, TensorFlow
equivalent ``tf.math.square``) added to a copy of the tree, which is then built for real and
run end to end.

- The copy is the checkout's build inputs as they are (tracked, and new files git does not
  ignore), and differs from them in exactly three places: ``SQUARE_CUSTOM`` appended to
  ``tf_ge_custom/op_def.py`` (and to ``OPS``), ``kernels/square_kernel.py`` and
  ``tf_ops/square_custom_functor.h``.
- ``pip install --target`` builds it (the package's own setup.py and build steps, no CANN),
  with a copy of the checkout's object cache: only the new op's generated source compiles.
- In a fresh process that imports the copy: ``tf_ge_custom.square_custom`` equals
  ``tf.math.square`` bit for bit (eager, ``tf.function``, a TF1 session, XLA through the
  equivalent, gradients), is refused outside its dtypes, and has a Keras-free function made
  from its record; doctor finds the three ops registered; the GE step's ``REG_OP`` header and
  the JSON a GE build installs list it.
- The copy's kernel file runs in Triton's CPU interpreter (PyPI triton, ``make
  triton-interp``) through the project's launch geometry, against numpy's ``x * x``.

The same record goes through GE in the loop in tests/ge/test_ge_in_loop.py
(``test_a_third_op_runs_through_ge_in_the_loop_from_its_record_alone``, which reads ``RECORD``
from this file and reuses the harness's sanitized build there): the copy's op_def.py as the GE
library's op table, the harness's generic cases, both tags. Not here: the kernel's HIVM
lowering (tests/kernels, per op).
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from tf_ge_custom import _library, op_def
from tf_ge_custom._build import object_cache
from tf_ge_custom.kernels import builder

pytestmark = pytest.mark.kind("oracle")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# what pip needs to build the package (setup.py's inputs), as the checkout has them
BUILD_INPUTS = ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md", "LICENSE", "tf_ge_custom",
                "kernels", "tf_ops", "ge_ops", "framework")

# --- the three things the third op is --------------------------------------------------------

# (tests/ge/test_ge_in_loop.py reads RECORD from this file's source too: the op through GE in
# the loop)
RECORD = '''

# y = x * x, as tf.math.square computes it: one input, no attribute, no broadcasting.
SQUARE_CUSTOM = OpDefinition(
    type_name="SquareCustom",
    python_name="square_custom",
    inputs=("x",),
    outputs=("y",),
    type_attr="T",
    dtypes=("float32", "float16"),
    kernel=KernelSpec(
        source="square_kernel.py",
        variants=(KernelVariant("flat", "square_kernel", "equal", (_BLOCK,), (("BLOCK_SIZE", _BLOCK),),
                                ("input:0", "output:0", "num_elements")),),
    ),
    equivalent="tf.math.square",
)
OPS = OPS + (SQUARE_CUSTOM,)
'''

KERNEL = '''"""The SquareCustom NPU kernel: y = x * x, one multiply in the element type."""
import triton
import triton.language as tl


@triton.jit
def square_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_programs = tl.num_programs(axis=0)
    for block_start in range(pid * BLOCK_SIZE, n_elements, num_programs * BLOCK_SIZE):
        offsets = block_start + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        tl.store(y_ptr + offsets, x * x, mask=mask)
'''

FUNCTOR = '''// The element-wise part of the SquareCustom CPU kernel: y = x * x, as tf.math.square's.
#ifndef SQUARE_CUSTOM_FUNCTOR_H_
#define SQUARE_CUSTOM_FUNCTOR_H_

#include "tensorflow/core/framework/tensor_types.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tf_ge_custom {
namespace functor {

template <typename Device, typename T>
struct SquareCustomFunctor {
  void operator()(const Device& d, const SquareCustomAttrs&,
                  typename ::tensorflow::TTypes<T>::ConstFlat x,
                  typename ::tensorflow::TTypes<T>::Flat y) {
    y.device(d) = x * x;
  }
};

}  // namespace functor
}  // namespace tf_ge_custom

#endif  // SQUARE_CUSTOM_FUNCTOR_H_
'''

ADDED = {"kernels/square_kernel.py": KERNEL, "tf_ops/square_custom_functor.h": FUNCTOR}
EDITED = "tf_ge_custom/op_def.py"
# the checkout's ops, as its records hold them (AddCustom, LeakyReluCustom, and any op added to
# this tree): the copy has them, then SquareCustom
CHECKOUT_OPS = [op.type_name for op in op_def.OPS]


def _tracked(root):
    """The build inputs of ``root`` as its user has them: tracked files and new ones git does
    not ignore (an op added to the tree and not yet committed builds with it)."""
    out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                          "--"] + list(BUILD_INPUTS), stdout=subprocess.PIPE, check=True).stdout
    return [p for p in out.decode().split("\0") if p and os.path.isfile(os.path.join(root, p))]


def _read(path):
    with open(path, "rb") as f:
        return f.read()


@pytest.fixture(scope="module")
def third_op(tmp_path_factory):
    """The copy with the third op, built and installed into a folder of its own:
    (copy root, installed folder, pip's output, seconds the build took)."""
    base = tmp_path_factory.mktemp("third_op")
    copy, target = base / "tree", base / "installed"
    for rel in _tracked(ROOT):
        os.makedirs(os.path.dirname(str(copy / rel)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, rel), str(copy / rel))
    with open(str(copy / EDITED), "a") as f:
        f.write(RECORD)
    for rel, text in ADDED.items():
        (copy / rel).write_text(text)
    # a copy of the checkout's object cache (what its make install left): the build takes every
    # object it can from there, and the checkout's cache is left as it was
    # (build/object-cache, or the folder $TF_GE_CUSTOM_BUILD_CACHE names)
    cache, checkout_cache = base / "object-cache", object_cache.cache_dir(str(ROOT))
    if not os.path.isdir(checkout_cache):
        pytest.fail("no object cache at %s: build the checkout first (make install; make test does)"
                    % checkout_cache)
    shutil.copytree(checkout_cache, str(cache))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASCEND_", "TF_GE_CUSTOM_"))}
    env.update(TF_GE_CUSTOM_BUILD_CACHE=str(cache),
               TF_CPP_MIN_LOG_LEVEL="2", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    started = time.time()
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-v", "--no-deps", "--no-build-isolation",
                           "--no-index", "--target", str(target), str(copy)], cwd=str(base), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=3000)
    seconds = time.time() - started
    assert proc.returncode == 0, proc.stdout[-6000:]
    return copy, target, proc.stdout, seconds


def test_the_copy_differs_from_the_checkout_by_the_record_the_kernel_and_the_functor(third_op):
    copy, _, _, _ = third_op
    ours = set(_tracked(ROOT))
    theirs = set(str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file()
                 and "build" not in p.relative_to(copy).parts and ".egg-info" not in str(p))
    assert theirs - ours == set(ADDED)
    changed = sorted(rel for rel in ours if _read(os.path.join(ROOT, rel)) != _read(str(copy / rel)))
    assert changed == [EDITED]
    assert _read(str(copy / EDITED)) == _read(os.path.join(ROOT, EDITED)) + RECORD.encode()


def test_the_build_compiles_only_the_new_ops_generated_source(third_op):
    _, target, out, seconds = third_op
    compiled = sorted(l.split("compiled ")[1].split(" (")[0] for l in out.splitlines()
                      if "tf-ge-custom build:" in l and " compiled " in l)
    # the checkout's installed build left every other object in the cache (make install): the
    # new op's source is the one unit that may compile (none, when an earlier run cached it)
    units = re.search(r"op library: (\d+) translation units, (\d+) from the object cache", out)
    assert units, out[-4000:]
    total, cached = int(units.group(1)), int(units.group(2))
    sources = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "tf_ops", "*.cc")))
    # an op of the checkout with a functor alone has a generated source too (docs/adding-an-op.md)
    generated = [op for op in op_def.OPS if not any(
        os.path.isfile(os.path.join(ROOT, "tf_ops", op.python_name + end)) for end in ("_ops.cc", "_kernels.cc"))]
    assert total == len(sources) + len(generated) + 1  # the checkout's, and the new op's generated one
    assert set(compiled) <= {"square_custom_generated.cc"} and cached + len(compiled) == total, out[-4000:]
    with open(str(target / "tf_ge_custom" / "build_info.json")) as f:
        info = json.load(f)
    # no XLA kernel of its own: under XLA its function puts tf.math.square in the graph; the
    # checkout's ops keep theirs (as the checkout's own build recorded them)
    assert info["tensorflow"]["xla_ops"] == _library.build_info()["tensorflow"]["xla_ops"]
    assert "SquareCustom" not in info["tensorflow"]["xla_ops"]
    print("the third op's pip install --target: %.1f s" % seconds)


CHILD = r'''
import json, sys
import numpy as np
import tensorflow as tf
import tf_ge_custom
from tf_ge_custom import doctor, errors, op_def, opp
report = {"package": tf_ge_custom.__file__, "ops": [o.type_name for o in op_def.OPS]}
f = tf_ge_custom.square_custom
rng = np.random.RandomState(3)
special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-20, 3e19, -2.5], np.float32)
out = {}
for dtype in ("float32", "float16"):
    t = tf.as_dtype(dtype)
    x = tf.constant(np.concatenate([special, rng.standard_normal(5000).astype(np.float32) * 300])
                    .astype(t.as_numpy_dtype))
    bits = tf.uint32 if dtype == "float32" else tf.uint16
    b = lambda v: tf.bitcast(v, bits).numpy()
    out["x/" + dtype] = b(x)
    out["eager/" + dtype] = b(f(x))
    out["function/" + dtype] = b(tf.function(f)(x))
    jitted = tf.function(lambda v: f(v), jit_compile=True)
    out["xla/" + dtype] = b(jitted(x))
    ops = jitted.get_concrete_function(x).graph.get_operations()
    report["xla_ops/" + dtype] = sorted(set(o.type for o in ops) - {"Placeholder", "Identity", "NoOp"})
    dy = tf.cast(tf.range(tf.size(x)) % 5 - 2, t)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    out["grad/" + dtype] = b(tape.gradient(y, x, output_gradients=dy))
    graph = tf.Graph()
    with graph.as_default():
        p = tf.compat.v1.placeholder(t, [None], name="x")
        y = f(p, name="sq")
        g = tf.compat.v1.gradients(y, p)[0]
        report["node/" + dtype] = [y.op.type, y.op.name]
        with tf.compat.v1.Session(graph=graph) as s:
            y1, g1 = s.run([y, g], {p: x.numpy()})
    out["tf1/" + dtype] = b(tf.constant(y1))
    out["tf1_grad/" + dtype] = b(tf.constant(g1))
for label, call in [("int32", lambda: f(tf.constant([1, 2]))), ("bfloat16", lambda: f(tf.constant([1.0], tf.bfloat16)))]:
    try:
        call()
        report[label] = None
    except errors.TfGeCustomError as e:
        report[label] = [type(e).__name__, str(e)]
import inspect
report["signature"] = str(inspect.signature(f))
report["doc"] = f.__doc__.splitlines()[0]
check = doctor.check_op_library(doctor.Context())
report["doctor"] = [check.status, check.detail]
report["json"] = json.loads(opp.supported_ops_json())
import time
from tf_ge_custom.testing import opcheck
started = time.time()
report["opcheck"] = [[r.name, r.status, r.detail] for r in opcheck("SquareCustom")]
report["opcheck_seconds"] = time.time() - started
np.savez(sys.argv[1], **out)
print("REPORT " + json.dumps(report))
'''


@pytest.fixture(scope="module")
def ran(third_op, tmp_path_factory):
    """What a fresh process importing the copy computed: (arrays, report)."""
    _, target, _, _ = third_op
    folder = tmp_path_factory.mktemp("third_op_run")
    # opcheck's Triton interpreter check finds PyPI triton there (make triton-interp)
    interp = os.environ.get("TF_GE_CUSTOM_TRITON_INTERP") or os.path.join(ROOT, ".cache", "triton-interp")
    env = dict(os.environ, PYTHONPATH=str(target), TF_CPP_MIN_LOG_LEVEL="2", TF_GE_CUSTOM_TRITON_INTERP=interp)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(folder / "out.npz")], cwd=str(folder), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-6000:]
    line = [l for l in proc.stdout.splitlines() if l.startswith("REPORT ")][-1]
    return dict(np.load(str(folder / "out.npz"))), json.loads(line[len("REPORT "):])


def _assert_same_numbers(got, want, dtype, what):
    """``got`` and ``want`` (bit patterns of ``dtype``): NaN at the same places (a NaN's
    payload is not compared), every other element bit for bit."""
    import tensorflow as tf

    def nan(bits):
        return np.isnan(tf.cast(tf.bitcast(tf.constant(bits), tf.as_dtype(dtype)), tf.float32).numpy())

    np.testing.assert_array_equal(nan(got), nan(want), err_msg=what)
    np.testing.assert_array_equal(got[~nan(want)], want[~nan(want)], err_msg=what)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_the_cpu_kernel_and_gradient_are_tf_math_squares_bit_for_bit(ran, dtype):
    import tensorflow as tf

    arrays, report = ran
    bits = tf.uint32 if dtype == "float32" else tf.uint16
    x = tf.bitcast(tf.constant(arrays["x/" + dtype]), tf.as_dtype(dtype))
    expected = tf.bitcast(tf.math.square(x), bits).numpy()
    for mode in ("eager", "function", "xla", "tf1"):
        _assert_same_numbers(arrays["%s/%s" % (mode, dtype)], expected, dtype, mode)
    for name, dy in (("grad", tf.cast(tf.range(tf.size(x)) % 5 - 2, x.dtype)), ("tf1_grad", tf.ones_like(x))):
        with tf.GradientTape() as tape:  # TensorFlow's own gradient of tf.math.square
            tape.watch(x)
            y = tf.math.square(x)
        want = tf.bitcast(tape.gradient(y, x, output_gradients=dy), bits).numpy()
        _assert_same_numbers(arrays["%s/%s" % (name, dtype)], want, dtype, name)
    assert report["node/" + dtype] == ["SquareCustom", "sq"]
    # under XLA (no XLA kernel of its own) the function put tf.math.square in the graph
    assert report["xla_ops/" + dtype] == ["Square"]


def test_the_function_is_made_from_the_record_and_refuses_other_dtypes(ran):
    _, report = ran
    assert report["ops"] == CHECKOUT_OPS + ["SquareCustom"]
    assert report["signature"] == "(x, name=None)"
    assert report["doc"] == "``tf.math.square`` of the inputs, element-wise, computed by the ``SquareCustom`` op."
    for dtype in ("int32", "bfloat16"):
        assert report[dtype] == ["DTypeError", "square_custom: dtype %s is not supported; supported dtypes: "
                                               "float32, float16 (cast with tf.cast)" % dtype]


def test_opcheck_passes_every_check_for_the_third_op_in_under_a_minute(ran):
    from tf_ge_custom.testing import CHECK_NAMES

    _, report = ran
    checked = report["opcheck"]
    assert [name for name, _, _ in checked] == list(CHECK_NAMES)
    failed = ["%s [%s]: %s" % (name, status, detail) for name, status, detail in checked
              if status not in ("passed", "not applicable")]
    assert not failed, "\n".join(failed)
    ran_checks = dict((name, status) for name, status, _ in checked if status == "passed")
    assert len(ran_checks) >= 10
    # no attribute: its one check does not apply; the kernel ran in the interpreter
    assert [name for name, status, _ in checked if status == "not applicable"] == ["attr_refusals"]
    assert "triton_interpreter" in ran_checks and "saved_model" in ran_checks
    assert report["opcheck_seconds"] < 60, report["opcheck_seconds"]


def test_doctor_and_the_npu_json_take_the_third_op(ran, third_op):
    _, target, _, _ = third_op
    _, report = ran
    assert report["package"] == str(target / "tf_ge_custom" / "__init__.py")  # the copy, not the checkout's
    status, detail = report["doctor"]
    assert status == "OK" and detail.endswith("registers %s" % ", ".join(CHECKOUT_OPS + ["SquareCustom"])), detail
    # what a build with the GE library installs (this one, without CANN, lists no op)
    assert report["json"]["SquareCustom"] == {"isGray": False, "isHeavy": False}
    header = (target / "tf_ge_custom" / "opp" / "op_graph" / "include" / "square_custom.h").read_text()
    assert "REG_OP(SquareCustom)" in header and ".OP_END_FACTORY_REG(SquareCustom)" in header
    assert ".INPUT(x, TensorType({DT_FLOAT, DT_FLOAT16}))" in header
    assert ".OUTPUT(y, TensorType({DT_FLOAT, DT_FLOAT16}))" in header


INTERP = r'''
import json, sys
import interp_support  # the interpreter's switch, before triton
import numpy as np
import torch
import triton
interp_support.require_pypi_triton(triton)
kernel_path, geometry_path, out_path = sys.argv[1:4]
kernel = interp_support.load_module(kernel_path, "square_kernel_source").square_kernel
import builtins
builtins.__TF_GE_CUSTOM_SETUP__ = True
geometry = interp_support.load_module(geometry_path, "kernel_geometry")
rng = np.random.RandomState(7)
out, launches = {}, 0
for dtype in ("float32", "float16"):
    # two blocks and a partial one, on 2 programs: each program loops
    x = (rng.standard_normal(2 * 4096 + 77) * 30).astype(dtype)
    x[:4] = [0.0, -0.0, np.inf, -1.5]
    xt = torch.from_numpy(x)
    y = torch.full_like(xt, float("nan"))
    for launch in geometry.plan_launches(xt.numel(), 4096, 2):
        part = slice(launch.offset, launch.offset + launch.count)
        kernel[(launch.grid,)](xt[part], y[part], launch.count, BLOCK_SIZE=4096)
        launches += 1
    out["x/" + dtype], out["y/" + dtype] = x, y.numpy()
np.savez(out_path, **out)
print(json.dumps({"launches": launches}))
'''


def test_the_kernel_file_runs_in_the_triton_interpreter_as_numpys_square(third_op, tmp_path):
    copy, _, _, _ = third_op
    interp = os.environ.get("TF_GE_CUSTOM_TRITON_INTERP") or os.path.join(ROOT, ".cache", "triton-interp")
    if not os.path.isdir(os.path.join(interp, "triton")):
        pytest.fail("PyPI triton for the interpreter is not installed at %s; run `make triton-interp` "
                    "(make test does)" % interp)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([interp, os.path.join(ROOT, "tests", "kernels")]))
    proc = subprocess.run([sys.executable, "-c", INTERP, str(copy / "kernels" / "square_kernel.py"),
                           str(copy / "kernels" / "geometry.py"), str(tmp_path / "out.npz")], env=env,
                          cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert json.loads(proc.stdout.splitlines()[-1])["launches"] >= 2
    arrays = np.load(str(tmp_path / "out.npz"))
    for dtype in ("float32", "float16"):
        x = arrays["x/" + dtype]
        np.testing.assert_array_equal(arrays["y/" + dtype], x * x)  # numpy's one multiply


# --- the builder's refusals, on the second op's record ---------------------------------------


def test_an_op_whose_kernel_source_is_missing_is_refused_before_any_work(tmp_path):
    # each op's kernels come from its own file (KernelSpec.source); a missing one is named
    leaky = op_def.LEAKY_RELU_CUSTOM
    other = leaky._replace(kernel=leaky.kernel._replace(source="no_such_kernel.py"))
    with pytest.raises(ValueError, match="cannot read the kernel source .*no_such_kernel.py of LeakyReluCustom"):
        builder.build_kernels(["Ascend910B1"], "all", str(tmp_path / "out"), ops=(op_def.ADD_CUSTOM, other))
    assert not (tmp_path / "out").exists()


def test_the_builders_progress_line_names_the_op_of_each_kernel_set():
    import io

    out = io.StringIO()
    builder.print_progress(builder.Progress(2, 7, "Ascend910B1", "float16", ("flat",), "TTIR, linalg, HIVM IR",
                                            None, 1.5, "LeakyReluCustom"), out)
    assert out.getvalue() == ("[2/7] Ascend910B1     LeakyReluCustom float16  1 variants (flat): TTIR, linalg, "
                              "HIVM IR; no npubins (1.50 s)\n")
