"""Model profiles: what a model accepts (which sampling settings, ``max_tokens`` or ``max_completion_tokens``),
whether it reasons, and how its server takes a reasoning effort, as tables of records.

:data:`PROFILES` holds one record per family, matched by a pattern on the model string (``openai:o4-mini``);
:data:`SERVERS` says how each kind of server takes an effort. A family whose model does not take a setting
never gets it: the request goes without it and the reply records it as not sent (:class:`NotSent`), so a
report can say that a strategy's temperature 0 was sampled at 1. A model no record knows gets every setting;
a 400 naming a setting it refuses is learned once (:class:`Accepts`) and the request goes again without it,
recorded the same way. ``[models.endpoints."MODEL"]`` keys in ``refinelab.toml`` override a record per
endpoint (:class:`ProfileOverrides`). See docs/design/models.md ("Model profiles").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Literal

from refinelab.errors import UserError
from refinelab.models._types import GenerateConfig, NotSent
from refinelab.records import EFFORT_ORDER

EffortControl = Literal["reasoning_effort", "chat_template_kwargs", "llamacpp", "ollama", "local", "not_taken"]
"""How a reasoning effort reaches the model:

- ``reasoning_effort``: the request's ``reasoning_effort`` field (OpenAI; vLLM for gpt-oss; any server that
  follows OpenAI);
- ``chat_template_kwargs``: vLLM and SGLang: ``chat_template_kwargs = {enable_thinking, thinking_budget}`` and
  vLLM's ``thinking_token_budget`` (the budget of the level, or the number given);
- ``llamacpp``: llama.cpp's server: ``chat_template_kwargs.enable_thinking``; its thinking budget is a
  server flag (``--reasoning-budget``), so a budget is recorded as not sent;
- ``ollama``: Ollama's ``reasoning_effort`` (``none`` turns thinking off); it takes no budget;
- ``local``: refinelab's in-process llama.cpp (thinking on or off through the chat template, a budget that
  ends the thinking section);
- ``not_taken``: the model does not reason: an effort is recorded as not sent."""
TokenLimit = Literal["max_tokens", "max_completion_tokens"]
"""The request field that caps the reply (reasoning models take ``max_completion_tokens``, which counts
their thinking too)."""
EFFORT_LEVELS = EFFORT_ORDER
"""The effort levels refinelab knows, least thinking first (a thinking-token budget is written as a number)."""
DEFAULT_BUDGETS: Mapping[str, int | None] = MappingProxyType(
    {"minimal": 256, "low": 1024, "medium": 4096, "high": 16384, "xhigh": None}
)
"""Thinking tokens of each level on servers that take a budget rather than a level (vLLM, SGLang, local);
``None``: no budget (think until done). A choice of refinelab's, overridable per endpoint
(``thinking_budgets``)."""
_BUDGET = re.compile(r"[0-9]+")
"""A thinking-token budget as written (ASCII digits only: ``str.isdigit`` also takes ``²``, which ``int`` refuses)."""
SETTINGS = ("temperature", "top_p", "max_tokens", "seed", "stop", "json_schema", "reasoning_effort")
"""The :class:`GenerateConfig` settings a profile may refuse."""


@dataclass(frozen=True)
class ModelProfile:
    """What one family of models accepts and how it reasons."""

    name: str
    """The family's name (shown with every setting it did not send)."""
    pattern: str
    """A regular expression searched in the model string (``provider:name``)."""
    reasons: bool = False
    """The model thinks before it answers (its replies may carry reasoning)."""
    effort: EffortControl | None = None
    """How an effort is sent; ``None``: the way the model's server takes it (:data:`SERVERS`)."""
    efforts: tuple[str, ...] = ()
    """The levels it accepts (empty: any level or budget); another is a user error before any request."""
    refuses: tuple[str, ...] = ()
    """Settings never sent (recorded as not sent when asked for)."""
    samples_at: Mapping[str, float] = field(default_factory=dict)
    """The value a refused sampling setting is fixed at (temperature 1): asking for it changes nothing, so
    it is left out without a record."""
    token_limit: TokenLimit = "max_tokens"  # noqa: S105 - a field's name, not a secret
    """The field that caps the reply."""
    budgets: Mapping[str, int | None] = field(default_factory=lambda: DEFAULT_BUDGETS)
    """Thinking tokens of each level where the server takes a budget."""
    opens_thinking: bool = False
    """The chat template may open the thinking section itself, so a reply can start inside it and end it with
    ``</think>`` alone (DeepSeek-R1 distills, Qwen3 thinking models)."""
    takes_n: bool = True
    """Several samples may be asked for in one request (``n``); ``False``: one request a sample, never a
    refused ``n``."""

    def key(self) -> dict[str, object]:
        """What about this profile changes a request (part of the response cache key when it changes one)."""
        return {"name": self.name, "token_limit": self.token_limit, "refuses": sorted(self.refuses),
                "budgets": dict(self.budgets)}  # fmt: skip


