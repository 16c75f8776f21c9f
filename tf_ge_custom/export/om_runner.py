"""``run_om()``: run an OM once through ACL and compare it with TensorFlow on the CPU.

The runner is ``tf_ge_custom_om_runner`` (``ge_ops/export/om_runner.cc``), a small C++
program on the public ACL API, built with the package when a CANN toolkit is present. We
chose it over CANN's Python ``acl`` module because it is what a deployment runs (an OM loaded
by ACL with no Python at all), it is compile-checked here against the public ACL headers, and
it does not tie this package to the Python version a CANN release ships ``acl`` for.

It runs with ``ASCEND_CUSTOM_OPP_PATH`` removed, as GE's offline sample does, so a passing
run shows that the OM itself carries the kernels of the package's ops. Inputs come from ``.npy``
files (checked against ``PREFIX.json`` beside the OM when it is there), outputs are written
as ``.npy``, and the source model (``compare_with``, default: the model the record names)
runs on the CPU on the same inputs; the result is the max error per output and a
``RUN_OM=PASS`` / ``RUN_OM=FAIL`` line.
"""
import json
import os
import re
import sys
import tempfile
from typing import List, NamedTuple, Optional

import numpy as np

from tf_ge_custom import _atomic_files as atomic_files, _given_folders as given_folders, \
    _owned_folders as owned_folders
from tf_ge_custom.errors import ExportError, ExternalToolError
from tf_ge_custom.export import arrays
from tf_ge_custom.export.cann_tools import toolchain
from tf_ge_custom.export.checking.compare import compare
from tf_ge_custom.export.graph_record import GraphRecord
from tf_ge_custom.export.cann_tools.process import run_tool


class RunnerTensor(NamedTuple):
    index: int
    name: str
    dtype: str
    dims: tuple
    size: int
    file: str = ""


class RunOmResult(NamedTuple):
    outputs: List[tuple]  # [(name, array)] in the OM's output order
    files: List[str]  # the .npy files written
    comparisons: list  # compare.Comparison per output ([] when nothing was compared)
    status: str  # "PASS", "FAIL" or "UNCHECKED"
    compared_with: Optional[str]


def om_runner_command(runner, om, input_files, output_dir, device=0, dynamic_batch=None):
    cmd = [runner, "--model", om, "--output-dir", output_dir, "--device", str(device)]
    if dynamic_batch:
        cmd += ["--dynamic-batch", str(dynamic_batch)]
    for path in input_files:
        cmd += ["--input", path]
    return cmd


def _count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


# The fields of the runner's "input" and "output" lines (ge_ops/export/om_runner.cc): what each
# must be, as a check and as words for the message that refuses it.
_FIELDS = (
    ("index", _count, "a whole number >= 0"),
    ("name", lambda v: isinstance(v, str), "a string"),
    ("dtype", lambda v: isinstance(v, str) and bool(v), "a dtype name such as \"float32\""),
    ("dims", lambda v: isinstance(v, list) and all(_count(d) for d in v), "a list of whole numbers >= 0"),
    ("size", _count, "a whole number of bytes >= 0"),
)
_OUTPUT_FIELDS = _FIELDS + (("file", lambda v: isinstance(v, str) and bool(v), "the path of a file"),)


def _tensor(event, kind, where):
    for name, ok, wanted in _OUTPUT_FIELDS if kind == "output" else _FIELDS:
        if name not in event:
            raise ExternalToolError("%s: the runner's %s line has no \"%s\" (%s)" % (where, kind, name, wanted))
        if not ok(event[name]):
            raise ExternalToolError("%s: the runner's %s line has \"%s\": %s, not %s" % (
                where, kind, name, json.dumps(event[name])[:80], wanted))
    return RunnerTensor(event["index"], event["name"], event["dtype"], tuple(event["dims"]), event["size"],
                        event.get("file", ""))


