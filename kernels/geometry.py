"""Launch geometry of the flat elementwise kernels: grid size and chunked launches.

The one Python statement of the rule the manifest records (``grid`` and
``max_elements_per_launch``) and the GE library applies in C++:

* ``gridX = min(ceil(n / block_size), max_programs, max_grid)``, ``gridY = gridZ = 1``;
  each program loops over every gridX-th block (see add_kernel.py);
* a tensor of more than ``max_elements_per_launch`` elements is split into launches of at
  most that many elements (a multiple of ``block_size``), each with its pointers advanced;
  the builder picks the limit so that the kernel's 32-bit index arithmetic cannot wrap;
* ``n == 0`` launches nothing.

Pure Python; the interpreter tests drive the kernel through :func:`plan_launches`.
"""
from typing import List, NamedTuple

# MAX_GRID: the runtime refuses more blocks in one launch; INDEX_LIMIT: a signed 32-bit
# element index must stay below it. Shared with the GE library (kernel_contract.py).
from tf_ge_custom.kernel_contract import INDEX_LIMIT, MAX_GRID
# Largest chunk we ever choose: a power of two (a multiple of any power-of-two block size)
# that leaves 2^30 of head-room for block_size * max_programs below INDEX_LIMIT.
DEFAULT_MAX_ELEMENTS_PER_LAUNCH = 2 ** 30


class Launch(NamedTuple):
    offset: int  # first element of this launch: the host advances every pointer by it
    count: int  # n_elements passed to the kernel
    grid: int  # gridX (gridY = gridZ = 1)


def max_elements_per_launch(block_size, max_programs, index_bits=32):
    """The largest chunk (a multiple of ``block_size``) whose index arithmetic cannot wrap.

    The kernel's loop variable reaches ``n + block_size * programs`` before the loop test
    fails, so ``count + block_size * max_programs`` must stay below ``2^(index_bits-1)``.
    """
    _positive("block_size", block_size)
    _positive("max_programs", max_programs)
    limit = 2 ** (index_bits - 1) - 1 - block_size * max_programs
    chunk = min(DEFAULT_MAX_ELEMENTS_PER_LAUNCH, limit) // block_size * block_size
    if chunk < block_size:
        raise ValueError("block_size %d x max_programs %d leaves no room for one block below "
                         "2^%d" % (block_size, max_programs, index_bits - 1))
    return chunk


def grid_size(n, block_size, max_programs, max_grid=MAX_GRID):
    """gridX for ``n`` elements (0 when there is nothing to do)."""
    if n < 0:
        raise ValueError("n must be >= 0, got %d" % n)
    _positive("block_size", block_size)
    _positive("max_programs", max_programs)
    if not 1 <= max_grid <= MAX_GRID:
        raise ValueError("max_grid must be in [1, %d], got %d" % (MAX_GRID, max_grid))
    blocks = -(-n // block_size)
    return min(blocks, max_programs, max_grid)


def plan_launches(n, block_size, max_programs, max_grid=MAX_GRID, per_launch=None):
    """The launches that cover ``n`` elements, in order (empty for ``n == 0``)."""
    if per_launch is None:
        per_launch = max_elements_per_launch(block_size, min(max_programs, max_grid))
    if per_launch < block_size or per_launch % block_size:
        raise ValueError("per_launch (%d) must be a positive multiple of block_size (%d)"
                         % (per_launch, block_size))
    launches = []  # type: List[Launch]
    offset = 0
    while offset < n:
        count = min(per_launch, n - offset)
        launches.append(Launch(offset, count, grid_size(count, block_size, max_programs,
                                                        max_grid)))
        offset += count
    return launches


def _positive(name, value):
    if value < 1:
        raise ValueError("%s must be >= 1, got %d" % (name, value))
