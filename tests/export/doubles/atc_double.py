"""A TEST DOUBLE standing in for CANN's `atc`, to test our process handling only.

It proves nothing about the real atc: it records how it was called, prints ATC-like lines,
and then, as TF_GE_CUSTOM_TEST_MODE says:
  ok        writes <--output>.om (a few bytes naming the model it was given) and exits 0
  suffixed  writes <--output>_linux_x86_64.om instead (atc's name with --host_env_os/cpu)
  fail      writes a truncated <--output>.om, prints an error, exits 3
  silent    says nothing for 1.5 s, then as ok
  hang      starts a grandchild `sleep`, writes both pids, then sleeps until killed
The record (JSON: argv, ASCEND_CUSTOM_OPP_PATH, pids) goes to $TF_GE_CUSTOM_TEST_RECORD.
"""
import json
import os
import subprocess
import sys
import time


def main(argv):
    mode = os.environ.get("TF_GE_CUSTOM_TEST_MODE", "ok")
    options = dict(a[2:].split("=", 1) for a in argv if a.startswith("--") and "=" in a)
    record = {"argv": argv, "mode": mode, "pid": os.getpid(), "cwd": os.getcwd(),
              "ASCEND_CUSTOM_OPP_PATH": os.environ.get("ASCEND_CUSTOM_OPP_PATH")}
    print("ATC start working now, please wait for a moment.", flush=True)
    if mode == "silent":
        time.sleep(1.5)
    if mode == "hang":
        child = subprocess.Popen(["sleep", "600"])
        record["grandchild"] = child.pid
    with open(os.environ["TF_GE_CUSTOM_TEST_RECORD"], "w") as f:
        json.dump(record, f)
    output = options["output"]
    if mode == "hang":
        print("compiling (double: hanging until killed)", flush=True)
        time.sleep(600)
        return 0
    print("model %s, framework %s, soc %s" % (options.get("model"), options.get("framework"),
                                              options.get("soc_version")), flush=True)
    if mode == "fail":
        with open(output + ".om", "wb") as f:
            f.write(b"PARTIAL")
        for i in range(60):
            print("log line %d" % i)
        print("E19999: the double failed on purpose", flush=True)
        return 3
    target = output + ("_linux_x86_64.om" if mode == "suffixed" else ".om")
    with open(target, "wb") as f:
        f.write(("om written by atc_double from %s\n" % options.get("model")).encode())
    print("ATC run success, welcome to the next use.", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
