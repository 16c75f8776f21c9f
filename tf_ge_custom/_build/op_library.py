"""Build step: compile ``tf_ops/`` into the TensorFlow op library (and its XLA kernel).

The registrations are generated from ``op_def.py`` first (``tf_codegen.py``), one header per
op, and the registration and kernel class of an op whose ``tf_ops/`` is its functor alone. The
sources of an op are ``tf_ops/<python name>_ops.cc``, ``_kernels.cc`` and ``_xla.cc``: those of
an op ``op_def.OPS`` does not hold are not compiled; any other ``tf_ops/*.cc`` always is. The op
library goes to ``tf_ge_custom/_lib/`` (never under ``opp/framework/``, where GE would
dlopen it), and ``build_info["tensorflow"]`` records the TensorFlow it was built against so
that the package refuses a mismatched binary instead of crashing, and each library's size and
SHA-256 so that it refuses a damaged one.

``tf_ops/*_xla.cc`` become a second, optional library: the XLA kernels need tf2xla headers
and symbols that only some TensorFlow wheels ship (docs/tensorflow-op.md). When they are
missing, or that build fails, or ``TF_GE_CUSTOM_XLA=0`` is set (it saves about half of this
step's compile time, for hosts that never compile with XLA), the package still installs;
``build_info`` says why there is no XLA library, and each op lowers to its TensorFlow
equivalent inside XLA clusters instead (``add_custom`` to ``tf.math.add``).
"""
import contextlib
import glob
import hashlib
import os
import shlex
import shutil
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

from . import BuildError, object_cache, run_command, tensorflow_info, tf_codegen
from .. import _atomic_files as atomic_files, _files as files, op_def

LIBRARY_DIR = "_lib"
LIBRARY_NAME = "libtf_ge_custom_ops.so"
XLA_LIBRARY_NAME = "libtf_ge_custom_xla.so"
XLA_SUFFIX = "_xla.cc"

# Where a TensorFlow wheel keeps the symbols the XLA kernel links against: TF >= 2.x with a
# separate C++ library, else the Python extension itself (TF 2.6). Both are already loaded
# when ``import tensorflow`` ran, so linking against them adds no file to load.
_XLA_SYMBOL_LIBRARIES = ("libtensorflow_cc.so.2", os.path.join("python", "_pywrap_tensorflow_internal.so"))
# Headers that the tf2xla/xla headers include but the wheel ships in bazel's external/ tree.
_XLA_EXTRA_INCLUDES = (os.path.join("external", "highwayhash"),
                       os.path.join("external", "farmhash_archive", "src"))


_OP_SOURCE_SUFFIXES = ("_ops.cc", "_kernels.cc", XLA_SUFFIX)


def sources_of_ops(tf_ops, ops=None):
    """The ``tf_ops/*.cc`` this build compiles, sorted: each source of an op of ``ops``
    (``op_def.OPS``), and every source that is no op's; an op's source is
    ``<python name>_ops.cc``, ``_kernels.cc`` or ``_xla.cc``, and those of an op ``ops`` does
    not hold are left out (their op's registration header is not generated)."""
    names = set(op.python_name for op in (op_def.OPS if ops is None else ops))
    kept = []
    for path in sorted(glob.glob(os.path.join(tf_ops, "*.cc"))):
        base = os.path.basename(path)
        owner = next((base[:-len(s)] for s in _OP_SOURCE_SUFFIXES if base.endswith(s)), None)
        if owner is None or owner in names:
            kept.append(path)
    return kept


def _compiler():
    return shlex.split(os.environ.get("CXX", "g++"))


def _compile_flags(tf, generated):
    flags = list(tf["compile_flags"])
    if not any(f.startswith(("-std=", "--std=")) for f in flags):
        flags.append("-std=c++14")  # TF 1.15 reports no standard; its headers need C++11+
    return ["-O3", "-DNDEBUG", "-fPIC", "-Wall", "-Wno-deprecated-declarations",
            "-Wno-unused-result", "-I" + generated] + flags


