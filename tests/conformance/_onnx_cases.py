"""Load ONNX backend node tests (model + first data set) as plain NumPy data.

The onnx 1.17-1.22 wheels ship the node tests on disk
(``onnx/backend/test/data/node/test_<name>/model.onnx`` with
``test_data_set_0/{input,output}_<i>.pb``). From onnx 1.23 on the wheel ships no
data and ``onnx.backend.test.loader.load_model_tests(kind="node")`` builds the
same cases in memory (seeded, so deterministic per onnx version). This loader uses
the on-disk files when they exist and falls back to the in-memory path.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper


@dataclass(frozen=True)
class NodeCase:
    """One ONNX node test: its single node, attributes and first data set.

    Attributes
    ----------
    name : str
        Test name without the ``test_`` prefix (``"slice_neg_steps"``).
    op_type : str
        ONNX op type of the node (``"Slice"``).
    opset : int
        Default-domain opset the model imports.
    attrs : dict
        Node attributes as Python values (``helper.get_attribute_value``; strings decoded).
    inputs : tuple of (ndarray or None)
        One entry per node input, ``None`` for an omitted optional input (empty name).
    outputs : tuple of ndarray
        Expected outputs, one per node output.
    model : onnx.ModelProto
        The model, for running it through an independent runtime.
    """

    name: str
    op_type: str
    opset: int
    attrs: dict[str, Any]
    inputs: tuple[np.ndarray | None, ...]
    outputs: tuple[np.ndarray, ...]
    model: onnx.ModelProto = field(repr=False)


def _node_dir() -> str:
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")


def _attr_value(attr: onnx.AttributeProto) -> Any:
    value = helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode() for v in value]
    return value


def _read_tensor(path: str) -> np.ndarray:
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def _sorted_pb(directory: str, prefix: str) -> list[str]:
    files = [f for f in os.listdir(directory) if f.startswith(prefix) and f.endswith(".pb")]
    return [os.path.join(directory, f) for f in sorted(files, key=lambda f: int(f[len(prefix) : -3]))]


@functools.lru_cache(maxsize=1)
def _in_memory_cases() -> dict[str, Any]:
    from onnx.backend.test.loader import load_model_tests

    return {case.name.removeprefix("test_"): case for case in load_model_tests(kind="node")}


def _load_raw(name: str) -> tuple[onnx.ModelProto, list[np.ndarray], list[np.ndarray]]:
    case_dir = os.path.join(_node_dir(), f"test_{name}")
    if not os.path.isdir(case_dir):
        case = _in_memory_cases().get(name)
        if case is None:
            raise KeyError(f"no ONNX node test named test_{name} in onnx {onnx.__version__}")
        if case.model is not None and case.data_sets:
            ins, outs = case.data_sets[0]
            return case.model, [np.asarray(a) for a in ins], [np.asarray(a) for a in outs]
        case_dir = case.model_dir
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    data = os.path.join(case_dir, "test_data_set_0")
    return (
        model,
        [_read_tensor(p) for p in _sorted_pb(data, "input_")],
        [_read_tensor(p) for p in _sorted_pb(data, "output_")],
    )


@functools.cache
def load_node_case(name: str) -> NodeCase:
    """The ONNX node test ``test_<name>`` as a :class:`NodeCase`."""
    model, ins, outs = _load_raw(name)
    (node,) = model.graph.node
    opset = max(op.version for op in model.opset_import if op.domain in ("", "ai.onnx"))
    # Graph inputs are the non-empty node inputs in order; the data set follows the graph inputs.
    by_name = {vi.name: arr for vi, arr in zip(model.graph.input, ins)}
    inputs = tuple(by_name.get(n) if n else None for n in node.input)
    attrs = {a.name: _attr_value(a) for a in node.attribute}
    return NodeCase(name, node.op_type, opset, attrs, inputs, tuple(outs), model)


@functools.lru_cache(maxsize=1)
def all_node_test_names() -> tuple[str, ...]:
    """Every node test name (without ``test_``) this onnx provides."""
    directory = _node_dir()
    if os.path.isdir(directory) and os.listdir(directory):
        names = [
            d for d in os.listdir(directory) if d.startswith("test_") and os.path.isdir(os.path.join(directory, d))
        ]
        return tuple(sorted(n.removeprefix("test_") for n in names))
    return tuple(sorted(_in_memory_cases()))


def node_test_names(prefixes: Iterable[str], *, exclude: Iterable[str] = ()) -> list[str]:
    """Node tests whose name starts with one of ``prefixes`` and none of ``exclude``."""
    prefixes, exclude = tuple(prefixes), tuple(exclude)
    return [n for n in all_node_test_names() if n.startswith(prefixes) and not n.startswith(exclude)]


def node_model(
    op_type: str,
    inputs: dict[str, np.ndarray],
    outputs: dict[str, tuple[int, tuple[int, ...] | None]],
    *,
    opset: int,
    **attrs: Any,
) -> onnx.ModelProto:
    """A one-node model (IR version 10, which every onnxruntime reads) for ORT runs.

    ``outputs`` maps output name -> (TensorProto element type, shape or None).
    """
    graph_inputs = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape))
        for n, a in inputs.items()
    ]
    graph_outputs = [
        helper.make_tensor_value_info(n, t, None if s is None else list(s)) for n, (t, s) in outputs.items()
    ]
    node = helper.make_node(op_type, list(inputs), list(outputs), **attrs)
    graph = helper.make_graph([node], f"{op_type}_oracle", graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def run_ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Run a model on onnxruntime's CPU provider."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return [np.asarray(a) for a in session.run(None, feeds)]
