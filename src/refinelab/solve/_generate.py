"""Tests the model writes when the user gives none (through :mod:`refinelab.verification`)."""

from __future__ import annotations

from refinelab.errors import UserError
from refinelab.models import Model
from refinelab.solve._task import Task
from refinelab.solve._tests import TestSet
from refinelab.strategies import Budget


async def generated_tests(task: Task, actor: Model, budget: Budget) -> TestSet:
    """Tests written by ``actor`` for the task, marked ``generated``."""
    raise UserError(
        "no tests given and none in the prompt's examples, and this refinelab cannot generate tests yet: "
        "give --test 'f(1) == 2' (function) or --io 'INPUT=>OUTPUT' (program)"
    )
