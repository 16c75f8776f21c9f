"""The ops' Triton kernels and their ahead-of-time npubin builder.

Installed as ``tf_ge_custom.kernels`` (the repository's top-level ``kernels/`` folder):

* the kernel files, one per op, each named by its record's ``kernel.source`` in
  ``tf_ge_custom/op_def.py`` (``add_kernel.py``: AddCustom's flat, scalar and tiled
  broadcasting variants; ``leaky_relu_kernel.py``: LeakyReluCustom's flat one); each holds the
  ``@triton.jit`` sources of its variants, one for every dtype
* ``kernel_sources.py`` where the GE library finds kernel sets, and which one serves a board
* ``geometry.py``    grid size and chunked launches of the flat kernel (the rule the
  manifest records; the GE library's launch plan applies it to every variant)
* ``socs.py``        supported SoCs and their vector-core counts
* ``builder.py``     ``build_kernels(...)``: source -> TTIR -> linalg -> HIVM IR -> npubin
  (``frontend.py`` triton-ascend stages, ``bishengir.py`` the compiler run,
  ``hivm_ir.py`` reading the emitted entry signature, ``toolchain.py`` finding tools)
* ``cache.py``       the per-user kernel cache (where, the key, the lock / build aside /
  rename writer) that the GE library compiles into on first graph build, through
  ``compile_kernel.py`` (the entry point it runs in a child process)

The command lines ``tf-ge-custom build-kernels`` and ``list-kernels`` live with the other
commands, in ``tf_ge_custom/_commands/``.

Importing this package imports no Triton: only building does.
"""
