"""One list of field rules, both readers: the GE core's manifest reader
(``tf_ge_custom_manifest_driver``, tests/native/core/manifest_driver.cc) and the Python
validator that ``list-kernels`` reports with (tf_ge_custom.kernel_manifest) give the same
verdict on the same manifests.

The manifests are one valid shared fixture (tests/fixtures/manifests/valid_binaries.json),
each changed in one field: for every rule of kernel_contract.MANIFEST_FIELDS (not a list
written here) a value of every other JSON kind, a null, the key removed, and an unknown key
beside it; and the cases found by hand that the GE core once accepted (a kernel whose
``binary`` is null while its size and sha256 are set, a null ``magic``). The oracle of a
refusal is the rule itself: the key is wrong by the rule's kind and presence, so both readers
refuse it, each naming the key. Changes the rules allow (a nullable key null, every IR-only
key null together, an optional key absent where nothing else needs it) are taken by both.
"""
import copy
import json
import os
import subprocess

import pytest

from tf_ge_custom import kernel_contract, kernel_manifest
from tf_ge_custom.errors import ManifestError

pytestmark = pytest.mark.kind("oracle")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASE = os.path.join(ROOT, "tests", "fixtures", "manifests", "valid_binaries.json")

# A value of each JSON kind that is not of the kind named (a sha256 digest is a string of 64
# lowercase hex digits: an upper-case one is a string, not a digest).
WRONG = {
    "string": [7, ["x"], True],
    "sha256": ["AB" * 32, "ab" * 31, 7],
    "integer": ["7", 1.5, True, 2 ** 64],
    "boolean": [1, "true"],
    "array": [{}, "x"],
    "object": [[], "x"],
}
# The Python refusal kinds for each C++ code's name (CodeName; docs/kernel-manifest.md, the check order). A
# manifest without "format" or "version" is a schema error to the Python reader and a version
# one to the GE core: both refuse it, naming the key.
KINDS_OF_CODE = {"manifest": ("syntax", "schema", "layout", "mismatch"),
                 "version": ("version", "schema"), "outdated": ("outdated",)}


def _base():
    with open(BASE) as f:
        return json.load(f)


def _paths(doc):
    """Where each object the rules name sits in ``doc``, found through the rules' ``holds``:
    {object name: a function of a document giving that object}. An array of objects gives
    its first item whose keys hold the most of the object's optional keys (the input slot,
    which carries an index)."""
    found = {"manifest": lambda d: d}
    queue = ["manifest"]
    while queue:
        name = queue.pop(0)
        for obj, key, kind, _, holds in kernel_contract.MANIFEST_FIELDS:
            if obj != name or not holds or holds in found:
                continue
            parent = found[name]
            if kind == "object":
                found[holds] = (lambda p, k: lambda d: p(d)[k])(parent, key)
            else:
                optional = [r[1] for r in kernel_contract.MANIFEST_FIELDS
                            if r[0] == holds and r[3] == "optional"]
                items = parent(doc)[key]
                best = max(range(len(items)), key=lambda i: sum(k in items[i] for k in optional))
                found[holds] = (lambda p, k, i: lambda d: p(d)[k][i])(parent, key, best)
            queue.append(holds)
    return found


def _cases():
    """(case id, document, key the verdict is about, True when both must take it)."""
    base = _base()
    paths = _paths(base)
    assert set(paths) == set(r[0] for r in kernel_contract.MANIFEST_FIELDS)
    cases = [("base", base, None, True)]

    def changed(obj, edit):
        doc = copy.deepcopy(base)
        edit(paths[obj](doc))
        return doc

    for obj, key, kind, presence, _ in kernel_contract.MANIFEST_FIELDS:
        for n, value in enumerate(WRONG[kind]):
            doc = changed(obj, lambda o: o.__setitem__(key, value))
            cases.append(("%s.%s=%s" % (obj, key, json.dumps(value)[:12]), doc, key, False))
        doc = changed(obj, lambda o: o.__setitem__(key, None))
        cases.append(("%s.%s=null" % (obj, key), doc, key, presence == "nullable"))
        if presence != "optional":
            doc = changed(obj, lambda o: o.pop(key, None))
            cases.append(("%s.%s absent" % (obj, key), doc, key, False))
    for obj in paths:
        doc = changed(obj, lambda o: o.__setitem__("unlisted_key", 1))
        cases.append(("%s.unlisted_key" % obj, doc, "unlisted_key", False))
    ir_only = [(r[0], r[1]) for r in kernel_contract.MANIFEST_FIELDS if r[3] == "ir_only"]
    assert ir_only and len(set(o for o, _ in ir_only)) == 1
    obj = ir_only[0][0]
    doc = changed(obj, lambda o: o.update({k: None for _, k in ir_only}))
    cases.append(("%s: every IR-only key null" % obj, doc, None, True))
    # Found by hand: what the GE core once accepted and list-kernels refused.
    doc = changed("kernel", lambda o: o.__setitem__("binary", None))
    cases.append(("binary null, binary_size and sha256 set", doc, "binary", False))
    doc = changed("kernel", lambda o: o.__setitem__("magic", None))
    cases.append(("magic null", doc, "magic", False))
    return cases


CASES = _cases()


def _python_verdict(doc):
    try:
        kernel_manifest.parse_manifest(json.dumps(doc))
    except ManifestError as e:
        return {"ok": False, "kind": e.kind, "message": str(e)}
    return {"ok": True}


@pytest.fixture(scope="module")
def cpp_verdicts(native_build, tmp_path_factory):
    folder = tmp_path_factory.mktemp("manifest-rules")
    paths = []
    for i, (_, doc, _, _) in enumerate(CASES):
        path = folder / ("%03d.json" % i)
        path.write_text(json.dumps(doc, indent=1))
        paths.append(str(path))
    proc = subprocess.run([native_build.exe("tf_ge_custom_manifest_driver")] + paths,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["path"] for r in rows] == paths
    return rows


def test_the_rules_name_only_known_kinds_and_objects():
    objects = set(r[0] for r in kernel_contract.MANIFEST_FIELDS)
    for obj, key, kind, presence, holds in kernel_contract.MANIFEST_FIELDS:
        assert kind in WRONG and kind in kernel_contract.MANIFEST_FIELD_KINDS, (obj, key)
        assert presence in kernel_contract.MANIFEST_FIELD_PRESENCE, (obj, key)
        assert holds == "" or holds in objects, (obj, key)
    # Every key of the valid fixture is a rule's, and every required rule's key is there.
    base, paths = _base(), _paths(_base())
    for obj in objects:
        held = paths[obj](base)
        assert set(held) <= set(kernel_contract.manifest_keys(obj)), obj
        required = [r[1] for r in kernel_contract.MANIFEST_FIELDS if r[0] == obj and r[3] != "optional"]
        assert set(required) <= set(held), obj


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0] for c in CASES])
def test_both_readers_give_the_rules_verdict(index, cpp_verdicts):
    name, doc, key, valid = CASES[index]
    python, cpp = _python_verdict(doc), cpp_verdicts[index]
    assert python["ok"] == valid, (name, python)
    assert cpp["ok"] == valid, (name, cpp)
    if valid:
        return
    assert python["kind"] in KINDS_OF_CODE[cpp["code"]], (name, python, cpp)
    assert key in python["message"], (name, python["message"])
    assert key in cpp["message"], (name, cpp["message"])
