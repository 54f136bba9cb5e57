"""Loader for the data-file test vectors in ``tests/vectors/<operator>/*.json``.

A vector file holds one worked example, verbatim from a seed page (or a documented
derivation)::

    {
      "operator": "DML_OPERATOR_SLICE1",
      "source": "seeds/003 (DML_SLICE1_OPERATOR_DESC), Example 2",
      "feature_level": "6_4",                # optional
      "desc": { ... DxDispatch-shaped desc ... },
      "inputs": { "InputTensor": [flat values in row-major order] },
      "expected": { "OutputTensor": [flat values] },
      "expect_invalid": "regex"              # instead of "expected": desc must be rejected
    }

Values are reshaped to the member's TensorDesc Sizes and cast to its DataType.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dmlops import desc_from_json
from dmlops.descs import desc_class

VECTOR_DIR = Path(__file__).parent / "vectors"


@dataclass(frozen=True)
class Vector:
    name: str
    operator: str
    source: str
    desc: dict[str, Any]
    inputs: dict[str, list[Any]]
    expected: dict[str, list[Any]]
    feature_level: str | None
    expect_invalid: str | None

    def build(self) -> tuple[Any, dict[str, np.ndarray], dict[str, np.ndarray]]:
        """(desc, input arrays, expected arrays)."""
        desc = desc_from_json(self.operator, self.desc)
        tensors = desc.tensors()
        ins = {m: _array(v, tensors[m]) for m, v in self.inputs.items()}
        exp = {m: _array(v, tensors[m]) for m, v in self.expected.items()}
        return desc, ins, exp


def _array(values: list[Any], tensor: Any) -> np.ndarray:
    flat = np.array(
        [float(v) if isinstance(v, str) else v for v in values],
        dtype=np.float64 if tensor.dtype.kind == "f" else tensor.dtype,
    )
    return flat.astype(tensor.dtype).reshape(tensor.sizes)


def load_vectors(operator_dir: str | None = None) -> list[Vector]:
    """Every vector (or those of one operator folder), sorted by name."""
    paths = sorted(VECTOR_DIR.glob(f"{operator_dir or '*'}/*.json"))
    out = []
    for p in paths:
        data = json.loads(p.read_text())
        out.append(
            Vector(
                name=f"{p.parent.name}/{p.stem}",
                operator=data["operator"],
                source=data["source"],
                desc=data["desc"],
                inputs=data.get("inputs", {}),
                expected=data.get("expected", {}),
                feature_level=data.get("feature_level"),
                expect_invalid=data.get("expect_invalid"),
            )
        )
    return out


def operator_folder(operator: str) -> str:
    """The operator's folder under tests/vectors (its short name in lower case)."""
    return desc_class(operator).operator_type.name.lower()
