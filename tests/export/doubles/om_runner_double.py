"""A TEST DOUBLE standing in for tf_ge_custom_om_runner, to test run-om's handling only.

It proves nothing about ACL or the NPU. It reads the raw input files as float32, writes one
output (their element-wise sum, or that plus 1 in mode "wrong" via TF_GE_CUSTOM_TEST_MODE)
and prints the runner's JSON lines; it records its argv, whether ASCEND_CUSTOM_OPP_PATH was
set, the bytes of each input file it was given and of the output it wrote (hex, to
$TF_GE_CUSTOM_TEST_RECORD), so that tests can check what run-om staged and what it made of
the runner's output. $TF_GE_CUSTOM_TEST_OUTPUT_FIELDS (a JSON object) changes the fields of
its "output" line, to test what run-om makes of a malformed one: each value replaces the field's,
"<absent>" removes it.
"""
import json
import os
import sys

import numpy as np


def main(argv):
    inputs, options = [], {}
    for flag, value in zip(argv[::2], argv[1::2]):
        if flag == "--input":
            inputs.append(value)
        else:
            options[flag] = value
    record = {"argv": argv, "custom_opp_path_set": "ASCEND_CUSTOM_OPP_PATH" in os.environ,
              "inputs": [open(p, "rb").read().hex() for p in inputs]}
    values = [np.fromfile(p, dtype="<f4") for p in inputs]
    print(json.dumps({"event": "model", "inputs": len(values), "outputs": 1, "dynamic_batch": False}))
    for i, v in enumerate(values):
        print(json.dumps({"event": "input", "index": i, "name": "in%d" % i, "dtype": "float32",
                          "dims": [int(v.size)], "size": int(v.nbytes)}))
    total = np.sum(values, axis=0).astype("<f4")
    if os.environ.get("TF_GE_CUSTOM_TEST_MODE") == "wrong":
        total = total + 1
    path = os.path.join(options["--output-dir"], "output_0.bin")
    total.tofile(path)
    record["output"] = total.tobytes().hex()
    with open(os.environ["TF_GE_CUSTOM_TEST_RECORD"], "w") as f:
        json.dump(record, f)
    dims = [int(d) for d in os.environ.get("TF_GE_CUSTOM_TEST_DIMS", str(total.size)).split(",")]
    line = {"event": "output", "index": 0, "name": "z", "dtype": "float32", "dims": dims,
            "size": int(total.nbytes), "file": path}
    for field, value in json.loads(os.environ.get("TF_GE_CUSTOM_TEST_OUTPUT_FIELDS", "{}")).items():
        if value == "<absent>":
            line.pop(field, None)
        else:
            line[field] = value
    print(json.dumps(line))
    print(json.dumps({"event": "done"}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
