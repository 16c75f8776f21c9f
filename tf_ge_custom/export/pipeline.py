"""``export()``: a model to a frozen ``.pb``, and on to ``.air`` and ``.om``.

Order of work, cheapest refusal first:
  1. options by what they say alone (:mod:`tf_ge_custom.export.options`: target, SoC, the
     syntax of the input shape and the dynamic options, the options against the model
     path's kind), the output folder, ATC options, the input files and the modules to
     import, and, for AIR/OM, the tools: a missing ``atc`` or AIR tool is reported before
     minutes go into freezing; nothing of this imports TensorFlow, so a mistake is refused
     in a fraction of a second (``benchmarks/bench_cli_refusals.py``);
  2. TensorFlow (``loading TensorFlow...``, then a line on every silence of the loading and
     freezing: tf_ge_custom/_heartbeat.py), the ``imports`` (a Keras model's own layer
     classes), freezing and the graph checks, then the report (inputs, outputs, op counts);
  3. for AIR/OM: the input shapes (an unknown dim with no shape or dynamic option is refused
     here, naming the input and the options that fix it) and our OPP root's deliverables;
  4. the ``.pb`` and its record are written to a staging folder, verified in a fresh process,
     then moved into place; then the AIR tool, then ``atc``, each product moved into place
     only when complete. ``dry_run`` stops after 3 and prints every command instead.
"""
import os
import sys
from typing import NamedTuple, Optional

from tf_ge_custom import opp
from tf_ge_custom.errors import ExportError, MissingToolchainError
from tf_ge_custom.export.cann_tools import atc as atc_cli
from tf_ge_custom.export.cann_tools import air_tool as air_cli
from tf_ge_custom.export import arrays, options, staging
from tf_ge_custom.export.cann_tools import input_shapes as shapes
from tf_ge_custom.export.cann_tools import toolchain
from tf_ge_custom.export.cann_tools.process import command_line, run_tool

TARGETS, ROUTES = options.TARGETS, options.ROUTES
known_soc = options.known_soc


class ExportResult(NamedTuple):
    record: object  # GraphRecord
    files: dict  # {"pb", "record", "air", "air_log", "om", "atc_log"}: paths written
    commands: list  # the tool command lines (run, or printed in a dry run)
    verification: Optional[object]  # verify.Verification, or None
    route: str  # "pb" or "air" (how the OM was made), "" for --to pb


def _normalize_atc_options(options):
    return [o if o.startswith("-") else "--" + o for o in (options or ())]


class _Plan(object):
    """What the AIR/OM steps will run, settled before any freezing."""

    def __init__(self, to, via, env, dry_run, notes):
        self.atc = None
        self.air_tool = None
        self.route = ""
        if to == "pb":
            return
        if to == "om":
            try:
                self.atc = toolchain.find_atc(env)
            except MissingToolchainError as e:
                if not dry_run:
                    raise
                notes.append(str(e))
                self.atc = "atc"
        air_tool = toolchain.find_air_tool(env)
        self.route = "air" if to == "air" else (via or ("air" if air_tool else "pb"))
        if self.route == "air":
            try:
                self.air_tool = toolchain.require_built_tool(air_tool, "AIR tool", toolchain.AIR_TOOL_ENV)
                toolchain.require_cann_environment("AIR tool", env)
            except MissingToolchainError as e:
                if not dry_run:
                    raise
                notes.append(str(e))
                self.air_tool = air_tool or toolchain.AIR_TOOL_NAME


def _input_files_problem(specs):
    """Why an ``inputs`` entry names no readable file ("" when each does): before TensorFlow."""
    from tf_ge_custom import _files as files

    for spec in specs or ():
        _, sep, path = spec.partition("=")
        path = path if sep else spec
        try:
            files.regular_file_size(path)
        except files.FileProblem as e:
            return "cannot read input file: %s" % e
        problem = arrays.npy_problem(path)  # a header that disagrees with the file's size
        if problem:
            return "input file " + problem
    return ""


