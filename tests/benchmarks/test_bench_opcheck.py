"""benchmarks/bench_opcheck.py: its figures, verdicts and exit status from a TEST DOUBLE of one
opcheck run (hand-worked numbers), and one real run of the first op of ``op_def.OPS`` in a
fresh process, whose JSON holds the time, the checks and the load it ran under, and meets
the goals (at least 10 checks run, under 60 s)."""
import importlib.util
import io
import json
import pathlib
import subprocess
import sys

import pytest

from tf_ge_custom import op_def

pytestmark = pytest.mark.kind("oracle")

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("bench_opcheck", str(ROOT / "benchmarks" / "bench_opcheck.py"))
bench_opcheck = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_opcheck)


def run_double(seconds, statuses):
    """A DOUBLE of bench_opcheck.run_op: a fixed time and fixed check statuses, no opcheck."""
    calls = []

    def run(op, triton_interp):
        calls.append((op.type_name, triton_interp))
        return seconds, [("check%d" % i, s) for i, s in enumerate(statuses)]

    run.calls = calls
    return run


def test_a_run_meeting_the_goals_is_reported_with_its_figures(tmp_path):
    # 12 passed + 1 not applicable of 13 checks in 14.5 s: both goals met
    run = run_double(14.5, ["passed"] * 12 + ["not applicable"])
    out = io.StringIO()
    assert bench_opcheck.main(["--json", str(tmp_path / "r.json")], run=run, out=out) == 0
    assert [name for name, _ in run.calls] == [op.type_name for op in op_def.OPS]
    text = out.getvalue()
    for op in op_def.OPS:
        assert "| %s | 14.5 | 12 | 13 | " % op.type_name in text
        assert text.count("checks goal met; time goal met |") == len(op_def.OPS)
    data = json.loads((tmp_path / "r.json").read_text())
    figures = data["ops"][op_def.OPS[0].type_name]
    assert figures["statuses"] == {"passed": 12, "not applicable": 1}
    assert figures["checks_goal_met"] and figures["seconds_goal_met"]


def test_missed_goals_and_failing_checks_are_called_what_they_are():
    # 9 checks run is one short of 10; 60 s is not under 60 s
    out = io.StringIO()
    only = op_def.OPS[-1].type_name
    assert bench_opcheck.main(["--only", only], run=run_double(60.0, ["passed"] * 9), out=out) == 0
    assert "| %s | 60.0 | 9 | 9 | " % only in out.getvalue()
    assert "checks goal MISSED; time goal MISSED |" in out.getvalue()
    out = io.StringIO()
    assert bench_opcheck.main(["--only", only], run=run_double(1.0, ["passed"] * 10 + ["failed", "not run"]),
                              out=out) == 1
    assert "CHECKS DID NOT PASS: check10, check11; checks goal met; time goal met" in out.getvalue()


def test_an_unknown_op_is_refused_naming_the_known_ones():
    with pytest.raises(SystemExit):
        bench_opcheck.main(["--only", "NoSuchOp"], run=run_double(1.0, []), out=io.StringIO())


@pytest.mark.slow
def test_a_real_run_of_an_op_meets_the_goals_and_records_the_load(tmp_path):
    op = op_def.OPS[0]
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_opcheck.py"), "--only", op.type_name,
                           "--triton-interp", str(ROOT / ".cache" / "triton-interp"),
                           "--json", str(tmp_path / "r.json")], cwd=str(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    figures = json.loads((tmp_path / "r.json").read_text())["ops"][op.type_name]
    assert figures["checks_run"] >= bench_opcheck.GOAL_CHECKS, figures
    assert 0 < figures["seconds"] < bench_opcheck.GOAL_SECONDS, figures
    assert figures["load_before"] is not None and figures["load_after"] is not None
    assert figures["not_passed"] == []
    print(proc.stdout)
