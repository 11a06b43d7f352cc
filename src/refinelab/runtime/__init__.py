"""The runtime: settings resolved once (flag > ``REFINELAB_*`` environment > ``refinelab.toml`` > default)
and the one builder that opens models, the response cache, the sandbox and the store from them, for
``run``, ``check``, ``solve`` and ``view`` alike; and the sandbox a command's programs run in, with
their limits, chosen once (:func:`choose_sandbox`). See docs/design/runtime.md for where a new model
backend, a new sandbox or a new setting goes."""

from refinelab.runtime._given import NOT_GIVEN, NotGiven
from refinelab.runtime._project import CONFIG_NAME, find_config
from refinelab.runtime._runtime import Runtime, open_runtime
from refinelab.runtime._sandbox import (
    SANDBOX_KINDS,
    SandboxChoice,
    SandboxKind,
    SandboxRequest,
    SandboxSetting,
    choose_sandbox,
    parse_sandbox,
    workers_problem,
)
from refinelab.runtime._settings import DEFAULT_STORE, SETTINGS, Flags, Setting, Settings, resolve_settings

__all__ = [
    "CONFIG_NAME",
    "DEFAULT_STORE",
    "NOT_GIVEN",
    "SANDBOX_KINDS",
    "SETTINGS",
    "Flags",
    "NotGiven",
    "Runtime",
    "SandboxChoice",
    "SandboxKind",
    "SandboxRequest",
    "SandboxSetting",
    "Setting",
    "Settings",
    "choose_sandbox",
    "find_config",
    "open_runtime",
    "parse_sandbox",
    "resolve_settings",
    "workers_problem",
]