def tensorflow_record(include):
    """A digest of TensorFlow's headers as its installation recorded them: the lines of the
    ``RECORD`` of the distribution that installed the header folder ``include``
    (``<site>/tensorflow/include``; ``<site>/tensorflow_core/include`` for 1.15) that name a
    file under it, each with its sha256. None where no record names it (a TensorFlow built
    from source, another installer). Only the headers' lines count: the rest of a RECORD
    differs between two installs of the same wheel (compiled ``.pyc`` files, scripts that
    name their interpreter), and the headers are what a compile reads."""
    include = os.path.abspath(include)
    site = os.path.dirname(os.path.dirname(include))
    prefix = os.path.relpath(include, site).replace(os.sep, "/") + "/"
    try:
        infos = sorted(n for n in os.listdir(site) if n.endswith(".dist-info"))
    except OSError:
        return None
    # the distributions named for TensorFlow first (tensorflow, tensorflow_cpu, intel_tensorflow)
    infos.sort(key=lambda n: "tensorflow" not in n.lower())
    for info in infos:
        try:
            with open(os.path.join(site, info, "RECORD"), "rb") as f:
                lines = [l for l in f.read().decode("utf-8", "replace").splitlines()
                         if l.startswith(prefix)]
        except (IOError, OSError):
            continue
        if lines:
            return hashlib.sha256("\n".join(sorted(lines)).encode("utf-8")).hexdigest()
    return None


def _compiler_identity(cxx, tf):
    """What, beside the command and the sources, decides an object's bytes (the object
    cache's key): the compiler's version text and program, and the TensorFlow it builds for
    (by its installation record where it has one: ``places`` then names its header folder,
    so that the same TensorFlow in another environment shares the objects). Returns
    (identity, places)."""
    try:
        version = run_command(cxx + ["--version"], lambda message: None).strip()
    except BuildError:
        version = None  # no compiler: the compile itself reports it
    program = shutil.which(cxx[0])
    record = tensorflow_record(tf["include"])
    identity = {"compiler": version, "program": os.path.realpath(program) if program else cxx[0],
                "tensorflow": [tf["version"], {"record": record} if record else tf["include"],
                               tf.get("cxx11_abi")]}
    return identity, ({tf["include"]: "tensorflow include"} if record else {})


def starting_line(units, cached, cache_dir, jobs):
    """The line before the compiles: how many units, how many the object cache has, how many
    will be compiled now and with how many jobs (worded as starting: nothing is compiled yet)."""
    compiling = units - cached
    return ("op library: %d translation unit%s, %d from the object cache (%s); %s" % (
        units, "" if units == 1 else "s", cached, cache_dir or "off",
        "compiling %d with %d job%s..." % (compiling, min(jobs, compiling), "" if min(jobs, compiling) == 1 else "s")
        if compiling else "nothing to compile"))


class _Compiling(object):
    """The compile step's lines: the units it starts and finishes, and, on every silence
    (tf_ge_custom/_heartbeat.py), ``still compiling add_custom_ops.cc, add_custom_xla.cc (35 s)``."""

    def __init__(self, beat):
        self.beat = beat
        self.running = []
        self.announced = threading.Event()  # the compiles start after the line announcing them

    def announce(self, line):
        self.beat.say(line)
        self.announced.set()

    def _doing(self):
        self.beat.doing("compiling %s" % ", ".join(self.running) if self.running
                        else "compiling and linking the op library")

    def started(self, name):
        self.announced.wait()
        self.running.append(name)
        self._doing()

    def finished(self, name):
        self.running.remove(name)
        self._doing()

    def say(self, line):
        self.beat.say(line)


@contextlib.contextmanager
def compiling(ctx):
    from .. import _heartbeat

    with _heartbeat.Heartbeat(ctx.log, "compiling and linking the op library") as beat:
        state = _Compiling(beat)
        try:
            yield state
        finally:
            state.announced.set()  # never leave a compile waiting


