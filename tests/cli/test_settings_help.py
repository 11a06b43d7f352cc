"""Every flag that sets a layered setting says, in ``--help``, what decides it when it is not given: its
``REFINELAB_*`` variable, then its key in refinelab.toml, as the README and docs/design/runtime.md do (some
named neither: ``check --workers`` said "default: cores", ``solve --model`` only its variable)."""

from __future__ import annotations

import argparse

import pytest

from refinelab.cli import build_parser
from refinelab.runtime import SETTINGS


def layered_flags() -> list[tuple[str, str, str, str]]:
    """``(command, flag, variable, key)`` for every flag of every command that sets a setting."""
    parser = build_parser({})
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    settings = {s.name: s for s in SETTINGS}
    found = []
    for name, sub in commands.choices.items():
        for action in sub._actions:
            setting = settings.get(action.dest)
            if (name, action.dest) == ("run", "model"):  # run's --model names its actors, not the setting
                continue
            if setting is not None and "--" + setting.name.replace("_", "-") in action.option_strings:
                found.append((name, action.option_strings[0], setting.variable, setting.key))
    return found


def test_the_settings_flags_are_found() -> None:
    assert {("check", "--workers"), ("solve", "--model"), ("run", "--store")} <= {
        (c, f) for c, f, *_ in layered_flags()
    }


@pytest.mark.parametrize(("command", "flag", "variable", "key"), layered_flags())
def test_each_help_names_the_variable_and_the_file_key(command: str, flag: str, variable: str, key: str) -> None:
    (sub,) = [a for a in build_parser({})._actions if isinstance(a, argparse._SubParsersAction)]
    (action,) = [a for a in sub.choices[command]._actions if flag in a.option_strings]
    text = " ".join((action.help or "").split())
    table, _, name = key.rpartition(".")
    spelled = f"[{table}] {name}" if table else name
    assert f"${variable}" in text and f"{spelled} in refinelab.toml" in text, text


@pytest.mark.parametrize("command", ["run", "check", "solve", "ping", "recall-draft"])
def test_config_names_its_variable(command: str) -> None:
    (sub,) = [a for a in build_parser({})._actions if isinstance(a, argparse._SubParsersAction)]
    (action,) = [a for a in sub.choices[command]._actions if "--config" in a.option_strings]
    assert "$REFINELAB_CONFIG" in (action.help or "") and "refinelab.toml" in (action.help or "")
