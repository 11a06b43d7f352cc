"""Settings resolved once: a flag wins, then REFINELAB_*, then refinelab.toml, then the default; unknown
keys in the project file are errors at their line; NOT_GIVEN is not None."""

from __future__ import annotations

import asyncio
from dataclasses import fields
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.errors import InputError, UserError
from refinelab.problems import default_cache_dir
from refinelab.runtime import (
    DEFAULT_STORE,
    NOT_GIVEN,
    SETTINGS,
    Flags,
    Settings,
    open_runtime,
    resolve_settings,
)
from refinelab.sandbox import SandboxSettings


def project(folder: Path, text: str) -> Path:
    path = folder / "refinelab.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_setting_fills_a_field_of_both_records() -> None:
    assert {s.name for s in SETTINGS} <= {f.name for f in fields(Flags)} & {f.name for f in fields(Settings)}
    assert {f.name for f in fields(Flags)} == {s.name for s in SETTINGS} | {"config"}


def test_defaults_without_a_flag_a_variable_or_a_file(tmp_path: Path) -> None:
    settings = resolve_settings(Flags(), {"HOME": str(tmp_path)}, tmp_path)
    assert settings.store == DEFAULT_STORE and settings.responses == DEFAULT_STORE.with_name("responses.sqlite")
    assert settings.cache_dir == tmp_path / ".cache" / "refinelab" == default_cache_dir({"HOME": str(tmp_path)})
    assert (settings.model, settings.workers, settings.config) == (None, None, None)


def test_a_flag_wins_over_the_environment_which_wins_over_the_file(tmp_path: Path) -> None:
    project(tmp_path, 'store = "from-file.sqlite"\nmodel = "file:m"\n[sandbox]\nworkers = 3\n')
    environ = {"REFINELAB_STORE": "/env/store.sqlite", "REFINELAB_WORKERS": "5"}
    from_file = resolve_settings(Flags(), {}, tmp_path)
    assert (from_file.store, from_file.model, from_file.workers) == (tmp_path / "from-file.sqlite", "file:m", 3)
    from_env = resolve_settings(Flags(), environ, tmp_path)
    assert (from_env.store, from_env.model, from_env.workers) == (Path("/env/store.sqlite"), "file:m", 5)
    flagged = resolve_settings(Flags(store=Path("flag.sqlite"), workers=1), environ, tmp_path)
    assert (flagged.store, flagged.workers, flagged.config) == (Path("flag.sqlite"), 1, tmp_path / "refinelab.toml")
    assert Flags().store is NOT_GIVEN and not NOT_GIVEN and repr(NOT_GIVEN) == "NOT_GIVEN"


def test_the_files_paths_are_relative_to_the_file_and_it_is_found_from_below(tmp_path: Path) -> None:
    project(tmp_path, 'cache = "responses/here.sqlite"\ncache_dir = "/abs/cache"\n[models.aliases]\nsmall = "vllm:q"\n')
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    settings = resolve_settings(Flags(), {}, deep)
    assert settings.responses == tmp_path / "responses" / "here.sqlite" and settings.cache_dir == Path("/abs/cache")
    assert settings.models.model("small") == "vllm:q"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('store = "s"\nstor = "typo"\n', "refinelab.toml:2: field 'stor': unknown key"),
        ("[sandbox]\nworkers = 2\nnodes = 1\n", "refinelab.toml:3: field 'sandbox.nodes': unknown key"),
        (
            '[sandbox]\ncluster = "head"\n',
            "refinelab.toml:2: field 'sandbox.cluster': cluster address 'head' needs a port",
        ),
        ("[sandbox]\nworkers = 0\n", "refinelab.toml:2: field 'sandbox.workers': must be an integer >= 1"),
        ("store = 3\n", "refinelab.toml:1: field 'store': must be a path"),
        ("[models]\nalias = 1\n", "refinelab.toml:2: field 'models.alias': unknown key"),
    ],
)
def test_bad_project_keys_are_errors_at_their_line(tmp_path: Path, text: str, message: str) -> None:
    project(tmp_path, text)
    with pytest.raises(InputError) as caught:
        resolve_settings(Flags(), {}, tmp_path)
    assert message in str(caught.value)


def test_a_bad_variable_is_a_user_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"\$REFINELAB_WORKERS must be an integer >= 1, not 'many'"):
        resolve_settings(Flags(), {"REFINELAB_WORKERS": "many"}, tmp_path)


