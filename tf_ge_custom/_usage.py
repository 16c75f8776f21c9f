"""Usage errors of ``tf-ge-custom``: one line, a "did you mean", and where the help is.

argparse prints its whole usage block before each error and checks the required options
before it reports the unknown ones, so ``export m.keras --ouput out`` said "--output is
required". :class:`CommandParser` (an ``argparse.ArgumentParser``) instead prints::

    tf-ge-custom export: error: unknown option --ouput (did you mean --output?); see tf-ge-custom export --help

and exits with status 2: an unknown option is reported first, with the close spellings of
the parser's own options (the standard library's ``difflib``), a mistyped command or choice
with the close choices, then anything else argparse refuses, one line each. ``--help``
itself is argparse's, unchanged. Standard library only, no TensorFlow.
"""
import argparse
import difflib
import re

USAGE_STATUS = 2  # errors.EXIT_USAGE: a command line the command refuses

# argparse's "invalid choice" message (Python 3.7 to 3.13 quote the choices differently)
_INVALID_CHOICE = re.compile(r"^argument (?P<arg>[^:]+): invalid choice: '?(?P<value>.*?)'? "
                             r"\(choose from (?P<choices>.*)\)$")


def close_matches(word, candidates, n=3):
    """The spellings in ``candidates`` closest to ``word``: those of the best ``difflib`` ratio
    (>= 0.6, as ``difflib.get_close_matches`` takes), at most ``n``, in the candidates' order
    (so that ties, ``Ascend910B`` against ``Ascend910B1``...``B4``, come out the same every time)."""
    candidates = list(dict.fromkeys(candidates))
    found = set(difflib.get_close_matches(word, candidates, n=len(candidates) or 1, cutoff=0.6))
    if not found:
        return []
    scores = {c: difflib.SequenceMatcher(None, word, c).ratio() for c in found}
    best = max(scores.values())
    return [c for c in candidates if c in found and scores[c] >= best - 1e-9][:n]


def did_you_mean(word, candidates):
    """`` (did you mean X?)`` / `` (did you mean X or Y?)``, or "" when nothing is close."""
    found = close_matches(word, candidates)
    if not found:
        return ""
    return " (did you mean %s?)" % (found[0] if len(found) == 1 else
                                    "%s or %s" % (", ".join(found[:-1]), found[-1]))


class CommandParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (see the module's docstring)."""

    def error(self, message):
        self.exit(USAGE_STATUS, "%s: error: %s; see %s --help\n"
                  % (self.prog, _with_suggestion(message), self.prog))

    def option_strings(self):
        """Every option string this parser accepts (``--output``, ``-o``, ``--help``...)."""
        return [s for action in self._actions for s in action.option_strings]

    def refuse_extras(self, extras):
        """Exit with the usage error for arguments no option or positional took: the first
        unknown option (and what it may have meant), else the first stray argument."""
        options = [a for a in extras if a.startswith("-") and a != "-"]
        if options:
            name = options[0].split("=", 1)[0]
            self.error("unknown option %s%s" % (name, did_you_mean(name, self.option_strings())))
        self.error("unexpected argument %r" % extras[0])

    def parse_args(self, args=None, namespace=None):
        """As argparse's, but unknown options come before missing required ones: with the
        required flags relaxed for the parse, the extras are looked at first, then what is
        required and missing is named as argparse would name it."""
        required = [a for a in self._actions if a.required]
        for action in required:
            action.required = False
        try:
            namespace, extras = self.parse_known_args(args, namespace)
        finally:
            for action in required:
                action.required = True
        if extras:
            self.refuse_extras(extras)
        missing = [a for a in required if getattr(namespace, a.dest, None) is None]
        if missing:
            self.error("the following arguments are required: %s" % ", ".join(
                "/".join(a.option_strings) if a.option_strings else a.metavar or a.dest
                for a in missing))
        return namespace


def _with_suggestion(message):
    """argparse's ``message``, with the close choices of an invalid choice."""
    m = _INVALID_CHOICE.match(message)
    if not m:
        return message
    choices = [c.strip().strip("'\"") for c in m.group("choices").split(",")]
    value = m.group("value")
    hint = did_you_mean(value, choices)
    if m.group("arg") == "COMMAND":
        return "unknown command %r%s; the commands are: %s" % (value, hint, ", ".join(choices))
    return "argument %s: invalid choice %r%s; choose from %s" % (
        m.group("arg"), value, hint, ", ".join(choices))

