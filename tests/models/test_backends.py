"""The backend table: a new way of running models is one record, and open_model, the endpoint resolution and
``refinelab ping`` all go through it (none of them asks what a model string starts with or what class runs it)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from refinelab.cli import main
from refinelab.models import (
    BACKENDS,
    BackendKind,
    EndpointSetting,
    FunctionModel,
    GenerateConfig,
    Message,
    Model,
    ModelsConfig,
    OpenRequest,
    backend_kind,
    choose_endpoint,
    open_model,
)

opened: list[OpenRequest] = []


def _echo(messages: Sequence[Message], config: GenerateConfig) -> str:
    return f"echo {messages[-1].content}"


def _open_echo(request: OpenRequest) -> Model:
    opened.append(request)
    return FunctionModel(_echo, name=request.model)


async def _ping_echo(model: Model) -> list[str]:
    completion = await model.generate([Message.user("ping")], GenerateConfig())
    return [f"echo backend answered {completion.text!r}", "runs nowhere at all"]


@pytest.fixture
def echo(monkeypatch: pytest.MonkeyPatch) -> BackendKind:
    kind = BackendKind("echo", _open_echo, in_process=True, ping=_ping_echo)
    monkeypatch.setitem(BACKENDS, "echo", kind)
    opened.clear()
    return kind


def test_a_backend_added_as_one_record_opens_its_models(echo: BackendKind) -> None:
    config = ModelsConfig(aliases={"mine": "echo:tiny"})
    model = open_model("mine", {}, config=config)
    assert model.generate_sync([Message.user("hi")]).text == "echo hi"
    assert [request.model for request in opened] == ["echo:tiny"]  # the alias resolved, then its record
    assert backend_kind("mine", config) is echo
    assert backend_kind("vllm:Qwen/Qwen3-8B").name == "served"
    assert backend_kind("echo").name == "served"  # a bare name is a served model's, whatever it spells


def test_an_in_process_backend_has_no_server_to_resolve(echo: BackendKind) -> None:
    spec_wide = [EndpointSetting("http://127.0.0.1:9/v1", "base_url in the spec")]
    assert choose_endpoint("actor", "echo:tiny", ModelsConfig(), under=spec_wide).address == "in this process"
    assert choose_endpoint("actor", "vllm:tiny", ModelsConfig(), under=spec_wide).urls == ("http://127.0.0.1:9/v1",)


def test_ping_prints_the_backends_own_report(echo: BackendKind, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ping", "echo:tiny"], {}) == 0
    out = capsys.readouterr().out
    assert "echo backend answered 'echo ping'" in out
    assert "runs nowhere at all" in out
