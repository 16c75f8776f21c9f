"""The AddCustom NPU kernel: ``z[i] = x[i] + y[i]`` over a flat range of elements.

One ``@triton.jit`` source serves every dtype of the op (float32, float16, bfloat16, int32):
the element type comes from the pointers it is compiled for. ``BLOCK_SIZE`` comes from the
op definition (``tf_ge_custom.op_def.ADD_CUSTOM.kernel.block_size``); the host computes the
grid with ``geometry.py`` and never launches more programs than the SoC has vector cores,
so each program walks over every ``num_programs``-th block.

Framework-free on purpose: the builder compiles this file ahead of time for each
(SoC, dtype), and the interpreter tests run the very same function on the CPU.
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_programs = tl.num_programs(axis=0)
    # Grid-stride loop: program p handles blocks p, p + P, p + 2P, ... so the grid can be
    # capped (vector cores, 65535) whatever n_elements is. The host keeps
    # n_elements + BLOCK_SIZE * P below 2^31, so no 32-bit index here can wrap.
    for block_start in range(pid * BLOCK_SIZE, n_elements, num_programs * BLOCK_SIZE):
        offsets = block_start + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(z_ptr + offsets, x + y, mask=mask)
