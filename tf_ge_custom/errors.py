"""The package's named exceptions: one hierarchy for the library and the command line.

Each derives from :class:`TfGeCustomError` and from the builtin that callers already catch
for that kind of mistake, so ``except TypeError`` keeps working for a wrong dtype.
Messages say what was expected, what was found and what to do.

Every error also carries what the command line does with it (``tf_ge_custom/cli.py``
catches :class:`TfGeCustomError` in one place): ``exit_status`` (1 unless the class or the
raiser says otherwise; 2 for a command line the command refuses and for a missing tool) and
``fix``, the remedy printed on its own ``fix:`` line when the message does not already end
with one. Standard library only: ``setup.py`` imports this module.
"""

# The command line's exit statuses (docs of each command, and cli.py).
EXIT_FAILED = 1  # a refusal, a failed step, a FAIL
EXIT_USAGE = 2  # a command line the command refuses, or a missing tool / deliverable


class TfGeCustomError(Exception):
    """Base of every error this package raises on purpose.

    ``fix`` and ``exit_status`` may be given by keyword to any subclass that passes its
    keywords on (``raise ExportError("...", fix="pass --input-shape")``).
    """

    exit_status = EXIT_FAILED
    fix = ""
    # AutoGraph (tensorflow/python/autograph/impl/api.py, _attach_error_metadata) leaves an
    # exception that has this attribute as it is: a user's tf.function sees the error raised,
    # with its type and its one-line message, not a StagingError.
    ag_pass_through = True

    def __init__(self, *args, **kwargs):
        fix = kwargs.pop("fix", None)
        exit_status = kwargs.pop("exit_status", None)
        if kwargs:
            raise TypeError("unexpected keyword arguments: %s" % ", ".join(sorted(kwargs)))
        super(TfGeCustomError, self).__init__(*args)
        if fix is not None:
            self.fix = fix
        if exit_status is not None:
            self.exit_status = exit_status


class UsageError(TfGeCustomError, ValueError):
    """A command line the command refuses: an unknown value, options that cannot go
    together, a path that cannot be what the option wants. Exit status 2, nothing ran."""

    exit_status = EXIT_USAGE


class WorkingDirectoryError(TfGeCustomError):
    """The working directory was deleted (or moved) under the command, so a relative path
    given to it names nothing."""


class OpLibraryError(TfGeCustomError, ImportError):
    """The TensorFlow op library is missing, unloadable, or built for another TensorFlow."""


class TensorFlowImportError(TfGeCustomError, ImportError):
    """TensorFlow itself cannot be imported here (not installed, broken, or refused memory by a
    limit such as ``ulimit -v``). ``details`` is the whole traceback, which ``--verbose`` shows."""

    def __init__(self, message, details="", **kwargs):
        self.details = details
        super(TensorFlowImportError, self).__init__(message, **kwargs)


# The errors of an op's arguments are raised inside a user's tf.function, Keras layer and XLA
# cluster. They take the message alone (Exception's own __init__): AutoGraph where it has no
# pass-through, and Keras when it adds the layer's name to the message, re-create an exception
# of the same type from its message, and only for such a type (pyct/error_utils.py,
# create_exception; keras/src/utils/traceback_utils.py). So no fix= or exit_status= here.


class DTypeError(TfGeCustomError, TypeError):
    """An argument's dtype is not one the op accepts, or the two arguments disagree."""

    __init__ = Exception.__init__


class ShapeError(TfGeCustomError, ValueError):
    """The arguments' shapes cannot be combined (not broadcast-compatible)."""

    __init__ = Exception.__init__


class InputError(TfGeCustomError, TypeError):
    """An argument cannot be converted to a tensor at all (``None``, an arbitrary object), or
    an op attribute's value is not of its type (``alpha="0.1"``, a tensor)."""

    __init__ = Exception.__init__


class AttrError(TfGeCustomError, ValueError):
    """An op attribute's value is outside the range ``op_def.py`` gives it."""

    __init__ = Exception.__init__


