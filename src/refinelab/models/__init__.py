"""The model layer: any OpenAI-compatible endpoint or a GGUF model run in-process (``local:``), with
concurrency, retries, usage and cost, a response cache, and model test doubles (every double, the fake
server included: :mod:`refinelab.testing`).
Strategies call ``await model.generate(messages, config)``."""

from refinelab.errors import CacheMiss, EndpointError, EndpointFailed, NotSupported, TransientError
from refinelab.models._cache import CacheMode, ResponseCache, cache_key
from refinelab.models._doubles import FunctionModel, ScriptedModel
from refinelab.models._endpoints import EndpointSetting, Role, RoleEndpoint, choose_endpoint
from refinelab.models._limits import EndpointLimits
from refinelab.models._local import LocalBackend, LocalOptions
from refinelab.models._local_files import LOCAL_MODELS, LocalFile, local_identity
from refinelab.models._model import Accounting, Backend, Model, RetryPolicy
from refinelab.models._prices import DEFAULT_PRICES, Price, PriceTable
from refinelab.models._resolve import (
    PROVIDERS,
    EndpointSettings,
    ModelsConfig,
    ModelSpec,
    load_models_config,
    open_model,
    resolve,
    url_problem,
)
from refinelab.models._types import Completion, GenerateConfig, Message, Reply, Retry, Usage

__all__ = [
    "DEFAULT_PRICES",
    "LOCAL_MODELS",
    "PROVIDERS",
    "Accounting",
    "Backend",
    "CacheMiss",
    "CacheMode",
    "Completion",
    "EndpointError",
    "EndpointFailed",
    "EndpointLimits",
    "EndpointSetting",
    "EndpointSettings",
    "FunctionModel",
    "GenerateConfig",
    "LocalBackend",
    "LocalFile",
    "LocalOptions",
    "Message",
    "Model",
    "ModelSpec",
    "ModelsConfig",
    "NotSupported",
    "Price",
    "PriceTable",
    "Reply",
    "ResponseCache",
    "Retry",
    "RetryPolicy",
    "Role",
    "RoleEndpoint",
    "ScriptedModel",
    "TransientError",
    "Usage",
    "cache_key",
    "choose_endpoint",
    "load_models_config",
    "local_identity",
    "open_model",
    "resolve",
    "url_problem",
]
