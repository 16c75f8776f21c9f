"""What ``import tf_ge_custom`` adds to the import time of TensorFlow itself.

Fresh interpreters, interleaved: ``import tensorflow`` alone against
``import tensorflow; import tf_ge_custom``; plus, inside each second process, the time of the
``import tf_ge_custom`` statement alone (TensorFlow already imported). Medians over --runs.

    python benchmarks/bench_import.py [--runs 10] [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

CODE = r"""
import json, time
t0 = time.perf_counter()
import tensorflow
t1 = time.perf_counter()
%s
t2 = time.perf_counter()
print("IMPORT_TIMES " + json.dumps([t1 - t0, t2 - t1]))
"""


def _run(with_package):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, "-c", CODE % ("import tf_ge_custom" if with_package else "")],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True,
                          env=env, cwd=os.path.expanduser("~"), check=True)
    line = [l for l in proc.stdout.splitlines() if l.startswith("IMPORT_TIMES ")][-1]
    return json.loads(line.split(" ", 1)[1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    tf_alone, tf_with, ours = [], [], []
    for _ in range(args.runs):
        tf_alone.append(_run(False)[0])
        t_tf, t_ours = _run(True)
        tf_with.append(t_tf + t_ours)
        ours.append(t_ours)
    med = statistics.median
    print("import tensorflow                      median %.3f s" % med(tf_alone))
    print("import tensorflow; import tf_ge_custom median %.3f s" % med(tf_with))
    print("import tf_ge_custom (after TF)         median %.1f ms (min %.1f, max %.1f), "
          "%.1f%% of TensorFlow's import" % (med(ours) * 1e3, min(ours) * 1e3, max(ours) * 1e3,
                                            100 * med(ours) / med(tf_alone)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": args.runs, "import_tensorflow": tf_alone,
                       "import_tensorflow_and_package": tf_with, "import_package_after_tensorflow": ours},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
