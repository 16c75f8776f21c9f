"""A TEST DOUBLE standing in for tf_ge_custom_air_tool, to test our process handling only.

It proves nothing about GE's parser: it records its argv and ASCEND_CUSTOM_OPP_PATH (to
$TF_GE_CUSTOM_TEST_RECORD.air) and writes a few bytes to --output; mode "fail"
(TF_GE_CUSTOM_TEST_AIR_MODE) exits 1 after writing half a file.
"""
import json
import os
import sys


def main(argv):
    options = dict(zip(argv[::2], argv[1::2]))
    with open(os.environ["TF_GE_CUSTOM_TEST_RECORD"] + ".air", "w") as f:
        json.dump({"argv": argv, "ASCEND_CUSTOM_OPP_PATH": os.environ.get("ASCEND_CUSTOM_OPP_PATH")}, f)
    print("[air-tool double] parsing %s" % options["--model"], flush=True)
    with open(options["--output"], "wb") as f:
        f.write(b"AIR" if os.environ.get("TF_GE_CUSTOM_TEST_AIR_MODE") != "fail" else b"A")
    if os.environ.get("TF_GE_CUSTOM_TEST_AIR_MODE") == "fail":
        print("aclgrphParseTensorFlow returned 1 (double)", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
