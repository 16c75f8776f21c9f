"""Every fix the package or its docs give installs from somewhere that exists.

tf-ge-custom is on no package index: ``pip install tf-ge-custom`` fails, and installs what
anyone who registers the name puts there. So a fix names a source the user has (``.`` in a
clone, the clone's or an archive's path, a wheel file, ``make demo``), never the bare name.
The texts are collected from everywhere one can come from: every string constant of the
package's and examples' Python (errors' messages and ``fix=`` values, doctor's remedies, the
build's reasons, the command lines' output), the Makefile, README.md, CHANGELOG.md and
docs/*.md, the rebuild command as each kind of install words it, and the fixes of the
installed ``tf-ge-custom doctor --json`` (folded checks included).
"""
import ast
import glob
import json
import os
import re
import subprocess
import sys

import pytest

from tf_ge_custom import _library
from tf_ge_custom.doctor import remedies
from tf_ge_custom.doctor.results import Instruction

pytestmark = pytest.mark.kind("plumbing")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# PEP 503's normalised form of this project's name, and what normalises to it
OWN_NAME = "tf-ge-custom"
PIP = re.compile(r"\bpip3?\s+(?:install|wheel|download)\b([^`'\"|;&)#\n]*)")
# pip options whose value is the next word (a file, a folder, a URL: not a requirement)
TAKES_VALUE = {"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-t", "--target",
               "-w", "--wheel-dir", "-d", "--dest", "-i", "--index-url", "--extra-index-url",
               "-f", "--find-links", "--prefix", "--root", "--report", "--cache-dir", "--python"}
# Pending: a text this module's rule refuses that is being reworded with its command's other
# messages. The test below fails once the file no longer holds it, so the entry goes with it.
PENDING = {"tf_ge_custom/_commands/build_kernels.py"}


def _normalised(word):
    name = re.split(r"[\[<>=!~;@ ]", word, 1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def bare_own_names(text):
    """The pip commands in ``text`` that install this project by its (unpublished) name."""
    found = []
    for match in PIP.finditer(" ".join(text.split())):
        words = match.group(1).split()
        skip = False
        for word in words:
            if skip:
                skip = False
                continue
            if word.startswith("-"):
                skip = word in TAKES_VALUE
                continue
            if _normalised(word.strip(",.:")) == OWN_NAME:
                found.append(match.group(0).strip())
    return found


def test_the_rule_refuses_the_bare_name_and_accepts_sources():
    for refused in ("pip install tf-ge-custom", "pip install --no-deps --force-reinstall tf_ge_custom",
                    "python -m pip install -q TF.GE.Custom==0.1.0", "pip wheel tf-ge-custom[dev]",
                    "run: pip install --no-deps\n   tf-ge-custom)"):
        assert bare_own_names(refused), refused
    for accepted in ("pip install .", "pip install --no-deps --force-reinstall /src/tf-ge-custom",
                     "pip install dist/tf_ge_custom-0.1.0-cp311-cp311-linux_x86_64.whl",
                     "pip install -r requirements/demo.lock", "pip install tensorflow-cpu",
                     "pip install -e ../tf-ge-custom", "uninstall: pip uninstall tf-ge-custom",
                     "make demo"):
        assert not bare_own_names(accepted), accepted


def _python_files():
    for top in ("tf_ge_custom", "kernels", "examples", "benchmarks"):
        for path in sorted(glob.glob(os.path.join(ROOT, top, "**", "*.py"), recursive=True)):
            yield os.path.relpath(path, ROOT)
    yield "setup.py"


def _string_constants(path):
    with open(os.path.join(ROOT, path)) as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value
        elif isinstance(node, ast.JoinedStr):  # an f-string's literal parts, joined
            yield "".join(v.value for v in node.values
                          if isinstance(v, ast.Constant) and isinstance(v.value, str))


def test_no_string_of_the_package_installs_the_bare_name():
    offending = {}
    for path in _python_files():
        found = [c for text in _string_constants(path) for c in bare_own_names(text)]
        if found:
            offending[path] = found
    pending = {p for p in offending if p in PENDING}
    assert pending == PENDING, "no longer refused, drop from PENDING: %s" % sorted(PENDING - pending)
    assert {p: f for p, f in offending.items() if p not in PENDING} == {}


def test_no_page_or_make_target_installs_the_bare_name():
    pages = ["README.md", "CHANGELOG.md", "Makefile"] + sorted(
        os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
    offending = {}
    for page in pages:
        found = [c for piece in _pieces(page) for c in bare_own_names(piece)]
        if found:
            offending[page] = found
    assert offending == {}


def _pieces(page):
    """A page's commands and sentences: each line of a code block (and of the Makefile, its
    continuation lines joined) alone, each paragraph of prose whole (a command wraps there)."""
    with open(os.path.join(ROOT, page)) as f:
        text = f.read()
    if not page.endswith(".md"):
        return text.replace("\\\n", " ").splitlines()
    blocks = re.findall(r"^ *```[^\n]*\n(.*?)^ *```", text, re.S | re.M)
    prose = re.sub(r"^ *```[^\n]*\n.*?^ *```", "\n\n", text, flags=re.S | re.M)
    lines = [line for block in blocks for line in block.replace("\\\n", " ").splitlines()]
    return lines + re.split(r"\n\s*\n", prose)


def test_the_rebuild_command_is_concrete_or_says_where_to_run_it(monkeypatch, tmp_path):
    for text in (_library.REBUILD_COMMAND, _library.rebuild_command(), str(remedies.REBUILD)):
        assert not bare_own_names(text), text
    # installed from a wheel: no source folder is known, so it is an instruction ("in your
    # clone"), and doctor prints it as one (fix (by hand):), not as a command to paste
    monkeypatch.setattr(_library, "_PACKAGE_DIR", str(tmp_path / "site" / "tf_ge_custom"))
    assert _library.rebuild_command() == _library.REBUILD_COMMAND
    assert _library.REBUILD_COMMAND.endswith("python -m pip install --no-deps --force-reinstall "
                                             "--no-cache-dir .")
    assert "clone" in _library.REBUILD_COMMAND
    assert isinstance(remedies.source_cann(_NoToolkit(), Instruction("x")), Instruction)


class _NoToolkit(object):
    def set_env_script(self):
        return "/usr/local/Ascend/cann/set_env.sh"


@pytest.mark.slow
def test_the_installed_doctors_fixes_name_no_bare_package(tmp_path):
    script = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    proc = subprocess.run([script, "doctor", "--json"], cwd=str(tmp_path), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=300)
    checks = json.loads(proc.stdout)["checks"]
    every = checks + [f for c in checks for f in (c.get("data") or {}).get("folded", [])]
    texts = [c["fix"] for c in every if c["fix"]] + [c["detail"] for c in every]
    assert len([t for t in texts if t]) > 10
    assert [t for t in texts if bare_own_names(t)] == []
