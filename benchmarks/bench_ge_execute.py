"""The NPU side's host cost: AddCustom's Execute path in the CANN-free GE core, per call.

Builds ``benchmarks/ge_bench/`` (the CMake target ``tf_ge_custom_bench_execute``, into
``build/ge-bench/``; an install never builds it) and runs it. The binary times what
``Execute`` does on the host after reading the tensors from GE (the dtype check, the
broadcast and kernel variant choice, the output allocation decision, the SoC and device, the
kernel lookup through the registry and the load-once cache, the launch plan, the packed host
arguments, the launch) against a recording runtime in place of ACL, and counts every heap
allocation with a replaced global ``operator new``. Scenarios
(``benchmarks/ge_bench/bench_execute.cc``): ``steady`` (float32 [8, 2048], one launch of the flat
kernel), ``steady_broadcast`` (float32 [8, 2048] + [2048]: a row variant, extents and strides
in the host arguments), ``steady_chunked`` (float16, 2^31 + 5 elements, three launches),
``steady_vector_cores_unknown`` and ``steady_core_counts_unknown`` (float32 [64, 8192] on a
device that reports no vector-core count: twice its AI cores, then the manifest's cap),
``adapter`` and ``adapter_broadcast`` (the same calls plus what ``ge_ops/cann/kernel_op.cc``
does around the core: tensors read into its per-thread lists, the call prepared in place),
``adapter_fresh_lists`` (the adapter before those lists: inputs and call built anew each
call) and ``reload_every_call`` (a fresh registry and cache per
call: the manifest of 44 kernels and the call's 32 KiB npubin read, hashed and loaded on
every call).

Then the sunk static path's host cost: ``DeclareLaunchArgs`` in the core
(``benchmarks/ge_bench/bench_declare.cc``, target ``tf_ge_custom_bench_declare``: the dtype check,
the call prepared in place, the kernel lookup, the launch plan and
the argument words, against a recording stand-in for GE's ``MallocWorkSpace``) for float32
[4096, 4096] (flat, 8 words), [4096, 4096] + [4096] (a row variant, 13 words) and one with a
workspace. GE calls it once per node while it builds the model and refreshes the declared
addresses itself afterwards: at run time the sunk path calls no code of this library.

Each scenario also counts the runtime's questions per call: about the device (its SoC, its
vector and AI cores, the ffts address: asked once per device and context, then kept) and
which device and context the calling thread is on (aclrtGetDevice, aclrtGetCurrentContext:
every call, since a thread may switch devices between calls).

Goals: ``steady`` under 1 us per call, and 0 allocations and 0 device queries per call once
the first call has been made (every ``steady*`` and ``adapter`` scenario but
``adapter_fresh_lists``); 0 allocations per declaration after the first as well.

    python benchmarks/bench_ge_execute.py [--rounds 15] [--round-seconds 0.05] [--json out.json]
"""
import argparse
import json
import os
import platform
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD_DIR = os.path.join(ROOT, "build", "ge-bench")
TARGET = "tf_ge_custom_bench_execute"
# DeclareLaunchArgs, the sunk static path's whole host cost (benchmarks/ge_bench/bench_declare.cc)
DECLARE_TARGET = "tf_ge_custom_bench_declare"
# benchmarks/ge_bench/ added to a build of ge_ops/ (its targets land in the build's bench/)
OPTIONS = ("-DTF_GE_CUSTOM_WITH_CANN=OFF", "-DTF_GE_CUSTOM_TESTS_DIR=",
           "-DTF_GE_CUSTOM_BENCH_DIR=" + os.path.join(ROOT, "benchmarks", "ge_bench"))
GOAL_NS = 1000.0


def build(log=None):
    """Configure and build the benchmark as the tests build theirs; returns its path."""
    import builtins

    builtins.__TF_GE_CUSTOM_NO_TENSORFLOW__ = True  # the build step needs no TensorFlow
    from tf_ge_custom._build import ge_step

    ge_step.configure_and_build(ROOT, BUILD_DIR, (TARGET, DECLARE_TARGET),
                                jobs=max(1, min(2, os.cpu_count() or 1)),
                                options=OPTIONS, log=log or (lambda message: None))
    return os.path.join(BUILD_DIR, "bench", TARGET)