_FIXED = MappingProxyType({"temperature": 1.0, "top_p": 1.0})
_REASONING = {
    "reasons": True,
    "takes_n": False,  # OpenAI's reasoning models launched with n fixed at 1: never risk a refused request
    "refuses": ("temperature", "top_p", "stop"),
    "samples_at": _FIXED,
    "token_limit": "max_completion_tokens",
    "effort": "reasoning_effort",
}
_THINKERS = (
    r"(?i)(qwen3(?![-.]?coder)(?!.*instruct-2507)|qwq|deepseek-r1|r1-distill|magistral|phi-4-(mini-)?reasoning|"
    r"exaone-deep|openthinker|skywork-or1|acereason|deepcoder)"
)

PROFILES: tuple[ModelProfile, ...] = (
    # OpenAI's reasoning models refuse sampling settings other than the defaults and `max_tokens`
    # (400 unsupported_value / unsupported_parameter; docs/design/models.md quotes the bodies).
    ModelProfile("openai-o1-mini", r"^openai:o1-(mini|preview)", **{**_REASONING, "effort": "not_taken"}),  # type: ignore[arg-type]
    ModelProfile("openai-o-series", r"^openai:o\d", efforts=("low", "medium", "high"), **_REASONING),  # type: ignore[arg-type]
    ModelProfile("openai-gpt-5-chat", r"^openai:gpt-5(\.\d+)?-chat", effort="not_taken"),
    ModelProfile("openai-gpt-5.1", r"^openai:gpt-5\.1", efforts=("none", "low", "medium", "high"), **_REASONING),  # type: ignore[arg-type]
    ModelProfile(
        "openai-gpt-5.2",
        r"^openai:gpt-5\.([2-9]|\d\d)",
        efforts=("none", "low", "medium", "high", "xhigh"),
        **_REASONING,  # type: ignore[arg-type]
    ),
    ModelProfile("openai-gpt-5", r"^openai:gpt-5", efforts=("minimal", "low", "medium", "high"), **_REASONING),  # type: ignore[arg-type]
    ModelProfile("openai-chat", r"^openai:(gpt-4|gpt-3\.5|chatgpt-)", effort="not_taken"),
    ModelProfile("gpt-oss", r"(?i)gpt-oss", reasons=True, effort="reasoning_effort", efforts=("low", "medium", "high")),
    ModelProfile("open-thinking", _THINKERS, reasons=True, opens_thinking=True),
    ModelProfile("generic", r""),
)
"""Every known family, most specific first; the last matches any model."""

SERVERS: Mapping[str, EffortControl] = MappingProxyType(
    {
        "openai": "reasoning_effort",
        "vllm": "chat_template_kwargs",
        "llamacpp": "llamacpp",
        "ollama": "ollama",
        "local": "local",
    }
)
"""How each provider's server takes an effort (a model string without a known provider: ``reasoning_effort``)."""


def effort_problem(text: str) -> str | None:
    """What is wrong with an effort as written (``None``: nothing): a level or a positive number of tokens."""
    if text in EFFORT_LEVELS or (_BUDGET.fullmatch(text) and int(text) > 0):
        return None
    return f"reasoning effort {text!r}: use one of {', '.join(EFFORT_LEVELS)}, or a thinking-token budget (e.g. 2048)"


def checked_effort(text: object, where: str) -> str:
    """An effort written in a spec or on the command line, as text; a user error naming ``where`` otherwise."""
    value = str(text) if isinstance(text, (str, int)) and not isinstance(text, bool) else None
    problem = effort_problem(value) if value is not None else f"reasoning effort {text!r} must be a word or a number"
    if problem is not None:
        raise UserError(f"{where}: {problem}")
    assert value is not None
    return value if value in EFFORT_LEVELS else str(int(value))  # 02048 is 2048: one configuration, one cache key


