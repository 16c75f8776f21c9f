"""Writes tests/npu/adapter_options.json: TF Adapter's option names and types, read off its
public sources (hicann/tensorflow), for the option tests' oracle.

  python tests/npu/generate_adapter_options.py GIT_DIR [COMMIT]   (default: HEAD)

GIT_DIR is a git snapshot of hicann/tensorflow (a bare clone is enough). What is read:
  - tf_adapter/util/npu_attrs.cc: every ``params.at("KEY").F()`` in
    ``NpuAttrs::SetNpuOptimizerAttr`` and in the ``GetPassOptions`` that reads the
    NpuOptimizer's parameter_map: KEY -> the AttrValue field F (b, i or s) TF1 reads;
  - tf_adapter_2.x/python/npu_device/configs/*.py: the ``self.NAME = ...`` assignments of
    ``NpuConfig.__init__`` and of the config classes it nests, as dotted fields, each with
    its default and its list of accepted values where the source gives literals.
The fixture holds names, field letters and literal values only (no code), with the commit
and files they were read from. tests/npu/test_adapter_options.py checks it is current.
"""
import ast
import json
import pathlib
import re
import subprocess
import sys

TF1_SOURCE = "tf_adapter/util/npu_attrs.cc"
TF2_CONFIGS = "tf_adapter_2.x/python/npu_device/configs"
FIXTURE = pathlib.Path(__file__).resolve().parent / "adapter_options.json"
_READ = re.compile(r'params\.at\("([^"]+)"\)\.(b|i|s)\(\)')


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo)] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, check=True).stdout


def _function_bodies(source, signature):
    """The text of each definition starting with ``signature`` up to its closing brace at
    the start of a line."""
    bodies, start = [], 0
    while True:
        i = source.find(signature, start)
        if i < 0:
            return bodies
        j = source.index("\n}\n", i)
        bodies.append(source[i:j])
        start = j


def tf1_keys(source):
    """{key: AttrValue field} of the parameter_map keys TF1's adapter reads."""
    bodies = _function_bodies(source, "Status NpuAttrs::SetNpuOptimizerAttr(")
    # GetPassOptions(const GraphOptimizationPassOptions &) reads the same parameter_map.
    bodies += [b for b in _function_bodies(source, "NpuAttrs::GetPassOptions(const GraphOptimizationPassOptions")]
    if not bodies:
        raise ValueError("%s: SetNpuOptimizerAttr not found" % TF1_SOURCE)
    keys = {}
    for body in bodies:
        for key, field in _READ.findall(body):
            if keys.setdefault(key, field) != field:
                raise ValueError("%s is read as .%s() and .%s()" % (key, keys[key], field))
    return dict(sorted(keys.items()))


def _literal(node):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return "<not a literal>"


def tf2_fields(config_sources):
    """{dotted field: {"kind", "default", "choices" | "replacement"}} of NpuConfig."""
    classes = {}
    for text in config_sources:
        for node in ast.parse(text).body:
            if isinstance(node, ast.ClassDef):
                classes[node.name] = node

    def walk(name, prefix):
        init = next(n for n in classes[name].body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
        out = {}
        for statement in init.body:
            if not (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call)):
                continue
            target, call = statement.targets[0], statement.value
            if not (isinstance(target, ast.Attribute) and isinstance(call.func, ast.Name)):
                continue
            field, kind = prefix + target.attr, call.func.id
            if kind == "OptionValue":
                out[field] = {"kind": "option", "default": _literal(call.args[0]),
                              "choices": _literal(call.args[1])}
            elif kind == "DeprecatedValue":
                keywords = {k.arg: _literal(k.value) for k in call.keywords}
                out[field] = {"kind": "deprecated", "choices": _literal(call.args[0]),
                              "replacement": keywords.get("replacement")}
            elif kind in classes:
                out.update(walk(kind, field + "."))
            else:
                raise ValueError("%s: %s is neither an option nor a config class" % (field, kind))
        return out

    return dict(sorted(walk("NpuConfig", "").items()))


def generate(repo, commit="HEAD"):
    commit = _git(repo, "rev-parse", commit + "^{commit}").strip()
    configs = sorted(p for p in _git(repo, "ls-tree", "--name-only", commit, TF2_CONFIGS + "/").split()
                     if p.endswith(".py"))
    return {
        "source": {"repository": "hicann/tensorflow", "commit": commit,
                   "tf1": TF1_SOURCE + " (NpuAttrs::SetNpuOptimizerAttr, GetPassOptions)",
                   "tf2": configs},
        "tf1_keys": tf1_keys(_git(repo, "show", "%s:%s" % (commit, TF1_SOURCE))),
        "tf2_fields": tf2_fields([_git(repo, "show", "%s:%s" % (commit, p)) for p in configs]),
    }


def dumps(fixture):
    return json.dumps(fixture, indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[1])
    FIXTURE.write_text(dumps(generate(*sys.argv[1:])))
    print("wrote %s" % FIXTURE)
