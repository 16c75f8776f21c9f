"""tf_ge_custom._atomic_files, the one way the package writes a file in place: the
target holds the old content or the new, never a part; no temporary is left behind; the
data reaches the disk before the rename.

Oracles: the bytes read back, the folder listing, the permission bits, and the calls the
writer makes (os.fsync, os.replace) observed through monkeypatch.
"""
import json
import os
import stat

import pytest

from tf_ge_custom import _atomic_files as atomic_files


def listing(folder):
    return sorted(os.listdir(str(folder)))


@pytest.mark.parametrize("write, value, expected", [
    (atomic_files.write_bytes, b"\x00\xffbytes", b"\x00\xffbytes"),
    (atomic_files.write_text, "text \u00e9\n", "text \u00e9\n".encode("utf-8")),
    (atomic_files.write_json, {"b": [1, 2], "a": None}, b'{\n  "b": [\n    1,\n    2\n  ],\n  "a": null\n}\n'),
])
def test_each_writer_replaces_the_file_whole(tmp_path, write, value, expected):
    target = tmp_path / "deep" / "er" / "file"
    assert write(str(target), value) == str(target)  # folders are made
    assert target.read_bytes() == expected
    assert stat.S_IMODE(target.stat().st_mode) == 0o644  # readable by other users' programs
    assert listing(target.parent) == ["file"]


def test_json_is_serialized_before_anything_is_touched(tmp_path):
    target = tmp_path / "build_info.json"
    target.write_text("old")
    for bad in ({"x": float("nan")}, {"x": object()}):
        with pytest.raises((ValueError, TypeError)):
            atomic_files.write_json(str(target), bad)
    assert target.read_text() == "old" and listing(tmp_path) == ["build_info.json"]
    atomic_files.write_json(str(target), {"b": 1, "a": 2}, sort_keys=True)
    assert list(json.loads(target.read_text())) == ["a", "b"]


@pytest.mark.parametrize("failure", [OSError("disk full"), KeyboardInterrupt()])
def test_a_failed_or_interrupted_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch,
                                                                            failure):
    target = tmp_path / "npu_supported_ops.json"
    target.write_text("previous content")

    def fail(*args):
        raise failure

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(type(failure)):
        atomic_files.write_text(str(target), "new content")
    assert target.read_text() == "previous content" and listing(tmp_path) == [target.name]
    monkeypatch.undo()
    monkeypatch.setattr(os, "fsync", fail)  # a failure while the data goes to disk
    with pytest.raises(type(failure)):
        atomic_files.write_bytes(str(target), b"new content")
    assert target.read_text() == "previous content" and listing(tmp_path) == [target.name]


def test_the_data_is_on_disk_before_the_rename(tmp_path, monkeypatch):
    calls = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (calls.append("replace"), real_replace(a, b))[1])
    atomic_files.write_text(str(tmp_path / "a"), "x")
    atomic_files.copy_file(str(tmp_path / "a"), str(tmp_path / "b"))
    with atomic_files.replacing(str(tmp_path / "c")) as tmp:
        with open(tmp, "w") as f:
            f.write("y")
    assert calls == ["fsync", "replace"] * 3


def test_write_if_changed_leaves_an_unchanged_file_alone(tmp_path):
    target = tmp_path / "gen" / "op_definitions.inc"
    assert atomic_files.write_text_if_changed(str(target), "one\n") is True
    stamp = target.stat().st_mtime_ns
    inode = target.stat().st_ino
    assert atomic_files.write_text_if_changed(str(target), "one\n") is False
    assert (target.stat().st_mtime_ns, target.stat().st_ino) == (stamp, inode)
    assert atomic_files.write_text_if_changed(str(target), "two\n") is True
    assert target.read_text() == "two\n"


def test_a_copy_keeps_the_permission_bits(tmp_path):
    tool = tmp_path / "tf_ge_custom_om_runner"
    tool.write_bytes(b"\x7fELF tool")
    tool.chmod(0o755)
    dest = tmp_path / "_lib" / "tf_ge_custom_om_runner"
    atomic_files.copy_file(str(tool), str(dest))
    assert dest.read_bytes() == b"\x7fELF tool"
    assert stat.S_IMODE(dest.stat().st_mode) == 0o755
    with pytest.raises(OSError):
        atomic_files.copy_file(str(tmp_path / "missing"), str(dest))
    assert dest.read_bytes() == b"\x7fELF tool" and listing(dest.parent) == [dest.name]


def test_replacing_gives_a_producer_a_fresh_path_and_publishes_it_whole(tmp_path):
    target = tmp_path / "libtf_ge_custom_ops.so"
    target.write_bytes(b"old library")
    with atomic_files.replacing(str(target)) as tmp:
        assert not os.path.exists(tmp) and os.path.dirname(os.path.dirname(tmp)) == str(tmp_path)
        assert os.path.basename(tmp) == target.name  # numpy.save keeps a .npy name as it is
        with open(tmp, "wb") as f:
            f.write(b"new library")
        os.chmod(tmp, 0o755)  # the producer's own bits (a linker's) are kept
        assert target.read_bytes() == b"old library"  # nothing visible before the end
    assert target.read_bytes() == b"new library"
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert listing(tmp_path) == [target.name]


@pytest.mark.parametrize("produce", ["fails", "writes nothing"])
def test_a_producer_that_fails_leaves_the_target_as_it_was(tmp_path, produce):
    target = tmp_path / "out.npy"
    target.write_bytes(b"before")
    with pytest.raises((RuntimeError, OSError)):
        with atomic_files.replacing(str(target)) as tmp:
            if produce == "fails":
                with open(tmp, "wb") as f:
                    f.write(b"half")
                raise RuntimeError("the linker failed")
    assert target.read_bytes() == b"before" and listing(tmp_path) == ["out.npy"]


def test_publish_moves_a_finished_file_with_the_bits_asked_for(tmp_path, monkeypatch):
    staged = tmp_path / ".staging" / "model.om"
    staged.parent.mkdir()
    staged.write_bytes(b"om written by a tool")
    staged.chmod(0o600)
    calls = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd))[1])
    target = tmp_path / "model.om"
    assert atomic_files.publish(str(staged), str(target), 0o644) == str(target)
    assert calls == ["fsync"] and target.read_bytes() == b"om written by a tool"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644 and not staged.exists()