@dataclass(frozen=True)
class ProfileOverrides:
    """``[models.endpoints."MODEL"]`` keys that change a model's profile; ``None``: the record's own."""

    profile: str | None = None
    """Use this family's record (``openai-o-series`` for an Azure deployment named ``my-o4``)."""
    effort_control: EffortControl | None = None
    """How an effort is sent."""
    token_limit: TokenLimit | None = None
    """The field that caps the reply."""
    refuses: tuple[str, ...] | None = None
    """Settings never sent."""
    thinking_budgets: Mapping[str, int | None] | None = None
    """Thinking tokens of each level (merged over the record's)."""

    def apply(self, profile: ModelProfile) -> ModelProfile:
        """``profile`` with these overrides."""
        if self.profile is not None:
            profile = named_profile(self.profile)
        changes: dict[str, object] = {}
        if self.effort_control is not None:
            changes["effort"] = self.effort_control
        if self.token_limit is not None:
            changes["token_limit"] = self.token_limit
        if self.refuses is not None:
            changes["refuses"] = tuple(self.refuses)
        if self.thinking_budgets is not None:
            changes["budgets"] = {**profile.budgets, **self.thinking_budgets}
        return replace(profile, **changes) if changes else profile  # type: ignore[arg-type]

    @property
    def empty(self) -> bool:
        """Nothing is overridden."""
        return all(getattr(self, f.name) is None for f in fields(self))


def named_profile(name: str) -> ModelProfile:
    """The record called ``name``; a user error naming the choices otherwise."""
    for profile in PROFILES:
        if profile.name == name:
            return profile
    raise UserError(f"unknown model profile {name!r}; choose one of: {', '.join(p.name for p in PROFILES)}")


def profile_for(model: str, overrides: ProfileOverrides | None = None) -> ModelProfile:
    """The first record whose pattern the model string matches, with the endpoint's overrides; its effort
    control filled in from the server when the record leaves it to the server."""
    found = next(p for p in PROFILES if re.search(p.pattern, model))
    if overrides is not None:
        found = overrides.apply(found)
    if found.effort is None:
        found = replace(found, effort=SERVERS.get(model.partition(":")[0], "reasoning_effort"))
    return found


