"""A TEST DOUBLE standing in for any program a command starts (atc, the AIR tool, the OM runner,
bishengir-compile, the builder's Python), to test our process handling only: it proves nothing
about the programs themselves.

  --version                        prints "bishengir-compile 1.2.0" (a version query), exits 0
  -c "...sys.version_info..."      prints "3 11" (a Python version query), exits 0
  TF_GE_CUSTOM_TEST_MODE=fail      prints an error line, exits 1
  otherwise                        starts a child in its own group (`sleep`), a grandchild that
                                   leaves for a session of its own (setsid), writes the three
                                   pids as JSON to $TF_GE_CUSTOM_TEST_HANG_RECORD (whole, by a
                                   rename), prints "hanging until killed", sleeps until killed
"""
import json
import os
import subprocess
import sys
import time

SESSION_CHILD = "import os, time\nos.setsid()\ntime.sleep(600)\n"


def main(argv):
    if "--version" in argv:
        print("bishengir-compile 1.2.0 (double)", flush=True)
        return 0
    if argv[:1] == ["-c"] and "sys.version_info" in argv[1]:
        print("3 11", flush=True)
        return 0
    if os.environ.get("TF_GE_CUSTOM_TEST_MODE") == "fail":
        print("error: the hanging double fails on purpose", flush=True)
        return 1
    child = subprocess.Popen(["sleep", "600"])
    session_child = subprocess.Popen([sys.executable, "-c", SESSION_CHILD])
    record = os.environ["TF_GE_CUSTOM_TEST_HANG_RECORD"]
    with open(record + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "child": child.pid, "session_child": session_child.pid,
                   "argv": argv}, f)
    os.rename(record + ".tmp", record)
    print("double: hanging until killed", flush=True)
    time.sleep(600)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
