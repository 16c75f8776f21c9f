"""tests/compat runs in the main suite and, in ``make test-compat``, on TF Adapter's
TensorFlows (1.15.5, 2.6.5). ``adapter_user_commands.py`` is for the latter only (its name is
not a test module's, so the main suite does not collect it; on the main suite's TensorFlow the
same console-script runs are tests/user's): ``make test-compat`` names it explicitly."""
