"""A model's files that TensorFlow or Keras cannot read, said in one line that names them.

TensorFlow reports a truncated variables file as ``IndexError: Read less bytes than
requested``, a damaged checkpoint index as an ``OpError`` whose first line is "Graph execution
error:" and whose cause is buried below the node it ran, and a damaged ``.keras`` archive as
"File not found". :func:`reason` takes the line that says what is wrong out of such an error;
:func:`variables_message` names the files of a checkpoint (a TF1 prefix, or a SavedModel's
``variables/variables``) and what the error means for them; :func:`keras_member_problem` names
the member of a ``.keras`` archive that cannot be read.
"""
import glob
import os
import zipfile

# TensorFlow's words for a damaged checkpoint file, and what they mean for the user's files.
_MEANINGS = (
    ("Read less bytes than requested", "a data file is shorter than its index says (truncated?)"),
    ("sstable", "the index file is not a checkpoint index (truncated or damaged?)"),
    ("corrupted", "a file is damaged (its checksum does not match)"),
    ("checksum", "a file is damaged (its checksum does not match)"),
    ("Unsuccessful TensorSliceReader", "the index file is missing or unreadable"),
    ("No such file or directory", "a file is missing"),
)
_NOISE = ("Graph execution error", "Detected at node", "Node:", "[[{{node", "Original stack trace", "File \"",
          "defined at (most recent call last)")


def reason(error):
    """The line of ``error`` (a TensorFlow or Python exception) that says what is wrong."""
    for line in str(error).splitlines():
        line = line.strip()
        if line and not line.startswith(_NOISE):
            return line[:300]
    return type(error).__name__


def checkpoint_files(prefix):
    """The files of the checkpoint ``prefix`` that exist (its ``.index`` and ``.data-*``)."""
    return sorted(p for p in [prefix + ".index"] + glob.glob(glob.escape(prefix) + ".data-*") if os.path.exists(p))


def variables_message(prefix, error):
    """``checkpoint PREFIX (PREFIX.index, PREFIX.data-00000-of-00001): <what it means>: <reason>``."""
    why = reason(error)
    meaning = next((m for words, m in _MEANINGS if words in why), "")
    present = checkpoint_files(prefix)
    return "%s (%s)%s: %s" % (prefix, ", ".join(os.path.basename(p) for p in present) or "no files",
                              (": " + meaning) if meaning else "", why)


def keras_member_problem(path):
    """Why the ``.keras`` archive ``path`` or one of its members cannot be read ("" when nothing
    is found wrong here): not a zip archive, members that declare more than a diagnosis reads
    (a zip bomb), a member whose bytes fail their CRC, an HDF5 member that h5py cannot open.

    Nothing is inflated past :func:`tf_ge_custom._zip_members.cap_for` the archive, and no member
    is read whole into memory: the diagnosis never costs more than Keras' own refusal.
    """
    from tf_ge_custom import _zip_members as members

    if not path.endswith(".keras") or not os.path.isfile(path):
        return ""
    if not zipfile.is_zipfile(path):
        return "%s is not a .keras archive (a zip file): truncated or damaged" % path
    cap = members.cap_for(path)
    try:
        with zipfile.ZipFile(path) as archive:
            too_large = members.declared_problem(archive, cap)
            if too_large:
                return "%s: %s" % (path, too_large)
            bad = members.first_damaged(archive, cap)
            if bad is not None:
                return "%s: its member %s is damaged (its CRC does not match)" % (path, bad)
            for name in archive.namelist():
                if name.endswith(".h5"):
                    with members.spooled(archive, name, cap) as copy:
                        problem = _h5_problem(copy)
                    if problem:
                        return "%s: its member %s cannot be read: %s" % (path, name, problem)
    except members.TooLarge as e:
        return "%s: %s" % (path, e)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError) as e:
        return "%s is not a readable .keras archive: %s" % (path, reason(e))
    return ""


def _h5_problem(copy):
    try:
        import h5py
    except ImportError:
        return ""
    try:
        with h5py.File(copy, "r") as f:
            f.visit(lambda name: None)  # every link followed: a damaged B-tree shows here
    except (OSError, RuntimeError, ValueError, KeyError) as e:
        return reason(e)
    return ""