def import_modules(names):
    """Import each of ``names`` (a module name, found on the Python path or in the working
    directory, or the path of a ``.py`` file), as ``--import`` asks: what a Keras model's own
    registered classes need before the model loads. Raises ExportError naming the module."""
    import importlib
    import importlib.util

    from tf_ge_custom import _lifecycle

    _working_folder_last(_lifecycle.working_directory())
    for name in names or ():
        try:
            if name.endswith(".py") or os.sep in name:
                path = _lifecycle.absolute(name, "--import")
                if not os.path.isfile(path):
                    raise ExportError("--import %s: no such file" % name)
                module_name = os.path.splitext(os.path.basename(path))[0]
                spec = importlib.util.spec_from_file_location(module_name, path)
                module = importlib.util.module_from_spec(spec)
                sys.modules[module_name] = module
                spec.loader.exec_module(module)
            else:
                importlib.import_module(name)
        except ExportError:
            raise
        except ImportError as e:
            raise ExportError("--import %s: cannot import it: %s" % (name, e),
                              fix="pass a module on the Python path, in the working directory, or "
                                  "the path of its .py file")
        except Exception as e:  # the user's module failed while it ran
            raise ExportError("--import %s: importing it raised %s: %s" % (name, type(e).__name__, e))


def _working_folder_last(cwd):
    """Put the working folder ``cwd`` last on ``sys.path`` (once): the user's modules are found
    there, after the standard library and the installed packages, so that a ``json.py`` or
    ``numpy.py`` beside the model never replaces them. ``python -m`` puts it first (as ``''``
    or its path): moved to the end too, for what is imported from here on."""
    if not cwd:
        return
    here = [p for p in sys.path if isinstance(p, str) and (os.path.abspath(p) if p else cwd) == cwd]
    sys.path[:] = [p for p in sys.path if p not in here] + [cwd]


def _modules_problem(names):
    """Why an ``imports`` entry can be found nowhere ("" when each can): no code runs."""
    import importlib.util

    from tf_ge_custom import _lifecycle

    cwd = _lifecycle.working_directory()
    for name in names or ():
        if name.endswith(".py") or os.sep in name:
            if not os.path.isfile(_lifecycle.absolute(name, "--import")):
                return "--import %s: no such file" % name
            continue
        top = name.split(".")[0]
        try:
            found = importlib.util.find_spec(top) is not None
        except (ImportError, ValueError):
            found = False
        if not found and not (cwd and (os.path.isfile(os.path.join(cwd, top + ".py"))
                                       or os.path.isdir(os.path.join(cwd, top)))):
            return ("--import %s: no module %s on the Python path or in the working directory"
                    % (name, top))
    return ""