def _compile(pool, cxx, cflags, src, obj_dir, ctx, header_folders, identity, beat):
    """Start compiling ``src`` in ``pool`` (or taking its object from the object cache);
    ``identity``: (identity, places) of :func:`_compiler_identity`; the future's result is the
    object file."""
    os.makedirs(obj_dir, exist_ok=True)
    obj = os.path.join(obj_dir, os.path.basename(src) + ".o")
    key = object_cache.object_key(cxx + cflags, src, header_folders, identity[0], places=identity[1])
    if ctx.object_cache.fetch(key, obj):
        done = Future()
        done.set_result(obj)
        return done
    name = os.path.basename(src)

    def compile_it():
        started = time.time()
        beat.started(name)
        try:
            run_command(cxx + cflags + ["-c", src, "-o", obj], ctx.log, ctx.verbose)
        finally:
            beat.finished(name)
        ctx.object_cache.store(key, obj)
        beat.say("compiled %s (%.0f s)" % (name, time.time() - started))
        return obj

    return pool.submit(compile_it)


def _link(cxx, objects, link_flags, out, ctx, identity):
    """Link ``objects`` into ``out`` (or take the library from the object cache); returns
    whether it was linked here."""
    key = object_cache.link_key(cxx + ["-shared"] + link_flags, objects, identity)
    if ctx.object_cache.fetch(key, out, ".so"):
        return False
    with atomic_files.replacing(out) as tmp:  # a failed link leaves no half-written library
        run_command(cxx + ["-shared", "-o", tmp] + objects + link_flags, ctx.log, ctx.verbose)
    ctx.object_cache.store(key, out, ".so")
    return True


def _xla_setup(tf, sources):
    """(extra compile flags, library with the XLA symbols), or (None, reason there is none)."""
    if not sources:
        return None, "no %s sources" % XLA_SUFFIX
    if os.environ.get("TF_GE_CUSTOM_XLA") == "0":
        return None, "TF_GE_CUSTOM_XLA=0 was set for the build"
    include = tf["include"]
    if not os.path.isfile(os.path.join(include, "tensorflow", "compiler", "tf2xla",
                                       "xla_op_kernel.h")):
        return None, "TensorFlow %s ships no tf2xla headers" % tf["version"]
    symbols = [os.path.join(tf["lib"], name) for name in _XLA_SYMBOL_LIBRARIES]
    symbols = [path for path in symbols if os.path.isfile(path)]
    if not symbols:
        return None, "TensorFlow %s ships none of %s" % (tf["version"],
                                                         ", ".join(_XLA_SYMBOL_LIBRARIES))
    extra = ["-I" + os.path.join(include, d) for d in _XLA_EXTRA_INCLUDES
             if os.path.isdir(os.path.join(include, d))]
    return extra, symbols[0]


