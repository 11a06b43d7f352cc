"""Test doubles that ship with the library, for testing strategies and setups without real services.

- :class:`ScriptedModel` and :class:`FunctionModel`: models whose replies a test scripts or computes.
- :class:`FakeSandbox`: runs trusted test code in-process and judges it as the real sandbox does, so
  strategy tests need no bubblewrap pool.
- :class:`FakeOpenAI` and :func:`serve`: a real OpenAI-compatible HTTP server on 127.0.0.1, with fault
  injection, for testing the model layer (or a setup) end to end without a model; with ``mimic`` it plays a
  reasoning model's server (:data:`OPENAI_REASONING`: OpenAI's refusals and reasoning-token counts;
  :data:`VLLM_THINKING`: vLLM returning a thinking model's reasoning).
- :class:`StandInHub` and :func:`serve_standin`: the Hugging Face Hub (model and dataset repositories) and
  GitHub on 127.0.0.1, serving a folder of files with the hub's headers, with fault injection, for testing
  downloads of benchmark and model files without the network.
"""

from refinelab.models import FunctionModel, ScriptedModel
from refinelab.sandbox import FakeSandbox
from refinelab.testing._fake_server import FakeOpenAI, ReplyWriter, echo, serve
from refinelab.testing._reasoning import OPENAI_REASONING, VLLM_THINKING, ReasoningMimic
from refinelab.testing._standin import StandInHub, serve_standin

__all__ = [
    "OPENAI_REASONING",
    "VLLM_THINKING",
    "FakeOpenAI",
    "FakeSandbox",
    "FunctionModel",
    "ReasoningMimic",
    "ReplyWriter",
    "ScriptedModel",
    "StandInHub",
    "echo",
    "serve",
    "serve_standin",
]