def export(model, to="pb", output=None, soc=None, via=None, input_shape=None, signature=None,
           tags=None, outputs=None, checkpoint=None, inputs=None, dynamic_batch_size=None,
           dynamic_dims=None, atc_options=(), verify=True, dry_run=False, rtol=None, atol=None,
           out=None, env=None, opp_root=None, force=False, imports=()):
    """Export ``model`` to ``output``.pb (``to="pb"``), ``.air`` or ``.om``.

    Args:
      model: see :func:`tf_ge_custom.export.freeze` (path or function).
      to: "pb", "air" or "om". output: the path prefix of every file written.
      soc: the target SoC (``--soc_version``), required for "om".
      via: "air" or "pb": how the OM is made (default: AIR when the AIR tool is built).
      input_shape: ATC's ``name:d,d;name:d`` (default: the recorded input shapes).
      signature, tags, outputs, checkpoint: see :func:`freeze`.
      inputs: ``.npy`` files for the verification, in input order or ``name=FILE``.
      dynamic_batch_size, dynamic_dims: ATC's dynamic options. atc_options: extra ATC
      options (``--name=value``). verify: compare the ``.pb`` with the source model in a
      fresh process. dry_run: freeze and check, print the commands, write nothing.
      force: replace existing outputs that no export record shows this package wrote.
      out: where the report goes (default stdout); env: the environment for the tools.
      imports: modules to import before the model loads (see :func:`import_modules`).

    Returns an :class:`ExportResult`. Raises ExportError, VerificationError,
    MissingToolchainError (a tool or deliverable is missing) or ExternalToolError.
    """
    out = out or sys.stdout
    env = dict(os.environ if env is None else env)
    opp_root = opp_root or opp.opp_root()
    # the options by what they say alone, the model path's kind included: before anything else
    options.check_export(model, to=to, soc=soc, via=via, input_shape=input_shape, signature=signature,
                         tags=tags, outputs=outputs, checkpoint=checkpoint,
                         dynamic_batch_size=dynamic_batch_size, dynamic_dims=dynamic_dims,
                         atc_options=atc_options, rtol=rtol, atol=atol)
    if output is None:
        raise ExportError("an output path prefix is needed: --output PREFIX (writes PREFIX.pb, ...)")
    problem = _input_files_problem(inputs) or _modules_problem(imports)
    if problem:
        raise ExportError(problem)
    prefix = staging.output_prefix(output, to, force=force, create=not dry_run)
    extra = atc_cli.parse_extra_options(_normalize_atc_options(atc_options)) if to == "om" else {}
    dynamic = atc_cli.dynamic_options(extra, dynamic_batch_size, dynamic_dims)
    shapes.dynamic_choice(dynamic)
    notes = []
    plan = _Plan(to, via, env, dry_run, notes)

    from tf_ge_custom import _lifecycle

    with _lifecycle.doing("loading and freezing the model"), _beating(out, "freezing the model") as beat:
        from tf_ge_custom import _tensorflow

        if "tensorflow" not in sys.modules:  # the command line: its process has none yet
            beat.say("loading TensorFlow...")
            beat.doing("loading TensorFlow")
        _tensorflow.require()  # a TensorFlow that cannot be imported: one line, before anything else
        beat.doing("freezing the model", restart=True)
        import_modules(imports)
        from tf_ge_custom.export.freezing import freeze
        from tf_ge_custom.export.checking.graph_checks import report

        frozen = freeze(model, signature=signature, tags=tags, outputs=outputs, checkpoint=checkpoint)
    with frozen:
        record = frozen.record
        _say(out, report(record))
        input_shapes = out_nodes = None
        if to != "pb":
            input_shapes = shapes.resolve_input_shapes(record.inputs, input_shape, dynamic)
            out_nodes = [t.name for t in record.outputs]
            kernels = record.kernels()  # (op type, dtype) of every kept node
            if record.add_custom_nodes:
                problems = toolchain.deliverable_problems(opp_root, soc if to == "om" else None, kernels)
                if problems and not dry_run:
                    raise MissingToolchainError("; ".join(problems))
                notes.extend(problems)
        feeds = arrays.load_inputs(record.inputs, inputs) if inputs else None
        files = {"pb": prefix + ".pb", "record": prefix + ".json"}
        commands = _commands(plan, to, prefix, soc, input_shapes, out_nodes, dynamic,
                             _normalize_atc_options(atc_options), opp_root, env)
        if dry_run:
            _say(out, ["dry run: nothing written; would write %s and %s%s" % (
                files["pb"], files["record"], " (after verifying it in a fresh process)" if verify else "")]
                 + ["note: " + n for n in notes] + ["would run: " + line for _, _, line in commands])
            return ExportResult(record, {}, [line for _, _, line in commands], None, plan.route)
        return _run(frozen, plan, to, prefix, files, commands, feeds, verify, rtol, atol, out, env, opp_root)