def declare_exe(exe):
    """The DeclareLaunchArgs benchmark built beside ``exe`` (by :func:`build`)."""
    return os.path.join(os.path.dirname(exe), DECLARE_TARGET)


def run(exe, rounds, round_seconds):
    """The binary's scenarios as dicts; raises RuntimeError when it fails or a self-check does."""
    proc = subprocess.run([exe, "--rounds", str(rounds), "--round-seconds", str(round_seconds)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=600)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not rows:
        raise RuntimeError("%s failed (exit %d):\n%s%s" % (exe, proc.returncode, proc.stdout, proc.stderr))
    return rows


def goals(rows):
    """(met, what was missed) for the steady and adapter scenarios."""
    missed = []
    for row in rows:
        if not row["scenario"].startswith(("steady", "adapter")) or \
                row["scenario"] == "adapter_fresh_lists":
            continue
        if row["scenario"] == "steady" and row["ns_per_call_median"] >= GOAL_NS:
            missed.append("%s: %.0f ns per call (goal < %.0f)" % (row["scenario"], row["ns_per_call_median"], GOAL_NS))
        if row["allocations_per_call"] != 0:
            missed.append("%s: %.3f allocations per call (goal 0)" % (row["scenario"], row["allocations_per_call"]))
        if row.get("device_queries_per_call", 0) != 0:
            missed.append("%s: %.3f device queries per call (goal 0: asked once per device and "
                          "context)" % (row["scenario"], row["device_queries_per_call"]))
    return not missed, missed


def declare_table(rows):
    lines = ["| scenario | argument words | block dim | ns per call (median) | min | allocations per call | "
             "allocations of the first call |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %d | %d | %.0f | %.0f | %.3f | %d |" % (
            r["scenario"], r["words"], r["block_dim"], r["ns_per_call_median"], r["ns_per_call_min"],
            r["allocations_per_call"], r["first_call_allocations"]))
    return "\n".join(lines)


def table(rows):
    lines = ["| scenario | dtype | elements | launches | ns per call (median) | min | "
             "allocations per call | bytes per call | allocations of the first call | "
             "device queries per call | of the first call | device/context queries per call |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %s | %d | %d | %.0f | %.0f | %.3f | %.0f | %d | %.3f | %d | %.3f |" % (
            r["scenario"], r["dtype"], r["elements"], r["launches_per_call"], r["ns_per_call_median"],
            r["ns_per_call_min"], r["allocations_per_call"], r["bytes_per_call"], r["first_call_allocations"],
            r["device_queries_per_call"], r["first_call_device_queries"], r["identity_queries_per_call"]))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds per scenario (median reported)")
    parser.add_argument("--round-seconds", type=float, default=0.05, help="length of one round")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    exe = build()
    rows = run(exe, args.rounds, args.round_seconds)
    print("GE core Execute path | %s | %d CPUs | recording runtime in place of ACL | %d rounds"
          % (platform.processor() or platform.machine(), os.cpu_count(), args.rounds))
    print(table(rows))
    declared = run(declare_exe(exe), args.rounds, args.round_seconds)
    print("DeclareLaunchArgs (the sunk static path: once per node at model build, no host call at run time)")
    print(declare_table(declared))
    met, missed = goals(rows)
    missed += ["%s: %.3f allocations per call (goal 0)" % (r["scenario"], r["allocations_per_call"])
               for r in declared if r["allocations_per_call"] != 0]
    met = not missed
    print("goals %s" % ("met: steady < 1 us per call, 0 allocations and 0 device queries per call "
                        "after the first"
                        if met else "MISSED: " + "; ".join(missed)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "round_seconds": args.round_seconds, "goal_ns": GOAL_NS,
                       "goals_met": met, "scenarios": rows, "declare_scenarios": declared}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
