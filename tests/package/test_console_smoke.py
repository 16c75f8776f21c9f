"""Each command of the registry once through the installed console script in a fresh process:
the quick tier's smoke runs (``smoke`` marker, tests/quick_tier.py). The commands are read
from the registry, so a new command has its run here by itself; the oracle is argparse's own
usage line for that command."""
import os
import subprocess
import sys

import pytest

from tf_ge_custom import _commands

pytestmark = [pytest.mark.kind("plumbing"), pytest.mark.smoke]

SCRIPT = os.path.join(os.path.dirname(sys.executable), "tf-ge-custom")


@pytest.mark.parametrize("name", [c.name for c in _commands.COMMANDS])
def test_each_command_answers_help_through_the_console_script(name, tmp_path):
    proc = subprocess.run([SCRIPT, name, "--help"], cwd=str(tmp_path), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("usage: tf-ge-custom %s" % name), proc.stdout[:500]
    assert "Traceback" not in proc.stderr