def _beating(out, what):
    """A line on every silence of the step (tf_ge_custom/_heartbeat.py), on the report's stream."""
    from tf_ge_custom import _heartbeat

    return _heartbeat.Heartbeat(_heartbeat.stream_writer(out), what)


def _say(out, lines):
    for line in lines:
        out.write(line + "\n")
    out.flush()


def _commands(plan, to, prefix, soc, input_shapes, out_nodes, dynamic, extra, opp_root, env):
    """``[(step, argv, printable line)]`` of the tool runs, with the final paths."""
    tool_env = toolchain.tool_environment(opp_root, env)
    changes = {toolchain.CUSTOM_OPP_PATH_VAR: tool_env[toolchain.CUSTOM_OPP_PATH_VAR]}
    commands = []
    if to in ("air", "om") and plan.route == "air":
        argv = air_cli.air_tool_command(plan.air_tool, prefix + ".pb", prefix + ".air", input_shapes, out_nodes)
        commands.append(("air", argv, command_line(argv, changes)))
    if to == "om":
        if plan.route == "air":
            argv = atc_cli.atc_command(plan.atc, prefix + ".air", atc_cli.FRAMEWORK_AIR, prefix, soc,
                                       input_shapes, None, dynamic, extra)
        else:
            argv = atc_cli.atc_command(plan.atc, prefix + ".pb", atc_cli.FRAMEWORK_TENSORFLOW, prefix, soc,
                                       input_shapes, out_nodes, dynamic, extra)
        commands.append(("om", argv, command_line(argv, changes)))
    return commands


def _run(frozen, plan, to, prefix, files, commands, feeds, verify, rtol, atol, out, env, opp_root):
    from tf_ge_custom import _lifecycle
    from tf_ge_custom.export.checking.verify import verify as verify_graph

    written = {}
    verification = None
    tool_env = toolchain.tool_environment(opp_root, env)
    with staging.Staging(os.path.dirname(prefix)) as stage:
        with open(stage.path("model.pb"), "wb") as f:
            f.write(frozen.serialized())
        with open(stage.path("model.json"), "w") as f:
            f.write(frozen.record.dumps())
        if verify:
            with _lifecycle.doing("verifying the frozen graph in a fresh process"), \
                    _beating(out, "verifying the frozen graph in a fresh process"):
                verification = verify_graph(frozen, stage.path("model.pb"), feeds, rtol, atol)
            _say(out, verification.lines())
        written["pb"] = stage.publish("model.pb", files["pb"])
        written["record"] = stage.publish("model.json", files["record"])
        _say(out, ["wrote %s and %s" % (written["pb"], written["record"])])
        for step, argv, line in commands:
            if step == "air":
                air = stage.path("model.air")
                argv = [air if a == prefix + ".air" else a for a in argv]
                written["air_log"] = prefix + ".air.log"
                _say(out, ["running: " + line])
                with _lifecycle.doing("running the AIR tool"), _beating(out, "running the AIR tool"):
                    run_tool(argv, written["air_log"], "air-tool", env=tool_env)
                if not os.path.isfile(air):
                    raise MissingToolchainError("the AIR tool exited with status 0 but wrote no %s" % air)
                written["air"] = stage.publish(air, prefix + ".air")
                _say(out, ["wrote " + written["air"]])
            else:
                staged = stage.path("model")
                argv = [("--output=" + staged) if a == "--output=" + prefix else a for a in argv]
                written["atc_log"] = prefix + ".atc.log"
                _say(out, ["running: " + line])
                with _lifecycle.doing("running atc"), _beating(out, "running atc"):
                    run_tool(argv, written["atc_log"], "atc", env=tool_env)
                written["om"] = stage.publish(atc_cli.written_om(staged), prefix + ".om")
                _say(out, ["wrote %s (atc log: %s)" % (written["om"], written["atc_log"])])
    return ExportResult(frozen.record, written, [line for _, _, line in commands], verification, plan.route)
