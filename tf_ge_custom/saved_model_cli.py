"""``python -m tf_ge_custom.saved_model_cli``: TensorFlow's ``saved_model_cli`` with the
package's ops (``AddCustom``, ``LeakyReluCustom``).

TensorFlow's own ``saved_model_cli run`` (and ``show --all``, ``scan``...) imports the
SavedModel's graph in a process that never loaded this package's op library, so a model
holding ``AddCustom`` fails there with "Op type not registered 'AddCustom'". This wrapper
registers every op of the package first (the checked op library, :func:`tf_ge_custom._library.ensure_loaded`),
then hands every argument, unchanged, to the ``saved_model_cli`` of the TensorFlow installed
(``tensorflow.python.tools.saved_model_cli``, on TensorFlow 1.15 as on 2.x)::

    python -m tf_ge_custom.saved_model_cli run --dir DIR --tag_set serve \\
        --signature_def serving_default --input_exprs 'x=[[1.0,2.0]];y=[10.0,20.0]'

Its output and exit status are ``saved_model_cli``'s; an op library that cannot be loaded is
refused as the ``tf-ge-custom`` commands refuse it (``error:`` and ``fix:`` lines, exit status 1). docs/deploy.md names the other routes.
"""
import sys

PROG = "saved_model_cli"


def main(argv=None):
    from tf_ge_custom import _library, cli
    from tf_ge_custom.errors import OpLibraryError

    try:
        _library.ensure_loaded()
    except OpLibraryError as e:  # in the command line's shape: error: and fix: lines
        sys.stderr.write(cli.error_lines("python -m tf_ge_custom.saved_model_cli", e))
        return e.exit_status
    from tensorflow.python.tools import saved_model_cli

    sys.argv = [PROG] + list(sys.argv[1:] if argv is None else argv)
    return saved_model_cli.main()


if __name__ == "__main__":
    sys.exit(main())
