"""Reading and running DxDispatch JSON models (``dmlops run``).

``from dmlops.model import load_model, Executor``. Models are parsed by rapidjson
(python-rapidjson), DxDispatch's own parser, with its comment and trailing-comma
flags; ``import dmlops`` does not import this package.
"""

from __future__ import annotations

from .errors import ModelError
from .executor import Executor
from .reader import Model, load_model, parse_json_text, parse_model
from .resources import MAX_BUFFER_BYTES, ResourceSpec

__all__ = [
    "MAX_BUFFER_BYTES",
    "Executor",
    "Model",
    "ModelError",
    "ResourceSpec",
    "load_model",
    "parse_json_text",
    "parse_model",
]