@dataclass
class Accepts:
    """What one endpoint has been found to refuse (learned from its 400s), shared by the model and its backend.

    A refused setting is left out of every later request (a refused value, such as one effort level, of the
    requests that ask for that value); a refused ``max_tokens`` that names ``max_completion_tokens`` switches
    the field, and the other way round.
    """

    profile: ModelProfile
    """The model's profile."""
    settings: dict[str, str] = field(default_factory=dict)
    """Refused settings and the server's words."""
    values: dict[tuple[str, str], str] = field(default_factory=dict)
    """Refused (setting, value) pairs and the server's words."""
    token_limit: TokenLimit | None = None
    """The cap's field, once the server named it (or refused the other); ``None``: the profile's."""
    limits_refused: set[TokenLimit] = field(default_factory=set)
    """Cap fields the server refused without naming another."""

    @property
    def limit_field(self) -> TokenLimit:
        """The field that caps the reply."""
        return self.token_limit or self.profile.token_limit

    def try_other_limit(self) -> bool:
        """The server refused the cap's field without naming the one it takes (a server that follows OpenAI's
        reasoning models' rules but says less): the other field is tried before the cap is given up. False
        when both were refused (then the server takes no cap, and the refusal is learned)."""
        self.limits_refused.add(self.limit_field)
        other: TokenLimit = "max_completion_tokens" if self.limit_field == "max_tokens" else "max_tokens"
        if other in self.limits_refused:
            return False
        self.token_limit = other
        return True

    def learn(self, setting: str, value: str | None, reason: str) -> bool:
        """Remember a refusal; False when it was known already (the request cannot do without it)."""
        if value is None:
            known = setting in self.settings
            self.settings.setdefault(setting, reason)
        else:
            known = (setting, value) in self.values
            self.values.setdefault((setting, value), reason)
        return not known

    def prepare(self, model: str, config: GenerateConfig) -> tuple[GenerateConfig, tuple[NotSent, ...]]:
        """The settings to send for ``config`` and the ones left out, with why (see the module docstring)."""
        if config.reasoning_effort is None and not (self.profile.refuses or self.settings or self.values):
            return config, ()  # the common case, on every call: nothing to leave out
        self._check_effort(model, config.reasoning_effort)
        budget = self.budget_not_sent(model, config.reasoning_effort)
        dropped: list[NotSent] = [] if budget is None else [budget]
        changes: dict[str, object] = {}
        for setting in SETTINGS:
            value = getattr(config, setting)
            if value in (None, ()):
                continue
            reason = self._refusal(model, setting, value)
            if reason is not None:
                changes[setting] = () if setting == "stop" else None
                if self.profile.samples_at.get(setting) != value:
                    dropped.append(NotSent(setting, _text(value), reason))
        return (replace(config, **changes) if changes else config), tuple(dropped)  # type: ignore[arg-type]

    def _refusal(self, model: str, setting: str, value: object) -> str | None:
        profile = self.profile
        if setting in profile.refuses:
            fixed = profile.samples_at.get(setting)
            said = f"samples only at {setting} {fixed:g}" if fixed is not None else f"does not take {setting}"
            return f"{model} {said} (model profile {profile.name})"
        if setting == "reasoning_effort":
            refused = _effort_refusal(profile, str(value))
            if refused is not None:
                return f"{model} {refused}"
        return self.settings.get(setting) or self.values.get((setting, _text(value)))

    def budget_not_sent(self, model: str, effort: str | None) -> NotSent | None:
        """llama.cpp's server turns thinking on or off per request, but its budget is a flag it starts with:
        the budget a level stands for is recorded as not sent (the effort itself is)."""
        if effort is None or effort == "none" or self.profile.effort != "llamacpp":
            return None
        budget = thinking_budget(self.profile, effort)
        if budget is None:
            return None
        reason = f"{model}: llama.cpp's server takes a thinking budget only as its --reasoning-budget flag"
        return NotSent("thinking_budget", str(budget), reason)

    def _check_effort(self, model: str, effort: str | None) -> None:
        check_effort(self.profile, model, effort)


def check_effort(profile: ModelProfile, model: str, effort: str | None) -> None:
    """A level the family does not take (or a budget where it takes levels) is the user's to fix: a user error,
    raised by every request that asks for it, and by a command before it writes anything
    (:meth:`refinelab.runtime.Runtime.check_model`)."""
    if effort is None or not profile.efforts or profile.effort == "not_taken":
        return
    if effort not in profile.efforts:
        raise UserError(
            f"{model} takes reasoning effort {', '.join(profile.efforts)}, not {effort!r} (model profile "
            f'{profile.name}; a different profile can be named in refinelab.toml: profile = "...")'
        )


def _effort_refusal(profile: ModelProfile, effort: str) -> str | None:
    """Why an effort cannot be sent to this model, in words after its name (``None``: it can)."""
    if profile.effort == "not_taken" or (profile.effort == "local" and not profile.reasons):
        return f"does not reason (model profile {profile.name})"
    if effort.isdigit() and profile.effort in ("reasoning_effort", "ollama"):
        return "takes an effort level, not a thinking-token budget"
    return None


def _text(value: object) -> str:
    if isinstance(value, tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def effort_fields(profile: ModelProfile, effort: str | None) -> dict[str, object]:
    """The request fields that carry ``effort`` to the model's server (see :data:`EffortControl`); an effort
    the server cannot take never gets here (:meth:`Accepts.prepare` left it out)."""
    if effort is None or profile.effort in ("not_taken", "local", None):
        return {}
    if profile.effort in ("reasoning_effort", "ollama"):
        return {"reasoning_effort": effort}
    thinking = effort != "none"
    budget = thinking_budget(profile, effort)
    kwargs: dict[str, object] = {"enable_thinking": thinking}
    if profile.effort == "llamacpp" or budget is None or not thinking:
        return {"chat_template_kwargs": kwargs}
    return {"chat_template_kwargs": {**kwargs, "thinking_budget": budget}, "thinking_token_budget": budget}


def thinking_budget(profile: ModelProfile, effort: str) -> int | None:
    """Thinking tokens allowed at ``effort`` (a number is itself; ``None``: no budget)."""
    if effort.isdigit():
        return int(effort)
    return profile.budgets.get(effort)
