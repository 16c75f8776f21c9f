"""The AddCustom NPU kernels: ``z = x + y``, with broadcasting, as Triton kernel variants.

One ``@triton.jit`` source per kernel serves every dtype of the op (float32, float16,
bfloat16, int32): the element type comes from the pointers it is compiled for. Which
variants exist, with which compile-time constants, is stated in ``tf_ge_custom/op_def.py``
(``ADD_CUSTOM.kernel.variants``); the builder compiles each for every (SoC, dtype), and the
GE library picks one per call from the reduced broadcast shape (docs/kernels.md):

* ``add_kernel`` (variant ``flat``): equal shapes, one flat range of ``n_elements``;
* ``add_scalar_kernel`` (``scalar``): operand b is one element, loaded once;
* ``add_tile_kernel`` (``row_*``, ``col_*``, ``outer_*``): a frame of outer dimensions
  ``d0, d1, d2`` over a plane of ``rows x cols``, in 2D tiles of BLOCK_ROWS x BLOCK_COLS. The
  output is contiguous; the operands' strides along the outer dimensions are arguments (0
  where they broadcast), and inside the plane each operand's access is fixed at compile
  time (A_ROWS, B_ROWS), so no element index needs a division and every load is a
  contiguous row (a broadcast operand is loaded once per tile, as one row or one column,
  and widened in the add).

Every program walks a grid-stride loop over blocks or tiles, so the host can cap the grid
at the SoC's vector cores (and 65535) whatever the tensor's size; the host keeps every
32-bit index below 2^31 by chunking larger tensors into several launches.

Framework-free on purpose: the builder compiles this file ahead of time, and the
interpreter tests run the very same functions on the CPU.
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


@triton.jit
def add_scalar_kernel(a_ptr, b_ptr, z_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_programs = tl.num_programs(axis=0)
    b = tl.load(b_ptr)  # the one element of b, read once per program
    for block_start in range(pid * BLOCK_SIZE, n_elements, num_programs * BLOCK_SIZE):
        offsets = block_start + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        tl.store(z_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) + b, mask=mask)


@triton.jit
def add_tile_kernel(a_ptr, b_ptr, z_ptr, d0, d1, d2, rows, cols,
                    a_stride0, a_stride1, a_stride2, b_stride0, b_stride1, b_stride2,
                    A_ROWS: tl.constexpr, B_ROWS: tl.constexpr,
                    BLOCK_ROWS: tl.constexpr, BLOCK_COLS: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_programs = tl.num_programs(axis=0)
    row_tiles = tl.cdiv(rows, BLOCK_ROWS)
    col_tiles = tl.cdiv(cols, BLOCK_COLS)
    # Tiles are numbered plane by plane, row-tile by row-tile; the divisions below are
    # per tile (scalar), never per element.
    for tile in range(pid, d0 * d1 * d2 * row_tiles * col_tiles, num_programs):
        col_tile = tile % col_tiles
        plane_row = tile // col_tiles
        row_tile = plane_row % row_tiles
        plane = plane_row // row_tiles
        i2 = plane % d2
        i1 = (plane // d2) % d1
        i0 = plane // (d2 * d1)
        r = row_tile * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)[:, None]
        c = col_tile * BLOCK_COLS + tl.arange(0, BLOCK_COLS)[None, :]
        row_mask = r < rows
        col_mask = c < cols
        a_base = a_ptr + i0 * a_stride0 + i1 * a_stride1 + i2 * a_stride2
        b_base = b_ptr + i0 * b_stride0 + i1 * b_stride1 + i2 * b_stride2
        if A_ROWS:  # a is full in the plane, laid out like z
            a = tl.load(a_base + r * cols + c, mask=row_mask & col_mask)
        else:  # a is one row of the plane, the same for every row
            a = tl.load(a_base + c, mask=col_mask)
        if B_ROWS:  # b is one column of the plane: one value per row
            b = tl.load(b_base + r, mask=row_mask)
        else:  # b is one row of the plane
            b = tl.load(b_base + c, mask=col_mask)
        tl.store(z_ptr + (plane * rows + r) * cols + c, a + b, mask=row_mask & col_mask)
