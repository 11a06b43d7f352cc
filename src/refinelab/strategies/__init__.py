"""Strategies: small async functions over a problem and an :class:`Env`, each returning a
:class:`Trajectory`; and the helpers they use to read model output.

A new strategy is one ``@strategy("name")`` function in its own private module here (``_best_of_two.py``;
a public module would owe an ``__all__``), plus its test: this package imports every module in it, so
importing it registers them all (a test checks that).
"""

import importlib
import pkgutil

from refinelab.strategies._codet import codet
from refinelab.strategies._critics import self_redraft, self_refine
from refinelab.strategies._env import Budget, BudgetExhausted, Efforts, Env, Samples
from refinelab.strategies._execution import exec_refine, sampling, single_pass
from refinelab.strategies._feedback import FeedbackFormat, MemoryPolicy, feedback
from refinelab.strategies._parsing import (
    Critique,
    Parsed,
    RedraftCritique,
    Suggestion,
    extract_code,
    extract_confidence,
    parse_critique_json,
    parse_critique_xml,
    strip_reasoning,
)
from refinelab.strategies._prompts import DEFAULT_PROMPTS, Prompts
from refinelab.strategies._registry import (
    STRATEGIES,
    BoundStrategy,
    RegisteredStrategy,
    Strategy,
    StrategySpec,
    Traits,
    strategy,
    strategy_traits,
)
from refinelab.strategies._schedule import TemperatureSchedule
from refinelab.strategies._trajectory import (
    Attempt,
    CriticOutput,
    Decision,
    DecisionKind,
    Origin,
    StopReason,
    TestGeneration,
    Trajectory,
)
from refinelab.strategies._verified import verified

__all__ = [
    "DEFAULT_PROMPTS",
    "STRATEGIES",
    "Attempt",
    "BoundStrategy",
    "Budget",
    "BudgetExhausted",
    "CriticOutput",
    "Critique",
    "Decision",
    "DecisionKind",
    "Efforts",
    "Env",
    "FeedbackFormat",
    "MemoryPolicy",
    "Origin",
    "Parsed",
    "Prompts",
    "RedraftCritique",
    "RegisteredStrategy",
    "Samples",
    "StopReason",
    "Strategy",
    "StrategySpec",
    "Suggestion",
    "TemperatureSchedule",
    "TestGeneration",
    "Traits",
    "Trajectory",
    "codet",
    "exec_refine",
    "extract_code",
    "extract_confidence",
    "feedback",
    "parse_critique_json",
    "parse_critique_xml",
    "sampling",
    "self_redraft",
    "self_refine",
    "single_pass",
    "strategy",
    "strategy_traits",
    "strip_reasoning",
    "verified",
]


def _register_every_module() -> None:
    """Import every module of this package, so each ``@strategy`` in it registers itself."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


_register_every_module()
