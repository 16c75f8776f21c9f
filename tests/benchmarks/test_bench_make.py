"""benchmarks/bench_make.py, which times the README's commands from a fresh clone, run on a
TEST DOUBLE of the project: a git repository whose Makefile prints the real one's step lines
(``==> set-up``, ``==> build``, ``==> run``), sleeps in each step and writes files of known
sizes into .venv/ and build/, with stamps so that a second ``make demo`` only runs.

Checked against independent accounts: the steps' times against the sleeps, the disk against
``du``, the clone against ``git``; what is uncommitted stays out of the clone.
"""
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.kind("doubles")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "benchmarks", "bench_make.py")

MAKEFILE = """\
.PHONY: demo broken
demo: .venv/.installed
\t@printf '==> %s\\n' "run: examples/demo.py"
\t@sleep 0.3
\t@echo "result: PASS"
.venv/.created:
\t@printf '==> %s\\n' "set-up: a virtual environment in .venv"
\t@mkdir -p .venv && sleep 0.6 && head -c 3000000 /dev/urandom > .venv/lib && touch $@
.venv/.installed: .venv/.created
\t@printf '==> %s\\n' "build: the package against .venv's TensorFlow (pip install .)"
\t@mkdir -p build && sleep 0.9 && head -c 200000 /dev/urandom > build/lib.so && touch $@
broken:
\t@printf '==> %s\\n' "set-up: a virtual environment in .venv"
\t@exit 3
"""


def _git(*args, cwd):
    return subprocess.run(["git"] + list(args), cwd=str(cwd), stdout=subprocess.PIPE,
                          universal_newlines=True, check=True).stdout.strip()


@pytest.fixture
def project(tmp_path):
    source = tmp_path / "project"
    source.mkdir()
    (source / "Makefile").write_text(MAKEFILE)
    _git("init", "-q", cwd=source)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "add", "Makefile", cwd=source)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "double", cwd=source)
    (source / "uncommitted.txt").write_text("not in a fresh clone")
    return source


def _bench(args, cwd, **extra):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env.update(extra)
    return subprocess.run([sys.executable, BENCH] + args, cwd=str(cwd), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=120)


def _du(path):
    return int(subprocess.run(["du", "-s", "-B1", str(path)], stdout=subprocess.PIPE,
                              universal_newlines=True, check=True).stdout.split()[0])


def test_each_target_is_timed_step_by_step_with_its_load_and_disk(project, tmp_path):
    clone = tmp_path / "clone"
    proc = _bench(["--source", str(project), "--clone", str(clone), "--targets", "demo,demo",
                   "--json", "make.json", "--every", "0.2"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    document = json.loads((tmp_path / "make.json").read_text())
    assert document["commit"] == _git("rev-parse", "HEAD", cwd=project)
    assert document["machine"]["cpus"] == os.cpu_count()
    first, again = document["targets"]
    assert [s["step"].split(":")[0] for s in first["steps"]] == ["set-up", "build", "run"]
    assert [s["step"].split(":")[0] for s in again["steps"]] == ["run"]  # nothing changed: the demo only
    for step, slept in zip(first["steps"], (0.6, 0.9, 0.3)):
        assert slept - 0.05 <= step["seconds"] < slept + 20, step
    assert first["seconds"] >= sum(s["seconds"] for s in first["steps"]) - 0.2
    assert first["exit_status"] == again["exit_status"] == 0
    assert first["disk_bytes"][".venv"] == _du(clone / ".venv") >= 3000000
    assert first["disk_bytes"]["build"] == _du(clone / "build") >= 200000
    assert first["disk_bytes"][".cache"] == 0
    for target in (first, again):
        load = target["load_average_1min"]
        assert 0 <= load["min"] <= min(load["start"], load["end"]) <= max(load["start"], load["end"]) <= load["max"]
    assert first["load_average_1min"]["samples"] >= 5  # read every 0.2 s through a run of 1.8 s
    assert not (clone / "uncommitted.txt").exists()  # a fresh clone of what is committed
    # one line per target, and make's own output in the log
    lines = [l for l in proc.stdout.splitlines() if l.startswith("make demo: ")]
    assert len(lines) == 2 and "s (set-up " in lines[0] and ", build " in lines[0], lines
    assert "load %s at the start, %s at the end" % (first["load_average_1min"]["start"],
                                                   first["load_average_1min"]["end"]) in lines[0]
    assert lines[1].split(" s (")[1].startswith("run "), lines[1]
    assert "result: PASS" in (tmp_path / "make.json.log").read_text()


def test_a_failing_target_ends_the_run_with_its_status_and_the_clone_goes(project, tmp_path):
    temporary = tmp_path / "tmp"  # where the clone goes without --clone
    temporary.mkdir()
    before = set(os.listdir(tmp_path))
    proc = _bench(["--source", str(project), "--targets", "broken,demo", "--json", "make.json"], tmp_path,
                  TMPDIR=str(temporary))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (target,) = json.loads((tmp_path / "make.json").read_text())["targets"]  # demo did not run
    assert target["target"] == "broken" and target["exit_status"] == 2  # make's status for a failed recipe
    assert "make broken: exit status 2, " in proc.stdout
    assert set(os.listdir(tmp_path)) == before | {"make.json", "make.json.log"}
    assert os.listdir(str(temporary)) == []


def test_an_existing_clone_folder_is_refused(project, tmp_path):
    proc = _bench(["--source", str(project), "--clone", str(tmp_path)], tmp_path)
    assert proc.returncode == 2 and "name a new folder" in proc.stderr
