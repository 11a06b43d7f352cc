"""Flags that several commands share, each defined once, and the settings they resolve to.

A flag that sets a layered setting (``--store``, ``--cache``, ``--cache-dir``, ``--model``, ``--workers``,
``--cluster``, ``--sandbox``, ``--config``) defaults to ``None`` here: not given, so the environment, the
project config and then the default decide (:func:`refinelab.runtime.resolve_settings`).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path

from refinelab.runtime import Flags, Settings, resolve_settings
from refinelab.sandbox import ISOLATION_MODES

CONFIG_HELP = "project config: [models], [sandbox] and where things live"


def add_store(parser: argparse.ArgumentParser, text: str = "results database") -> None:
    """``--store FILE`` (``text``: its help, before the default)."""
    parser.add_argument(
        "--store",
        type=Path,
        help=f"{text} (default: $REFINELAB_STORE, else store in refinelab.toml, else .refinelab/store.sqlite)",
    )


def add_config(parser: argparse.ArgumentParser, text: str = CONFIG_HELP) -> None:
    """``--config FILE`` (``text``: its help, before how the file is found when it is not given)."""
    parser.add_argument(
        "--config", type=Path, help=f"{text} (default: $REFINELAB_CONFIG, else refinelab.toml here or in a parent)"
    )


def add_cache(parser: argparse.ArgumentParser) -> None:
    """``--cache FILE``: the response cache."""
    parser.add_argument(
        "--cache",
        type=Path,
        help="response cache (default: $REFINELAB_CACHE, else cache in refinelab.toml, else responses.sqlite "
        "beside the store)",
    )


def add_sandbox(parser: argparse.ArgumentParser) -> None:
    """``--sandbox KIND[:CONFIG]``, and its older spelling ``--isolation KIND``: one setting (see
    :func:`refinelab.runtime.parse_sandbox`)."""
    parser.add_argument(
        "--sandbox",
        "--isolation",
        dest="sandbox",
        metavar="KIND[:CONFIG]",
        help=f"sandbox: {', '.join(ISOLATION_MODES)} (how programs are confined) or cluster:ADDRESS (default: "
        "$REFINELAB_SANDBOX, else sandbox in refinelab.toml, else auto)",
    )


def add_cluster(parser: argparse.ArgumentParser) -> None:
    """``--cluster ADDRESS``: run programs on a Ray cluster's nodes."""
    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run programs on a Ray cluster: auto ($RAY_ADDRESS or a local `ray start`), ray://HOST:PORT or "
        "HOST:PORT (default: $REFINELAB_CLUSTER, else [sandbox] cluster in refinelab.toml, else this machine)",
    )


def settings(args: argparse.Namespace, environ: Mapping[str, str], flags: Sequence[str]) -> Settings:
    """The settings of a command: its layered ``flags`` (names of :class:`Flags` fields) that were given,
    over the environment, the project config and the defaults."""
    assert set(flags) <= {f.name for f in fields(Flags)}, flags
    given = {name: getattr(args, name) for name in flags if getattr(args, name) is not None}
    return resolve_settings(Flags(**given), environ, Path.cwd())
