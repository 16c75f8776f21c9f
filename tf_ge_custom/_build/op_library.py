"""Build step: compile ``tf_ops/*.cc`` into the TensorFlow op library.

The library goes to ``tf_ge_custom/_lib/`` (never under ``opp/framework/``, where GE would
dlopen it), and ``build_info["tensorflow"]`` records the TensorFlow it was built against so
that the package refuses a mismatched binary instead of crashing, and the library's size and
SHA-256 so that it refuses a damaged one.
"""
import glob
import hashlib
import os
import shlex
from concurrent.futures import ThreadPoolExecutor

from . import BuildError, run_command, tensorflow_info

LIBRARY_DIR = "_lib"
LIBRARY_NAME = "libtf_ge_custom_ops.so"


def _compiler():
    return shlex.split(os.environ.get("CXX", "g++"))


def _compile_flags(tf):
    flags = list(tf["compile_flags"])
    if not any(f.startswith(("-std=", "--std=")) for f in flags):
        flags.append("-std=c++14")  # TF 1.15 reports no standard; its headers need C++11+
    return ["-O3", "-DNDEBUG", "-fPIC", "-Wall", "-Wno-deprecated-declarations",
            "-Wno-unused-result"] + flags


def run(ctx):
    tf = tensorflow_info.query()
    ctx.log("building the TensorFlow op library against TensorFlow %s" % tf["version"])
    sources = sorted(glob.glob(os.path.join(ctx.source_root, "tf_ops", "*.cc")))
    if not sources:
        raise BuildError("no sources under %s" % os.path.join(ctx.source_root, "tf_ops"))
    obj_dir = os.path.join(ctx.build_temp, "tf_ops")
    os.makedirs(obj_dir, exist_ok=True)
    cxx = _compiler()
    cflags = _compile_flags(tf)

    def compile_one(src):
        obj = os.path.join(obj_dir, os.path.basename(src) + ".o")
        run_command(cxx + cflags + ["-c", src, "-o", obj], ctx.log, ctx.verbose)
        return obj

    with ThreadPoolExecutor(max_workers=max(1, min(ctx.jobs, len(sources)))) as pool:
        objects = list(pool.map(compile_one, sources))

    out_dir = os.path.join(ctx.package_dir, LIBRARY_DIR)
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, LIBRARY_NAME)
    tmp = out + ".tmp"
    run_command(cxx + ["-shared", "-o", tmp] + objects + list(tf["link_flags"]), ctx.log, ctx.verbose)
    os.replace(tmp, out)  # a failed link never leaves a half-written library behind
    with open(out, "rb") as f:
        data = f.read()
    ctx.build_info["tensorflow"] = {
        "version": tf["version"],
        "cxx11_abi": tf["cxx11_abi"],
        "python": tf["python"],
        "library": LIBRARY_DIR + "/" + LIBRARY_NAME,
        # import tf_ge_custom checks these before loading: a damaged library is refused,
        # not mapped (a truncated one kills the process with SIGBUS)
        "library_size": len(data),
        "library_sha256": hashlib.sha256(data).hexdigest(),
    }
    ctx.log("op library: %s" % out)
