"""The model layer: any OpenAI-compatible endpoint or a GGUF model run in-process (``local:``), with
concurrency, retries, usage and cost, a response cache, and model test doubles (every double, the fake
server included: :mod:`refinelab.testing`).
Strategies call ``await model.generate(messages, config)``."""

from refinelab.errors import CacheMiss, EndpointError, EndpointFailed, NotSupported, TransientError
from refinelab.models._backends import BACKENDS, BackendKind, OpenRequest, backend_kind, open_model
from refinelab.models._cache import CacheMode, ResponseCache, cache_key
from refinelab.models._doubles import FunctionModel, ScriptedModel
from refinelab.models._endpoints import EndpointSetting, Role, RoleEndpoint, choose_endpoint
from refinelab.models._limits import EndpointLimits
from refinelab.models._local import LocalBackend, LocalOptions
from refinelab.models._local_files import LOCAL_MODELS, LocalFile, local_identity
from refinelab.models._model import Accounting, Backend, Model, RetryPolicy
from refinelab.models._prices import DEFAULT_PRICES, LISTED, ListedPrice, Price, PriceTable
from refinelab.models._profiles import (
    EFFORT_LEVELS,
    PROFILES,
    SERVERS,
    Accepts,
    EffortControl,
    ModelProfile,
    ProfileOverrides,
    TokenLimit,
    check_effort,
    checked_effort,
    effort_problem,
    profile_for,
)
from refinelab.models._resolve import (
    PROVIDERS,
    EndpointSettings,
    ModelsConfig,
    ModelSpec,
    load_models_config,
    resolve,
    url_problem,
)
from refinelab.models._thinking import split_thinking
from refinelab.models._types import Completion, GenerateConfig, Message, NotSent, Reply, Retry, Usage

__all__ = [
    "BACKENDS",
    "DEFAULT_PRICES",
    "EFFORT_LEVELS",
    "LISTED",
    "LOCAL_MODELS",
    "PROFILES",
    "PROVIDERS",
    "SERVERS",
    "Accepts",
    "Accounting",
    "Backend",
    "BackendKind",
    "CacheMiss",
    "CacheMode",
    "Completion",
    "EffortControl",
    "EndpointError",
    "EndpointFailed",
    "EndpointLimits",
    "EndpointSetting",
    "EndpointSettings",
    "FunctionModel",
    "GenerateConfig",
    "ListedPrice",
    "LocalBackend",
    "LocalFile",
    "LocalOptions",
    "Message",
    "Model",
    "ModelProfile",
    "ModelSpec",
    "ModelsConfig",
    "NotSent",
    "NotSupported",
    "OpenRequest",
    "Price",
    "PriceTable",
    "ProfileOverrides",
    "Reply",
    "ResponseCache",
    "Retry",
    "RetryPolicy",
    "Role",
    "RoleEndpoint",
    "ScriptedModel",
    "TokenLimit",
    "TransientError",
    "Usage",
    "backend_kind",
    "cache_key",
    "check_effort",
    "checked_effort",
    "choose_endpoint",
    "effort_problem",
    "load_models_config",
    "local_identity",
    "open_model",
    "profile_for",
    "resolve",
    "split_thinking",
    "url_problem",
]
