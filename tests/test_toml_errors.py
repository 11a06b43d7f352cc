"""Bad TOML syntax names the file and the line as every other input error does (``FILE:LINE: ...``); on
Python before 3.14 ``tomllib`` puts the line only in its message, so it read ``FILE: invalid TOML (...
(at line 2, column 9))``."""

from __future__ import annotations

from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.errors import InputError
from refinelab.experiment import load_spec


@pytest.mark.parametrize(
    ("text", "line"),
    [('store = "a"\nstore = "b"\n', 2), ('name = "x\n', 1), ("[sandbox]\nworkers = 2\n[sandbox]\n", 3)],
)
def test_bad_syntax_names_its_line(tmp_path: Path, text: str, line: int) -> None:
    path = tmp_path / "spec.toml"
    path.write_text(text)
    with pytest.raises(InputError) as raised:
        load_spec(path)
    assert raised.value.line == line
    assert str(raised.value).startswith(f"{path}:{line}: invalid TOML (")


def test_a_project_config_with_bad_syntax_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "refinelab.toml").write_text("[sandbox]\nworkers = = 2\n")
    assert main(["report", "--list"], {}) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"refinelab: error: {tmp_path / 'refinelab.toml'}:2: invalid TOML (") and err.count("\n") == 1
