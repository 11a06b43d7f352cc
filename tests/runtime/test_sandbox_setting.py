"""One ``sandbox`` setting, ``kind[:config]``, read in one place (every layer and the older spellings mean the
same), and a sandbox built by the caller injected into the runtime, as an HTTP client takes a transport."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from refinelab.cli import _run as run_cli
from refinelab.cli import build_parser
from refinelab.cli._options import settings as cli_settings
from refinelab.errors import InputError, UserError
from refinelab.experiment import BenchmarkChoice, ExperimentSpec, RunOptions, run_experiment
from refinelab.runtime import NOT_GIVEN, Flags, SandboxSetting, Settings, open_runtime, parse_sandbox, resolve_settings
from refinelab.sandbox import FakeSandbox, SandboxSettings
from refinelab.store import Store
from refinelab.strategies import StrategySpec
from refinelab.testing import serve
from tests.experiment.fakes import reply, write_benchmark

RUN = ["run", "--benchmark", "jsonl", "--data", "x.jsonl", "--strategy", "single-pass", "--model", "fake"]
SPEC = 'strategies = ["single-pass"]\nactors = ["fake"]\n[[benchmarks]]\nname = "jsonl"\ndata = "x.jsonl"\n'


def test_the_setting_is_a_kind_and_its_config() -> None:
    assert parse_sandbox("landlock") == SandboxSetting("landlock")
    cluster = parse_sandbox("cluster:ray://10.0.0.1:10001")
    assert (cluster.kind, cluster.cluster, cluster.isolation) == ("cluster", "ray://10.0.0.1:10001", NOT_GIVEN)
    assert str(cluster) == "cluster:ray://10.0.0.1:10001" and parse_sandbox("none").isolation == "none"
    for text, message in [
        ("docker", "unknown kind 'docker'; choose auto, bwrap, landlock, none or cluster:ADDRESS"),
        ("bwrap:strict", "bwrap takes no ':' setting"),
        ("cluster", "name the cluster"),
        ("cluster:head", "cluster address 'head' needs a port"),
    ]:
        with pytest.raises(UserError, match=message):
            parse_sandbox(text)


def run_spec(args: list[str], environ: dict[str, str]) -> ExperimentSpec:
    """The spec ``refinelab run`` would run, from its flags, the environment and the project file here."""
    parsed = build_parser(environ).parse_args(args)
    settings = cli_settings(parsed, environ, ("config", "store", "cache", "cluster", "sandbox"))
    return run_cli._spec(parsed, settings)


@pytest.mark.parametrize(
    ("flags", "environ", "project"),
    [
        (["--sandbox", "landlock"], {}, ""),
        (["--isolation", "landlock"], {}, ""),  # the older spelling
        ([], {"REFINELAB_SANDBOX": "landlock"}, ""),
        ([], {}, 'sandbox = "landlock"\n'),
        ([], {}, '[sandbox]\nkind = "landlock"\nworkers = 2\n'),  # beside the table's other keys
        (["--sandbox", "landlock"], {"REFINELAB_SANDBOX": "bwrap"}, 'sandbox = "none"\n'),  # the flag wins
    ],
)
def test_every_layer_and_spelling_resolves_the_same_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str], environ: dict[str, str], project: str
) -> None:
    monkeypatch.chdir(tmp_path)
    plain, flagged = run_spec(RUN, {}), run_spec([*RUN, "--sandbox", "landlock"], {})
    (tmp_path / "refinelab.toml").write_text(project, encoding="utf-8")
    spec = run_spec([*RUN, *flags], environ)
    assert spec.sandbox.isolation == "landlock" and plain.sandbox.isolation == "auto"
    assert spec.run_id == flagged.run_id != plain.run_id


def test_a_spec_file_sits_between_the_flag_and_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "refinelab.toml").write_text('sandbox = "landlock"\n', encoding="utf-8")
    (tmp_path / "spec.toml").write_text(SPEC, encoding="utf-8")
    assert run_spec(["run", "spec.toml"], {}).sandbox.isolation == "landlock"
    (tmp_path / "spec.toml").write_text(SPEC + '[sandbox]\nisolation = "bwrap"\n', encoding="utf-8")
    assert run_spec(["run", "spec.toml"], {}).sandbox.isolation == "bwrap"
    assert run_spec(["run", "spec.toml", "--sandbox", "none"], {}).sandbox.isolation == "none"


def test_a_cluster_is_the_same_setting_in_either_spelling(tmp_path: Path) -> None:
    new = resolve_settings(Flags(sandbox="cluster:ray://127.0.0.1:10001"), {}, tmp_path)
    old = resolve_settings(Flags(cluster="ray://127.0.0.1:10001"), {}, tmp_path)
    assert new.cluster_address == old.cluster_address == "ray://127.0.0.1:10001"
    assert new.isolation is NOT_GIVEN and resolve_settings(Flags(), {}, tmp_path).cluster_address is None


def test_a_bad_setting_names_its_layer(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"^--sandbox: sandbox 'docker': unknown kind"):
        resolve_settings(Flags(sandbox="docker"), {}, tmp_path)
    with pytest.raises(UserError, match=r"^\$REFINELAB_SANDBOX: sandbox 'cluster': name the cluster"):
        resolve_settings(Flags(), {"REFINELAB_SANDBOX": "cluster"}, tmp_path)
    (tmp_path / "refinelab.toml").write_text('store = "s"\n[sandbox]\nkind = "bwrap:x"\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"refinelab.toml:2: field 'sandbox': sandbox 'bwrap:x': bwrap takes no"):
        resolve_settings(Flags(), {}, tmp_path)


def test_a_sandbox_handed_to_the_runtime_is_the_one_it_opens(tmp_path: Path) -> None:
    mine = FakeSandbox()

    async def opened() -> object:
        async with open_runtime(Settings(store=tmp_path / "s.sqlite"), sandbox=mine) as runtime:
            return await runtime.open_sandbox(SandboxSettings(isolation="bwrap", cluster="ray://127.0.0.1:1"))

    assert asyncio.run(opened()) is mine


def test_an_injected_sandbox_receives_the_run_s_programs(tmp_path: Path) -> None:
    data = write_benchmark(tmp_path / "problems.jsonl", n=2)
    mine = FakeSandbox()
    settings = Settings(store=tmp_path / "s.sqlite", cache=tmp_path / "c.sqlite")
    with serve(reply) as server:
        spec = ExperimentSpec(
            (BenchmarkChoice("jsonl", str(data)),), (StrategySpec("single-pass"),), ("fake",), base_url=server.base_url
        )
        summary = asyncio.run(run_experiment(spec, settings, options=RunOptions(sandbox=mine)))
    assert summary.progress.done == 2
    drafts = ["def f(x):\n    return x + 1 if x < 5 else 0\n", "def f(x): # ok\n    return x + 0\n"]  # fakes.reply
    assert sorted({code for code, _ in mine.runs}) == drafts
    with Store(settings.store) as store:
        assert store.run(summary.run_id).header.isolation == "fake"  # the header says where they ran


def test_where_programs_run_follows_the_layers_whichever_spelling_gives_it(tmp_path: Path) -> None:
    """``--cluster`` is ``--sandbox cluster:ADDRESS`` spelled the old way, so it wins over the environment and
    the file as every flag does (the ``sandbox`` setting's cluster won over it at any layer: a flag lost to
    ``sandbox = "cluster:..."`` in refinelab.toml); within one layer the ``sandbox`` spelling wins."""
    environ = {"REFINELAB_SANDBOX": "cluster:10.0.0.2:6379"}
    assert resolve_settings(Flags(cluster="10.0.0.1:6379"), environ, tmp_path).cluster_address == "10.0.0.1:6379"
    (tmp_path / "refinelab.toml").write_text('sandbox = "cluster:10.0.0.3:6379"\n')
    assert resolve_settings(Flags(cluster="10.0.0.1:6379"), {}, tmp_path).cluster_address == "10.0.0.1:6379"
    assert resolve_settings(Flags(), {"REFINELAB_CLUSTER": "10.0.0.4:6379"}, tmp_path).cluster_address == (
        "10.0.0.4:6379"
    )
    both = Flags(cluster="10.0.0.1:6379", sandbox="cluster:10.0.0.5:6379")
    assert resolve_settings(both, {}, tmp_path).cluster_address == "10.0.0.5:6379"
    assert resolve_settings(Flags(sandbox="cluster:10.0.0.5:6379"), {}, tmp_path).cluster_address == "10.0.0.5:6379"
    (tmp_path / "refinelab.toml").write_text('[sandbox]\ncluster = "10.0.0.3:6379"\n')
    assert resolve_settings(Flags(sandbox="cluster:10.0.0.5:6379"), {}, tmp_path).cluster_address == "10.0.0.5:6379"
