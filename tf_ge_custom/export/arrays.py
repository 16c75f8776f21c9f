"""Arrays as the export moves them around: numpy dtypes by name, sample inputs, files.

bfloat16 has no numpy dtype of its own: it comes from ``ml_dtypes`` (which TensorFlow
depends on), and on disk between our own processes it travels as its uint16 bit pattern
with the dtype named beside it. numpy only, plus ``ml_dtypes`` when a bfloat16 appears.
"""
import json
import os

import numpy as np

from tf_ge_custom import _files as files
from tf_ge_custom.errors import ExportError

UNKNOWN_DIM_SIZE = 2  # what a generated input uses for an unknown dim


def numpy_dtype(name):
    """The numpy dtype called ``name`` (TensorFlow's spelling: float32, bfloat16, ...)."""
    if name == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:  # TF 1.15 ships its own bfloat16 type
            import tensorflow as tf
            return np.dtype(tf.bfloat16.as_numpy_dtype)
        return np.dtype(ml_dtypes.bfloat16)
    try:
        return np.dtype(name)
    except TypeError:
        raise ExportError("inputs of dtype %s are not supported here" % name)


def sample_inputs(inputs, seed=0, unknown_dim=UNKNOWN_DIM_SIZE):
    """Deterministic inputs for ``inputs`` (:class:`TensorInfo`), unknown dims set to ``unknown_dim``."""
    rng = np.random.RandomState(seed)
    values = {}
    for info in inputs:
        if info.shape is None:
            raise ExportError("input %s has unknown rank: pass its values (--inputs %s=FILE.npy)"
                              % (info.name, info.name))
        shape = tuple(unknown_dim if d is None else d for d in info.shape)
        dtype = numpy_dtype(info.dtype)
        if dtype.kind == "f" or info.dtype == "bfloat16":
            v = rng.standard_normal(shape).astype(np.float32) * 4
        elif dtype.kind in "iu":
            lo = 0 if dtype.kind == "u" else -100
            v = rng.randint(lo, 100, size=shape)
        elif dtype.kind == "b":
            v = rng.randint(0, 2, size=shape) > 0
        else:
            raise ExportError("cannot generate values for input %s of dtype %s: pass them "
                              "(--inputs %s=FILE.npy)" % (info.name, info.dtype, info.name))
        values[info.name] = np.asarray(v).astype(dtype)
    return values


_NPY_MAGIC = b"\x93NUMPY"
_NPY_HEADER_MAX = 1 << 16  # numpy writes a few hundred bytes; it reads 10000 by default


def npy_problem(path):
    """Why the .npy file ``path`` cannot be what its header says ("" when it can): read from the
    header and the file's size alone, before an array is allocated (a 24-byte file whose header
    claims 10^12 elements would otherwise ask for terabytes)."""
    import ast

    try:
        with open(path, "rb") as f:
            magic = f.read(8)
            if len(magic) < 8 or magic[:6] != _NPY_MAGIC:
                return "%s is not a .npy file (it does not start with numpy's magic bytes)" % path
            major = magic[6]
            if major not in (1, 2, 3):
                return "%s is a .npy file of format version %d.%d, which this numpy cannot read" % (
                    path, major, magic[7])
            width = 2 if major == 1 else 4
            length = int.from_bytes(f.read(width), "little")
            if length > _NPY_HEADER_MAX:
                return "%s: its .npy header claims %d bytes (damaged?)" % (path, length)
            text = f.read(length)
            offset = f.tell()
            size = os.fstat(f.fileno()).st_size
    except OSError as e:
        return "%s cannot be read: %s" % (path, e.strerror or e)
    try:
        header = ast.literal_eval(text.decode("utf-8" if major == 3 else "latin1"))
        dtype = np.lib.format.descr_to_dtype(header["descr"])
        shape = tuple(header["shape"])
        if not all(isinstance(d, int) and d >= 0 for d in shape) or not isinstance(header["fortran_order"], bool):
            raise ValueError(shape)
    except (ValueError, SyntaxError, TypeError, KeyError, MemoryError, RecursionError):
        return "%s: its .npy header is damaged (%d bytes that do not describe an array)" % (path, len(text))
    if dtype.hasobject:
        return "%s holds Python objects (pickled), which are never loaded; save a numeric array" % path
    elements = 1
    for d in shape:
        elements *= d
    want = elements * dtype.itemsize
    if size - offset != want:
        return ("%s: its .npy header says shape %s of %s, %d bytes of data, but the file holds %d (truncated "
                "or damaged)" % (path, list(shape), dtype, want, size - offset))
    return ""


