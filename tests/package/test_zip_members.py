"""The bounded readers of zip members (tf_ge_custom/_zip_members.py) on archives written field
by field (tests/fixtures/zip_bomb.py): what a member declares, what it inflates to, and the CRC,
each checked against sizes computed here."""
import importlib.util
import os
import zipfile

import pytest

from tf_ge_custom import _zip_members as members

pytestmark = pytest.mark.kind("plumbing")

_HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "zip_bomb.py")
_SPEC = importlib.util.spec_from_file_location("zip_bomb", _HERE)
zip_bomb = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(zip_bomb)
MIB = 1 << 20


def test_the_cap_is_the_floor_for_a_small_archive_and_a_multiple_of_a_large_one(tmp_path):
    small, large = tmp_path / "small.zip", tmp_path / "large.zip"
    small.write_bytes(b"x" * 1000)
    large.write_bytes(b"x" * (3 * MIB))
    assert members.cap_for(str(small)) == 256 * MIB
    assert members.cap_for(str(large)) == 300 * MIB


def test_a_member_declaring_more_than_the_cap_is_named_before_anything_is_inflated(tmp_path):
    path = str(tmp_path / "bomb.zip")
    zip_bomb.write_zip(path, [("a.txt", b"hello"), ("w.h5", zip_bomb.bomb_member(300))])
    with zipfile.ZipFile(path) as archive:
        problem = members.declared_problem(archive, members.cap_for(path))
    assert "its member w.h5 declares %d bytes" % (300 * MIB) in problem and "256 MiB" in problem


def test_members_declaring_more_in_all_than_the_cap_are_refused(tmp_path):
    path = str(tmp_path / "many.zip")
    zip_bomb.write_zip(path, [("a", zip_bomb.bomb_member(200)), ("b", zip_bomb.bomb_member(200))])
    with zipfile.ZipFile(path) as archive:
        assert "declare %d bytes in all" % (400 * MIB) in members.declared_problem(archive, 256 * MIB)
        assert members.declared_problem(archive, 400 * MIB) == ""


def test_a_member_that_inflates_past_what_it_declares_stops_there_and_fails_its_crc(tmp_path):
    """The stream holds 64 MiB of zeros; the header declares 1 MiB and the CRC of 64 MiB."""
    stream, crc, _ = zip_bomb.bomb_member(64)
    path = str(tmp_path / "lying.zip")
    zip_bomb.write_zip(path, [("ok.txt", b"fine"), ("w.h5", (stream, crc, MIB))])
    with zipfile.ZipFile(path) as archive:
        assert members.first_damaged(archive, 256 * MIB) == "w.h5"
        assert members.copy_member(archive, "ok.txt", None, 4) == 4


def test_a_true_member_is_copied_whole_within_its_budget_and_spooled_to_a_file(tmp_path):
    path = str(tmp_path / "zeros.zip")
    zip_bomb.write_zip(path, [("w.h5", zip_bomb.bomb_member(20))])
    with zipfile.ZipFile(path) as archive:
        assert members.first_damaged(archive, 20 * MIB) is None
        with members.spooled(archive, "w.h5", 20 * MIB) as copy:
            assert copy._rolled  # past IN_MEMORY: a temporary file, not 20 MiB of memory
            copy.seek(0, os.SEEK_END)
            assert copy.tell() == 20 * MIB
        with pytest.raises(members.TooLarge):
            members.spooled(archive, "w.h5", 20 * MIB - 1)
        assert members.head(archive, "w.h5") == bytes(4096)