def test_every_command_reads_the_store_from_the_same_layers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    project(tmp_path, 'store = "kept/here.sqlite"\n')
    assert main(["report", "--list"], {}) == 2  # the file's store does not exist yet: named in the error
    assert "kept/here.sqlite: no store here" in capsys.readouterr().err
    assert main(["export", "--out", "x.jsonl"], {"REFINELAB_STORE": "env.sqlite"}) == 2
    assert "env.sqlite: no store here" in capsys.readouterr().err
    assert main(["view", "--store", "flag.sqlite", "--out", "site"], {"REFINELAB_STORE": "env.sqlite"}) == 2
    assert "flag.sqlite: no store here" in capsys.readouterr().err


def test_the_runtime_applies_the_settings_workers_and_closes_what_it_opened(tmp_path: Path) -> None:
    settings = Settings(store=tmp_path / "s.sqlite", workers=1, environ={})

    async def run() -> tuple[int, bool]:
        async with open_runtime(settings) as runtime:
            sandbox = await runtime.open_sandbox(SandboxSettings(isolation="none"))
            store = runtime.open_store()
            assert runtime.open_store() is store and runtime.model("vllm:a") is runtime.model("vllm:a")
            return sandbox.size, (tmp_path / "responses.sqlite").exists()

    with pytest.warns(UserWarning, match="UNSANDBOXED"):
        size, cache_opened = asyncio.run(run())
    assert size == 1 and cache_opened  # the response cache sits beside the store


def test_the_cache_folder_setting_reaches_the_model_layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``cache_dir`` (flag, variable or file) is where local model files are kept, as benchmark files are."""
    from refinelab.models._local_files import models_dir
    from refinelab.runtime import _runtime

    project(tmp_path, 'cache_dir = "cache-from-file"\n')
    settings = resolve_settings(Flags(), {"HOME": str(tmp_path / "home")}, tmp_path)
    assert models_dir(settings.model_environ) == tmp_path / "cache-from-file" / "models"
    flagged = resolve_settings(Flags(cache_dir=tmp_path / "flag"), {"REFINELAB_CACHE_DIR": "/env"}, tmp_path)
    assert models_dir(flagged.model_environ) == tmp_path / "flag" / "models"
    seen: list[str] = []

    def open_model(name: str, environ: dict[str, str], **_: object) -> _Closing:
        seen.append(environ["REFINELAB_CACHE_DIR"])
        return _Closing()

    monkeypatch.setattr(_runtime, "open_model", open_model)

    async def open_one() -> None:
        async with open_runtime(settings) as runtime:
            runtime.model("local:anything")

    asyncio.run(open_one())
    assert seen == [str(tmp_path / "cache-from-file")]


class _Closing:
    limits: object = None

    async def aclose(self) -> None:
        return None


ABSURD = 10**6
"""Sandbox workers no machine refinelab runs on holds (16 TiB at 16 MiB each)."""


@pytest.mark.parametrize(
    ("flags", "environ", "text", "where"),
    [
        (Flags(workers=ABSURD), {}, "", "--workers: "),
        (Flags(), {"REFINELAB_WORKERS": str(ABSURD)}, "", "$REFINELAB_WORKERS: "),
        (Flags(), {}, f"[sandbox]\nworkers = {ABSURD}\n", "refinelab.toml:2: field 'sandbox.workers': "),
    ],
)
def test_a_pool_wider_than_the_machine_holds_is_refused_naming_where_it_came_from(
    tmp_path: Path, flags: Flags, environ: dict[str, str], text: str, where: str
) -> None:
    # REFINELAB_WORKERS=99999 used to start that many interpreters: the machine ground until it was killed.
    project(tmp_path, text)
    with pytest.raises(UserError) as caught:
        resolve_settings(flags, environ, tmp_path)
    message = str(caught.value)
    assert where in message and "1,000,000 sandbox workers would not fit in this machine's memory" in message


def test_more_workers_than_cores_are_allowed_and_a_cluster_s_nodes_are_not_this_machine_s(tmp_path: Path) -> None:
    assert resolve_settings(Flags(workers=64), {}, tmp_path).workers == 64  # 64 on 2 cores: documented, tested
    on_cluster = resolve_settings(Flags(workers=ABSURD, cluster="127.0.0.1:6379"), {}, tmp_path)
    assert on_cluster.workers == ABSURD  # a cluster's nodes run one worker per Ray CPU, not this width


def test_check_refuses_an_absurd_width_in_one_line_before_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    samples = tmp_path / "samples.jsonl"
    samples.write_text('{"task_id": "t", "solution": "pass"}\n', encoding="utf-8")
    argv = ["check", str(samples), "--benchmark", "jsonl", "--data", str(tmp_path / "absent.jsonl")]  # never read
    assert main(argv, {"REFINELAB_WORKERS": str(ABSURD)}) == 2
    err = capsys.readouterr().err
    assert err.startswith("refinelab: error: $REFINELAB_WORKERS: 1,000,000 sandbox workers") and err.count("\n") == 1