def parse_runner_output(lines, source="the OM runner's output"):
    """``(inputs, outputs)`` (:class:`RunnerTensor` lists) from the runner's JSON lines; a line
    with a field missing or of the wrong type raises :class:`ExternalToolError` naming
    ``source`` (its log), the line and the field."""
    inputs, outputs, done = [], [], False
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue  # not one of the runner's lines (ACL's own log can hold braces)
        if not isinstance(event, dict):
            continue
        kind = event.get("event")
        if kind in ("input", "output"):
            tensor = _tensor(event, kind, "%s, line %d" % (source, number))
            (inputs if kind == "input" else outputs).append(tensor)
        elif kind == "done":
            done = True
    if not done:
        raise ExternalToolError("the OM runner exited with status 0 without reporting its outputs (%s has no "
                                "\"done\" line)" % source)
    return inputs, outputs


def output_array(tensor):
    """The array in ``tensor.file`` with the runner's dtype and dims (its size checked against
    them before it is read)."""
    what = "output %d (%s)" % (tensor.index, tensor.name)
    if tensor.dtype == "unsupported":
        raise ExternalToolError("%s has a dtype the runner cannot name" % what)
    try:
        dtype = arrays.numpy_dtype(tensor.dtype).newbyteorder("<")
    except ExportError:
        raise ExternalToolError("%s: the runner reported dtype %r, which numpy does not know"
                                % (what, tensor.dtype[:40]))
    elements = 1
    for d in tensor.dims:
        elements *= d
    try:
        size = os.stat(tensor.file).st_size
    except OSError as e:
        raise ExternalToolError("%s: cannot read the runner's file %s: %s" % (what, tensor.file, e.strerror or e))
    if size != elements * dtype.itemsize or tensor.size != size:
        raise ExternalToolError("%s: the runner's file %s has %d bytes, but dims %s of %s need %d (and the runner "
                                "said %d)" % (what, tensor.file, size, list(tensor.dims), tensor.dtype,
                                              elements * dtype.itemsize, tensor.size))
    with open(tensor.file, "rb") as f:
        data = f.read()
    value = np.frombuffer(data, dtype=dtype)
    return value.reshape(tensor.dims).astype(arrays.numpy_dtype(tensor.dtype))


OUTPUT_FOLDER_KIND = "run-om"  # its made-record in an output folder it made: .tf-ge-custom-run-om


def _record_beside(om):
    path = om[: -len(".om")] + ".json" if om.endswith(".om") else om + ".json"
    return GraphRecord.load(path) if os.path.isfile(path) else None


def _inputs(specs, record):
    if record is not None:
        feeds = arrays.load_inputs(record.inputs, specs)
        return [(t.name, feeds[t.name]) for t in record.inputs]
    values = []
    for i, spec in enumerate(specs):
        name, sep, path = spec.partition("=")
        name, path = (name, path) if sep else ("input_%d" % i, spec)
        values.append((name, arrays.read_npy(path)))
    return values


def _safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "output"


