"""``bodega --help`` speaks to users: every command and option explained, no source-code markup."""
from __future__ import annotations

import argparse
import re

from bodega.cli import build_parser

MARKUP = re.compile(r"``|`[^`]+`|\{doc\}|:(?:mod|func|class|meth|attr):|\bbodega\.[a-z_]+\.[a-z_]+|resolve\(")


def _parsers(parser: argparse.ArgumentParser, path: str = "bodega"):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                assert helps.get(name), f"{path} {name} has no one-line help"
                yield from _parsers(sub, f"{path} {name}")


def test_every_command_and_option_has_plain_help():
    problems = []
    for path, parser in _parsers(build_parser()):
        text = parser.format_help()
        problems += [f"{path}: markup {m.group()!r}" for m in MARKUP.finditer(text)]
        problems += [f"{path} {a.option_strings[-1]}: no help" for a in parser._actions
                     if a.option_strings and not a.help and not isinstance(a, argparse._HelpAction)]
    assert not problems, "\n".join(problems)


def test_the_markup_check_catches_markup():
    assert MARKUP.search("see :mod:`bodega.mlm.tune`") and MARKUP.search("the `tables` folder")
    assert not MARKUP.search("InCrediblAE TSV, or the records.jsonl of a bodega attack run")
