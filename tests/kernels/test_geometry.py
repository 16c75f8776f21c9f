"""Launch geometry: grid caps and chunked launches, including tensors above 2^31 elements."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tf_ge_custom.kernels import geometry
from tf_ge_custom.op_def import ADD_CUSTOM

BLOCK = ADD_CUSTOM.kernel.variant("flat").block[0]


@pytest.mark.parametrize("n, programs, expected", [
    (0, 48, 0), (1, 48, 1), (BLOCK, 48, 1), (BLOCK + 1, 48, 2),
    (BLOCK * 48, 48, 48), (BLOCK * 48 + 1, 48, 48), (BLOCK * 10 ** 6, 48, 48),
    (BLOCK * 10 ** 6, 70000, 65535),
])
def test_grid_is_blocks_capped_by_programs_and_65535(n, programs, expected):
    assert geometry.grid_size(n, BLOCK, programs) == expected


def test_chunk_size_keeps_every_32_bit_index_below_2_31():
    chunk = geometry.max_elements_per_launch(BLOCK, 48)
    assert chunk == 2 ** 30 and chunk % BLOCK == 0
    # the worst case the contract allows: 65535 programs
    chunk = geometry.max_elements_per_launch(BLOCK, 65535)
    assert chunk + BLOCK * 65535 < 2 ** 31 and chunk % BLOCK == 0


def test_empty_tensor_launches_nothing():
    assert geometry.plan_launches(0, BLOCK, 48) == []


def test_five_billion_elements_split_into_launches_that_cannot_wrap():
    n = 5 * 10 ** 9  # > 2^32: what a single i32 launch could never address
    launches = geometry.plan_launches(n, BLOCK, 48)
    assert [l.count for l in launches] == [2 ** 30] * 4 + [n - 4 * 2 ** 30]
    assert [l.offset for l in launches] == [i * 2 ** 30 for i in range(5)]
    assert all(l.grid == 48 for l in launches)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 2 ** 40), block=st.sampled_from([16, 256, BLOCK, 16384]),
       programs=st.integers(1, 70000))
def test_plan_covers_every_element_once_within_all_limits(n, block, programs):
    launches = geometry.plan_launches(n, block, programs)
    assert sum(l.count for l in launches) == n
    offset = 0
    for l in launches:
        assert l.offset == offset and l.count >= 1
        offset += l.count
        assert 1 <= l.grid <= min(programs, geometry.MAX_GRID)
        assert (l.grid - 1) * block < l.count  # no program is launched without a block
        assert l.count + block * l.grid < 2 ** 31  # the kernel's loop index never wraps
    # all but the last launch are full chunks, aligned to the block
    assert all(l.count % block == 0 for l in launches[:-1])


@pytest.mark.parametrize("bad", [
    lambda: geometry.grid_size(-1, BLOCK, 48),
    lambda: geometry.grid_size(1, 0, 48),
    lambda: geometry.grid_size(1, BLOCK, 48, max_grid=65536),
    lambda: geometry.plan_launches(10, BLOCK, 48, per_launch=BLOCK + 1),
])
def test_bad_geometry_arguments_are_refused(bad):
    with pytest.raises(ValueError):
        bad()