def run_om(om, inputs, output_dir=None, compare_with=None, device=0, dynamic_batch=None,
           signature=None, tags=None, outputs=None, checkpoint=None, rtol=None, atol=None,
           out=None, env=None):
    """Run the OM ``om`` on ``inputs`` (``.npy`` paths, in input order or ``name=FILE``).

    Writes ``<output_dir>/<output name>.npy`` (default: ``<om without .om>.outputs/``) and the
    runner's log ``run-om.log`` there (a new or empty folder, or one run-om made: any other is
    refused before anything runs); compares with ``compare_with`` (a model path, default
    the source named in the record beside the OM) run by TensorFlow on the CPU.
    Returns a :class:`RunOmResult`.
    """
    from tf_ge_custom.export import options

    options.check_run_om(device=device, dynamic_batch=dynamic_batch, rtol=rtol, atol=atol)
    out = out or sys.stdout
    env = dict(os.environ if env is None else env)
    runner = toolchain.require_built_tool(toolchain.find_om_runner(env), "OM runner",
                                          toolchain.OM_RUNNER_ENV)
    toolchain.require_cann_environment("OM runner", env)
    if not os.path.isfile(om):
        raise ExportError("OM not found: %s" % om)
    om = os.path.abspath(om)
    output_dir = os.path.abspath(output_dir or (om[: -len(".om")] if om.endswith(".om") else om) + ".outputs")
    given_folders.refuse(output_dir, "--output-dir", "run-om", OUTPUT_FOLDER_KIND)
    record = _record_beside(om)
    values = _inputs(inputs or [], record)
    given_folders.take(output_dir, "--output-dir", "run-om", OUTPUT_FOLDER_KIND)
    owned = owned_folders.make(tempfile.gettempdir(), "tf-ge-custom-run-om-")
    work = owned.path
    try:
        files = []
        for i, (_, value) in enumerate(values):
            path = os.path.join(work, "input_%d.bin" % i)
            np.ascontiguousarray(value).astype(value.dtype.newbyteorder("<"), copy=False).tofile(path)
            files.append(path)
        raw = os.path.join(work, "raw")
        os.makedirs(raw)
        log = os.path.join(output_dir, "run-om.log")
        out.write("running %s with ASCEND_CUSTOM_OPP_PATH cleared (the OM must carry the kernel)\n" % om)
        run_tool(om_runner_command(runner, om, files, raw, device, dynamic_batch), log, "om-runner",
                 env=toolchain.runner_environment(env),
                 # recorded before the runner starts: a run killed outright left only what it made
                 on_log=lambda path: given_folders.record(output_dir, OUTPUT_FOLDER_KIND,
                                                          growing=[os.path.basename(path)]))
        with open(log, errors="replace") as f:
            _, tensors = parse_runner_output(f, log)
        names = [t.key or t.name for t in record.outputs] if record is not None and \
            len(record.outputs) == len(tensors) else [t.name or "output_%d" % t.index for t in tensors]
        results, written = [], []
        for name, tensor in zip(names, tensors):
            value = output_array(tensor)
            path = os.path.join(output_dir, _safe(name) + ".npy")
            with atomic_files.replacing(path) as tmp:
                np.save(tmp, value, allow_pickle=False)
            results.append((name, value))
            written.append(path)
    finally:
        owned.close()
        given_folders.record(output_dir, OUTPUT_FOLDER_KIND)  # what this run made there
    out.write("wrote %d outputs to %s\n" % (len(written), output_dir))
    return _compare(results, written, values, record, compare_with, signature, tags, outputs,
                    checkpoint, rtol, atol, out)


def _compare(results, written, values, record, compare_with, signature, tags, outputs, checkpoint,
             rtol, atol, out):
    options = {}
    if compare_with is None and record is not None and record.source_path and os.path.exists(record.source_path):
        compare_with = record.source_path
        options = dict(record.source_options)
        options.pop("inputs", None)
    else:
        options = {k: v for k, v in (("signature", signature), ("tags", tags), ("outputs", outputs),
                                     ("checkpoint", checkpoint)) if v}
    if compare_with is None:
        out.write("RUN_OM=UNCHECKED (nothing to compare with: pass --compare-with MODEL)\n")
        return RunOmResult(results, written, [], "UNCHECKED", None)
    from tf_ge_custom import _tensorflow
    from tf_ge_custom.export.freezing import freeze

    _tensorflow.require()
    with freeze(compare_with, **options) as frozen:
        feeds = dict(values)
        if record is None and len(values) == len(frozen.record.inputs):  # positional inputs
            feeds = {t.name: v for t, (_, v) in zip(frozen.record.inputs, values)}
        missing = [t.name for t in frozen.record.inputs if t.name not in feeds]
        if missing or len(values) != len(frozen.record.inputs):
            raise ExportError("%s has inputs %s, but the OM was given %s" % (
                compare_with, ", ".join(t.name for t in frozen.record.inputs), ", ".join(n for n, _ in values)))
        want = frozen.reference_outputs(feeds)
    if len(want) != len(results):
        raise ExportError("%s has %d outputs, the OM %d" % (compare_with, len(want), len(results)))
    comparisons = [compare(name, got, ref, rtol, atol) for (name, got), ref in zip(results, want)]
    out.write("max |OM - TensorFlow on the CPU| (%s):\n" % compare_with)
    for c in comparisons:
        out.write(c.line() + "\n")
    status = "PASS" if all(c.ok for c in comparisons) else "FAIL"
    out.write("RUN_OM=%s\n" % status)
    return RunOmResult(results, written, comparisons, status, compare_with)