def run(ctx):
    from .. import _heartbeat

    with _heartbeat.Heartbeat(ctx.log, "asking TensorFlow for its compile and link flags"):
        tf = tensorflow_info.query(cache_dir=ctx.object_cache.directory)
    ctx.log("building the TensorFlow op library against TensorFlow %s" % tf["version"])
    tf_ops = os.path.join(ctx.source_root, "tf_ops")
    generated = os.path.join(ctx.build_temp, "tf_ops_generated")
    tf_codegen.write(generated)
    try:
        made = tf_codegen.write_generated_sources(generated, tf_ops)
    except tf_codegen.CodegenError as e:
        raise BuildError(str(e))
    sources = sources_of_ops(tf_ops) + made
    op_sources = [s for s in sources if not s.endswith(XLA_SUFFIX)]
    xla_sources = [s for s in sources if s.endswith(XLA_SUFFIX)]
    if not op_sources:
        raise BuildError("no sources under %s" % tf_ops)
    cxx = _compiler()
    cflags = _compile_flags(tf, generated)
    xla_flags, xla_symbols = _xla_setup(tf, xla_sources)

    out_dir = os.path.join(ctx.package_dir, LIBRARY_DIR)
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, LIBRARY_NAME)
    xla_out = os.path.join(out_dir, XLA_LIBRARY_NAME)
    if os.path.exists(xla_out):
        os.remove(xla_out)  # never ship an XLA library of another build
    header_folders = [tf_ops, generated]
    identity = _compiler_identity(cxx, tf)
    units = len(op_sources) + (len(xla_sources) if xla_flags is not None else 0)
    jobs = max(1, min(ctx.jobs, units))
    # One pool for both libraries, the XLA source first: it parses for about as long as the
    # kernels compile, so on two cores they finish together.
    with ThreadPoolExecutor(max_workers=jobs) as pool, compiling(ctx) as beat:
        xla_jobs = [] if xla_flags is None else [
            _compile(pool, cxx, cflags + xla_flags, src, os.path.join(ctx.build_temp, "tf_ops_xla"),
                     ctx, header_folders, identity, beat) for src in xla_sources]
        # a generated source includes its op's functor from tf_ops/
        op_jobs = [_compile(pool, cxx, cflags + (["-I" + tf_ops] if src in made else []), src,
                            os.path.join(ctx.build_temp, "tf_ops"), ctx, header_folders, identity, beat)
                   for src in op_sources]
        cached = ctx.object_cache.hits
        beat.announce(starting_line(units, cached, ctx.object_cache.directory, jobs))
        # a library's key keeps TensorFlow's paths (its link flags name its library folder)
        linked = _link(cxx, [job.result() for job in op_jobs], list(tf["link_flags"]), out, ctx,
                       identity[0])
        beat.say("op library: %s (%s)" % (out, "linked" if linked else "from the object cache"))
        why_not = None if xla_flags is not None else xla_symbols
        if xla_flags is not None:
            try:
                # -z defs: every symbol must resolve now, against TensorFlow's libraries,
                # rather than fail when the package is imported
                xla_linked = _link(cxx, [job.result() for job in xla_jobs],
                                   list(tf["link_flags"]) + [xla_symbols, "-Wl,-z,defs"], xla_out,
                                   ctx, identity[0])
            except BuildError as e:
                why_not = "its build failed: %s" % " ".join(str(e).split())[:800]
    if why_not:
        ctx.log("no XLA kernel library (under XLA each op lowers to its TensorFlow equivalent, "
                "add_custom to tf.math.add): %s" % why_not)
    else:
        ctx.log("XLA kernel library: %s (%s)" % (xla_out, "linked" if xla_linked else
                                                 "from the object cache"))
    ctx.object_cache.trim()
    ctx.build_info["tensorflow"] = {
        "version": tf["version"],
        "cxx11_abi": tf["cxx11_abi"],
        "python": tf["python"],
        "library": LIBRARY_DIR + "/" + LIBRARY_NAME,
        # import tf_ge_custom checks these before loading: a damaged library is refused,
        # not mapped (a truncated one kills the process with SIGBUS)
        "library_size": os.path.getsize(out),
        "library_sha256": files.sha256_file(out),
        "xla_library": None if why_not else LIBRARY_DIR + "/" + XLA_LIBRARY_NAME,
        "xla_library_missing_because": why_not,
        "xla_library_size": None if why_not else os.path.getsize(xla_out),
        "xla_library_sha256": None if why_not else files.sha256_file(xla_out),
        # the ops the XLA library has a kernel for (tf_ops/<python name>_xla.cc); under XLA
        # the others lower to their TensorFlow equivalent (_xla.py)
        "xla_ops": [] if why_not else [
            op.type_name for op in op_def.OPS
            if os.path.join(tf_ops, op.python_name + XLA_SUFFIX) in xla_sources],
    }
