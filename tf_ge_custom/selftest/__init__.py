"""``tf-ge-custom selftest``: everything this host can run, stage by stage, in one command.

Each stage prints one line, ``NAME=PASS (figures)``, ``NAME=FAIL (reason)`` or
``NAME=SKIP (what is missing)``; ``--json FILE`` writes the same with the versions of
TensorFlow, TF Adapter, CANN, the SoC, this package and its build record, for a bug report.
The exit status is 1 when a stage FAILs. Without the NPU stack the CPU stages PASS and the
NPU stages SKIP, each naming what it lacks.

The stages and their order: :mod:`.stages`. What the host has (cheap, no TensorFlow):
:mod:`.host`. Every stage that imports TensorFlow or touches the device runs in a child
process under a timeout and is killed with its process group when the timeout passes
(:mod:`.runner`, :mod:`.child`), so a hung device cannot hang the command. The stage bodies:
:mod:`.cpu_stages`, :mod:`.npu_stages`, :mod:`.offline_stages`; the only code that calls
TF Adapter, ACL or the CANN tools: :mod:`.device`. Details: docs/selftest.md.
"""