class CommandError(TfGeCustomError, RuntimeError):
    """Another program could not be started, did not finish in time, or failed
    (:func:`tf_ge_custom._processes.run`).

    ``argv`` is its argument list, ``returncode`` its exit status (None when it never
    started or was stopped), ``tail`` the last lines of its output and ``reason`` one of
    :attr:`REASONS`.
    """

    REASONS = ("not started", "timed out", "failed")

    def __init__(self, message, argv=(), returncode=None, tail="", reason="failed", **kwargs):
        self.argv = tuple(argv)
        self.returncode = returncode
        self.tail = tail
        self.reason = reason
        super(CommandError, self).__init__(message, **kwargs)


# --- NPU session / device configuration and the NPU stack ---


class NpuOptionError(TfGeCustomError, ValueError):
    """An NPU option is unknown, outside its allowed values, or contradicts another option."""


class NpuOptionTypeError(TfGeCustomError, TypeError):
    """An NPU option has the wrong Python type (TF Adapter would silently read a default)."""


class NpuStackError(TfGeCustomError, ImportError):
    """A part of the Ascend NPU stack (``npu_bridge``, ``npu_device``) cannot be imported,
    or it cannot open the NPU device."""


class NpuPlacementWarning(RuntimeWarning):
    """The package's ops will probably not be placed on the NPU (they run on their CPU
    kernels)."""


# --- kernel manifests and the kernel build ---


class ManifestError(TfGeCustomError, ValueError):
    """A kernel manifest (``kernels/<SoC>/manifest.json``) or its binaries are not valid.

    ``kind`` classifies the refusal as docs/kernel-manifest.md does: ``io``, ``syntax``,
    ``version``, ``outdated`` (a set of another release's entry naming: not damaged, not
    used), ``schema``, ``layout``, ``mismatch`` or ``checksum``.
    """

    def __init__(self, kind, message, path=None, **kwargs):
        self.kind = kind
        self.path = path
        text = "%s: %s" % (path, message) if path else message
        super(ManifestError, self).__init__("[%s] %s" % (kind, text), **kwargs)


class KernelBuildError(TfGeCustomError, RuntimeError):
    """Building the NPU kernels failed: a compiler stage failed or emitted something unexpected."""


class BuilderSetupError(TfGeCustomError, RuntimeError):
    """``tf-ge-custom setup-builder`` could not make a builder venv that passes the GE
    library's check (a Python >= 3.9 importing tf_ge_custom and triton)."""


class KernelCacheError(TfGeCustomError, RuntimeError):
    """The per-user kernel cache cannot be used: no folder for it, a folder that cannot be
    written, or an entry asked for under another toolchain's key (docs/kernels.md)."""


class ToolchainError(KernelBuildError):
    """A tool the kernel build needs is missing; ``missing`` names each one."""

    def __init__(self, message, missing=(), **kwargs):
        self.missing = tuple(missing)
        super(ToolchainError, self).__init__(message, **kwargs)


# --- offline export: frozen graph, AIR, OM, and running an OM ---


class ExportError(TfGeCustomError, ValueError):
    """A model cannot be exported as asked: a missing or unreadable model, an unknown
    signature, tag or node, a graph that fails its checks, an option out of range."""


class VerificationError(ExportError):
    """The frozen graph, run in a fresh process, does not give the source model's outputs."""


class ExternalToolError(CommandError):
    """``atc``, the AIR tool or the OM runner failed; the message ends with its log's tail.

    ``returncode`` is the tool's exit status, ``log_path`` the full log beside the result.
    """

    def __init__(self, message, returncode=None, log_path=None, tail="", argv=(), **kwargs):
        self.log_path = log_path
        super(ExternalToolError, self).__init__(message, argv, returncode, tail, "failed", **kwargs)


class MissingToolchainError(TfGeCustomError, RuntimeError):
    """A tool or deliverable the step needs (``atc``, the AIR tool, the GE library) is not
    here; the message says what to install or ``source``. Exit status 2."""

    exit_status = EXIT_USAGE
