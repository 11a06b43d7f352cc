"""A mistake in the ``[models]`` table of ``refinelab.toml`` (or of a spec) names the file, the line and the
field, as every other key of those files does; it named no line, because the line finder did not read a
table header whose key is quoted (``[models.endpoints."vllm:Qwen/Qwen2.5-Coder-7B-Instruct"]``, a model
string has a colon, a slash and dots) and most of these errors did not ask for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from refinelab.errors import InputError
from refinelab.models import load_models_config

MODEL = "vllm:Qwen/Qwen2.5-Coder-7B-Instruct"
WHERE = f"models.endpoints.{MODEL}"


@pytest.mark.parametrize(
    ("text", "line", "field"),
    [
        ('[models.aliases]\nsmall = 3\n', 1, "models.aliases"),
        (f'[models.endpoints."{MODEL}"]\nbase_url = "gpu-box:8000"\n', 2, f"{WHERE}.base_url"),
        (f'[models.endpoints."{MODEL}"]\nbase_url = "http://a/v1"\nconcurrency = -1\n', 3, f"{WHERE}.concurrency"),
        (f'[models.endpoints."{MODEL}"]\n\nprice = {{ input = -1, output = 0 }}\n', 3, f"{WHERE}.price"),
        (f'[models.endpoints."{MODEL}"]\ndeployment = ""\n', 2, f"{WHERE}.deployment"),
        (f'[models.endpoints."{MODEL}"]\ntoken_limit = "words"\n', 2, f"{WHERE}.token_limit"),
        (f'[models.endpoints."{MODEL}"]\ncolour = 1\n', 2, f"{WHERE}.colour"),
        (f'[models.endpoints."vllm:other"]\nconcurrency = 2\n[models.endpoints."{MODEL}"]\nconcurrency = 0\n', 4,
         f"{WHERE}.concurrency"),
        (f'[models.endpoints]\n"{MODEL}" = 3\n', 2, WHERE),
    ],
)  # fmt: skip
def test_a_models_mistake_names_its_line(tmp_path: Path, text: str, line: int, field: str) -> None:
    path = tmp_path / "refinelab.toml"
    path.write_text(text)
    with pytest.raises(InputError) as raised:
        load_models_config(path)
    assert (raised.value.line, raised.value.field) == (line, field)
    assert str(raised.value).startswith(f"{path}:{line}: field '{field}': ")