def read_npy(path):
    """The array in the .npy file ``path``, checked against its own header first
    (:func:`npy_problem`); ExportError naming the file and what is wrong."""
    problem = files_problem(path)
    if problem:
        raise ExportError("cannot read input file: %s" % problem)
    problem = npy_problem(path)
    if problem:
        raise ExportError("input file " + problem)
    try:
        return np.load(path, allow_pickle=False)
    except (IOError, OSError, ValueError, EOFError) as e:
        raise ExportError("cannot read input file %s: %s" % (path, str(e)[:300]))


def files_problem(path):
    """Why ``path`` is not a regular file to read ("" when it is): a FIFO would block np.load,
    a folder confuse it."""
    try:
        files.regular_file_size(path)
    except files.FileProblem as e:
        return str(e)
    return ""


def _fits(shape, recorded):
    return recorded is None or (len(shape) == len(recorded) and all(
        r is None or r == s for s, r in zip(shape, recorded)))


def load_inputs(inputs, specs):
    """Read ``specs`` (``["x.npy", ...]`` in input order, or ``["name=x.npy", ...]``)."""
    by_name = {t.name: t for t in inputs}
    named = {}
    for i, spec in enumerate(specs):
        name, sep, path = spec.partition("=")
        if not sep:
            if i >= len(inputs):
                raise ExportError("%d input files given, but the graph has %d inputs (%s)"
                                  % (len(specs), len(inputs), ", ".join(by_name)))
            name, path = inputs[i].name, spec
        if name not in by_name:
            raise ExportError("input file %s is for %s, which is not an input; the inputs are: %s"
                              % (path, name, ", ".join(by_name)))
        value = read_npy(path)
        info = by_name[name]
        if value.dtype != numpy_dtype(info.dtype):
            raise ExportError("input file %s holds %s, but input %s is %s" % (path, value.dtype, name, info.dtype))
        if not _fits(value.shape, info.shape):
            raise ExportError("input file %s has shape %s, but input %s is %s"
                              % (path, list(value.shape), name, info.shape_text()))
        named[name] = value
    missing = [t.name for t in inputs if t.name not in named]
    if missing:
        raise ExportError("no input file for %s (give one per input: --inputs x.npy,y.npy or "
                          "name=FILE.npy)" % ", ".join(missing))
    return named


def save_arrays(directory, arrays):
    """Write ``[(name, array)]`` as ``directory/<i>.npy`` plus ``arrays.json`` (names, dtypes)."""
    os.makedirs(directory, exist_ok=True)
    index = []
    for i, (name, value) in enumerate(arrays):
        value = np.asarray(value)
        dtype = "bfloat16" if value.dtype.name == "bfloat16" else value.dtype.name
        np.save(os.path.join(directory, "%d.npy" % i),
                value.view(np.uint16) if dtype == "bfloat16" else value, allow_pickle=False)
        index.append({"name": name, "dtype": dtype})
    with open(os.path.join(directory, "arrays.json"), "w") as f:
        json.dump(index, f)


def load_arrays(directory):
    """``[(name, array)]`` written by :func:`save_arrays`."""
    with open(os.path.join(directory, "arrays.json")) as f:
        index = json.load(f)
    out = []
    for i, item in enumerate(index):
        value = np.load(os.path.join(directory, "%d.npy" % i), allow_pickle=False)
        if item["dtype"] == "bfloat16":
            value = value.view(numpy_dtype("bfloat16"))
        out.append((item["name"], value))
    return out
