"""A wrong flag value is one line naming the flag, the value and the choices, and exit 2, for every
command (it was argparse's usage dump, 12 lines for ``run --benchmark``)."""

from __future__ import annotations

import argparse

import pytest

from refinelab.cli import build_parser, main


def choice_flags() -> list[tuple[str, str]]:
    """``(command, flag)`` for every option with fixed choices, in every command."""
    parser = build_parser({})
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    found = []
    for name, sub in commands.choices.items():
        for action in sub._actions:
            if action.choices and action.option_strings:
                found.append((name, action.option_strings[-1]))
    return found


def test_every_command_has_been_looked_at() -> None:
    commands = {command for command, _ in choice_flags()}
    assert {"run", "check", "report", "solve"} <= commands


@pytest.mark.parametrize(("command", "flag"), choice_flags())
def test_a_wrong_choice_is_one_line_and_exit_2(command: str, flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, flag, "no-such-choice"], {})
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "usage:" not in err
    assert err.startswith(f"refinelab {command}: error: argument {flag}: invalid choice: 'no-such-choice'")
    assert err.rstrip().endswith(f"(see refinelab {command} --help)")


def test_an_unknown_command_and_a_missing_one_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["nope"], []):
        with pytest.raises(SystemExit) as exited:
            main(argv, {})
        assert exited.value.code == 2 and capsys.readouterr().err.count("\n") == 1
