"""Misuse of the Python API raises documented dmlops errors that name the argument (issue 17, item 6).

Wrong types raise TypeError-derived errors (``ArgumentTypeError``; ``DescTypeError``, which is
also an ``InvalidDescError``, for desc and TensorDesc members); bad values raise the
ValueError-derived ones; an unknown feature level raises ``UnknownFeatureLevelError``, which
lists the known levels. Never an AttributeError, nor a TypeError from deep inside.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dmlops
from dmlops import DmlError
from dmlops.descs import desc_class, desc_from_json
from dmlops.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    DescTypeError,
    InvalidDescError,
    TensorMismatchError,
    UnknownEnumValueError,
    UnknownFeatureLevelError,
)

X = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
SLICE1 = {
    "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 4, 4]},
    "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
    "InputWindowOffsets": [0, 0, 0, 0],
    "InputWindowSizes": [1, 1, 2, 2],
    "InputWindowStrides": [1, 1, 1, 1],
}


def _desc() -> dmlops.OperatorDesc:
    return desc_from_json("SLICE1", SLICE1)


def _with(member: str, value: Any) -> dict[str, Any]:
    return {**SLICE1, member: value}


def _tensor_with(key: str, value: Any) -> dict[str, Any]:
    return {**SLICE1, "OutputTensor": {**SLICE1["OutputTensor"], key: value}}


# (id, call, error class, text the message must contain: the argument or member)
CASES: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    # dmlops.execute
    ("execute-inputs-list", lambda: dmlops.execute(_desc(), [X]), ArgumentTypeError, "inputs must be a mapping"),
    ("execute-inputs-None", lambda: dmlops.execute(_desc(), None), ArgumentTypeError, "inputs must be a mapping"),
    ("execute-desc-str", lambda: dmlops.execute("SLICE1", {"InputTensor": X}), ArgumentTypeError, "desc must be"),
    ("execute-desc-None", lambda: dmlops.execute(None, {"InputTensor": X}), ArgumentTypeError, "desc must be"),
    (
        "execute-outputs-list",
        lambda: dmlops.execute(_desc(), {"InputTensor": X}, outputs=[X]),
        ArgumentTypeError,
        "outputs",
    ),
    (
        "execute-outputs-value",
        lambda: dmlops.execute(_desc(), {"InputTensor": X}, outputs={"OutputTensor": "y"}),
        ArgumentTypeError,
        "outputs['OutputTensor']",
    ),
    (
        "execute-backend-list",
        lambda: dmlops.execute(_desc(), {"InputTensor": X}, backend=["cpu"]),
        ArgumentTypeError,
        "backend",
    ),
    (
        "execute-backend-None",
        lambda: dmlops.execute(_desc(), {"InputTensor": X}, backend=None),
        ArgumentTypeError,
        "backend",
    ),
    (
        "execute-strict-str",
        lambda: dmlops.execute(_desc(), {"InputTensor": X}, strict="yes"),
        ArgumentTypeError,
        "strict",
    ),
    ("execute-strict-int", lambda: dmlops.execute(_desc(), {"InputTensor": X}, strict=1), ArgumentTypeError, "strict"),
    (
        "execute-input-None",
        lambda: dmlops.execute(_desc(), {"InputTensor": None}),
        ArgumentTypeError,
        "inputs['InputTensor']",
    ),
    (
        "execute-input-str",
        lambda: dmlops.execute(_desc(), {"InputTensor": "abc"}),
        ArgumentTypeError,
        "inputs['InputTensor']",
    ),
    (
        "execute-input-key-int",
        lambda: dmlops.execute(_desc(), {"InputTensor": X, 1: X}),
        TensorMismatchError,
        "unexpected 1",
    ),
    # feature levels, wherever they are taken
    (
        "level-9_9",
        lambda: dmlops.execute(_desc(), {"InputTensor": X}, feature_level="9_9"),
        UnknownFeatureLevelError,
        "feature_level",
    ),
    (
        "level-3.5",
        lambda: dmlops.execute(_desc(), {"InputTensor": X}, feature_level=3.5),
        UnknownFeatureLevelError,
        "6_4",
    ),
    (
        "level-object",
        lambda: dmlops.execute(_desc(), {"InputTensor": X}, feature_level=object()),
        UnknownFeatureLevelError,
        "1_0",
    ),
    ("level-validate", lambda: _desc().validate("9_9"), UnknownFeatureLevelError, "known feature levels"),
    ("level-from_any-None", lambda: dmlops.FeatureLevel.from_any(None), UnknownFeatureLevelError, "DML_FEATURE_LEVEL"),
    (
        "level-wrapper",
        lambda: dmlops.slice1(X, [0] * 4, [1, 1, 2, 2], [1] * 4, feature_level="7_0"),
        UnknownFeatureLevelError,
        "7_0",
    ),
    (
        "enum-from_any",
        lambda: dmlops.InterpolationMode.from_any("CUBIC"),
        UnknownEnumValueError,
        "DML_INTERPOLATION_MODE",
    ),
    # desc_from_json / desc_class
    ("json-type-None", lambda: desc_from_json(None, {}), ArgumentTypeError, "operator_type"),
    ("json-type-int", lambda: desc_from_json(111, {}), ArgumentTypeError, "operator_type"),
    ("desc_class-bytes", lambda: desc_class(b"SLICE1"), ArgumentTypeError, "operator_type"),
    ("json-keys", lambda: desc_from_json("GATHER", {1: 2, None: 3}), DescTypeError, "member names must be strings"),
    # (a nested tensor's error is reported as DxDispatch's "Error parsing field", a DescParseError)
    (
        "json-tensor-keys",
        lambda: desc_from_json("SLICE1", _with("InputTensor", {1: 2})),
        InvalidDescError,
        "member names",
    ),
    ("json-desc-list", lambda: desc_from_json("SLICE1", [1, 2]), InvalidDescError, "Expected a JSON object"),
    # desc and TensorDesc constructors
    ("TensorDesc-sizes-None", lambda: dmlops.TensorDesc(data_type="FLOAT32", sizes=None), DescTypeError, "Sizes"),
    (
        "TensorDesc-sizes-float",
        lambda: dmlops.TensorDesc(data_type="FLOAT32", sizes=(2.0, 2)),
        DescTypeError,
        "Sizes[0]",
    ),
    (
        "TensorDesc-sizes-bool",
        lambda: dmlops.TensorDesc(data_type="FLOAT32", sizes=(True, 2)),
        DescTypeError,
        "Sizes[0]",
    ),
    ("TensorDesc-sizes-dict", lambda: dmlops.TensorDesc(data_type="FLOAT32", sizes={"a": 1}), DescTypeError, "Sizes"),
    (
        "TensorDesc-sizes-negative",
        lambda: dmlops.TensorDesc(data_type="FLOAT32", sizes=(-1,)),
        InvalidDescError,
        "Sizes[0]",
    ),
    (
        "TensorDesc-strides-str",
        lambda: dmlops.TensorDesc(data_type="FLOAT32", sizes=(2,), strides="1"),
        DescTypeError,
        "Strides",
    ),
    ("TensorDesc-type-None", lambda: dmlops.TensorDesc(data_type=None, sizes=(2,)), DescTypeError, "DataType"),
    (
        "TensorDesc-type-unknown",
        lambda: dmlops.TensorDesc(data_type="FLOAT33", sizes=(2,)),
        InvalidDescError,
        "DataType",
    ),
    (
        "TensorDesc-flags-list",
        lambda: dmlops.TensorDesc(data_type="FLOAT32", sizes=(2,), flags=[]),
        DescTypeError,
        "Flags",
    ),
    (
        "TensorDesc-total-float",
        lambda: dmlops.TensorDesc(data_type="FLOAT32", sizes=(2,), total_tensor_size_in_bytes=8.0),
        DescTypeError,
        "TotalTensorSizeInBytes",
    ),
    (
        "desc-tensor-None",
        lambda: desc_class("SLICE1")(**{**_kwargs(), "input_tensor": None}),
        DescTypeError,
        "InputTensor",
    ),
    (
        "desc-array-None",
        lambda: desc_class("SLICE1")(**{**_kwargs(), "input_window_sizes": None}),
        DescTypeError,
        "InputWindowSizes",
    ),
    (
        "desc-array-float",
        lambda: desc_class("SLICE1")(**{**_kwargs(), "input_window_sizes": (1, 1, 2.5, 2)}),
        DescTypeError,
        "InputWindowSizes[2]",
    ),
    (
        "desc-enum-object",
        lambda: dmlops.roi_align(X, [[0, 0, 4, 4]], [0], 2, interpolation_mode=object()),
        DescTypeError,
        "InterpolationMode",
    ),
    (
        "desc-float-str",
        lambda: dmlops.roi_align(X, [[0, 0, 4, 4]], [0], 2, out_of_bounds_input_value="0"),
        DescTypeError,
        "OutOfBoundsInputValue",
    ),
    # functional wrappers
    ("slice1-offsets-None", lambda: dmlops.slice1(X, None, [1, 1, 2, 2], [1] * 4), ArgumentTypeError, "offsets"),
    ("slice1-sizes-int", lambda: dmlops.slice1(X, [0] * 4, 4, [1] * 4), ArgumentTypeError, "sizes"),
    ("slice1-strides-str", lambda: dmlops.slice1(X, [0] * 4, [1, 1, 2, 2], "1111"), ArgumentTypeError, "strides"),
    (
        "slice1-strides-float",
        lambda: dmlops.slice1(X, [0] * 4, [1, 1, 2, 2], [1, 1, 1.0, 1]),
        ArgumentTypeError,
        "strides[2]",
    ),
    (
        "slice1-output_sizes",
        lambda: dmlops.slice1(X, [0] * 4, [1, 1, 2, 2], [1] * 4, output_sizes=2),
        ArgumentTypeError,
        "output_sizes",
    ),
    ("slice1-x-None", lambda: dmlops.slice1(None, [0], [1], [1]), ArgumentTypeError, "x must be"),
    ("max_pooling2-window-None", lambda: dmlops.max_pooling2(X, window_size=None), ArgumentTypeError, "window_size"),
    ("max_pooling2-strides-int", lambda: dmlops.max_pooling2(X, [2, 2], strides=2), ArgumentTypeError, "strides"),
    (
        "max_pooling2-padding-none-item",
        lambda: dmlops.max_pooling2(X, [2, 2], start_padding=[None, 0]),
        ArgumentTypeError,
        "start_padding[0]",
    ),
    (
        "max_pooling_grad-window",
        lambda: dmlops.max_pooling_grad(X, X, window_size="22"),
        ArgumentTypeError,
        "max_pooling_grad: window_size",
    ),
    (
        "max_pooling2-out-dict",
        lambda: dmlops.max_pooling2(X, [2, 2], out={}),
        ArgumentTypeError,
        "outputs['OutputTensor']",
    ),
    ("resample2-sizes-None", lambda: dmlops.resample2(X, None), ArgumentTypeError, "output_sizes"),
    ("resample2-sizes-float", lambda: dmlops.resample2(X, [1, 1, 8.0, 8]), ArgumentTypeError, "output_sizes[2]"),
    ("resample2-scales-float", lambda: dmlops.resample2(X, [1, 1, 8, 8], scales=2.0), ArgumentTypeError, "scales"),
    (
        "resample_grad1-offsets",
        lambda: dmlops.resample_grad1(X, [1, 1, 2, 2], input_pixel_offsets=[None] * 4),
        ArgumentTypeError,
        "input_pixel_offsets[0]",
    ),
    ("gather-x-None", lambda: dmlops.gather(None, np.array([0], np.uint32), axis=0), ArgumentTypeError, "x must be"),
    ("gather-indices-str", lambda: dmlops.gather(X, "0", axis=0), ArgumentTypeError, "indices"),
    ("gather-axis-None", lambda: dmlops.gather(X, np.array([0], np.uint32), axis=None), DescTypeError, "Axis"),
    ("gather-axis-float", lambda: dmlops.gather(X, np.array([0], np.uint32), axis=1.0), DescTypeError, "Axis"),
    ("gather-axis-range", lambda: dmlops.gather(X, np.array([0], np.uint32), axis=9), InvalidDescError, "Axis"),
    ("gather-out-list", lambda: dmlops.gather(X, np.array([0], np.uint32), axis=0, out=[]), ArgumentTypeError, "out"),
    ("roi_align-roi-None", lambda: dmlops.roi_align(X, None, [0], 2), ArgumentTypeError, "roi must be"),
    ("roi_align-batch-str", lambda: dmlops.roi_align(X, [[0, 0, 4, 4]], "0", 2), ArgumentTypeError, "batch_indices"),
    (
        "roi_align-batch-float",
        lambda: dmlops.roi_align(X, [[0, 0, 4, 4]], [0.5], 2),
        ArgumentTypeError,
        "batch_indices",
    ),
    ("roi_align-size-None", lambda: dmlops.roi_align(X, [[0, 0, 4, 4]], [0], None), ArgumentTypeError, "output_size"),
    ("roi_align-size-float", lambda: dmlops.roi_align(X, [[0, 0, 4, 4]], [0], 2.5), ArgumentTypeError, "output_size"),
    (
        "roi_align-size-triple",
        lambda: dmlops.roi_align(X, [[0, 0, 4, 4]], [0], (2, 2, 2)),
        ArgumentValueError,
        "output_size",
    ),
    (
        "roi_align-scale-str",
        lambda: dmlops.roi_align(X, [[0, 0, 4, 4]], [0], 2, spatial_scale="1"),
        ArgumentTypeError,
        "spatial_scale",
    ),
    (
        "roi_align-scale-triple",
        lambda: dmlops.roi_align(X, [[0, 0, 4, 4]], [0], 2, spatial_scale=(1, 2, 3)),
        ArgumentValueError,
        "spatial_scale",
    ),
]


def _kwargs() -> dict[str, Any]:
    d = _desc()
    return {info.attr: getattr(d, info.attr) for info in d.member_infos()}


@pytest.mark.parametrize(("call", "error", "names"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_misuse_raises_a_documented_error_naming_the_argument(
    call: Callable[[], Any], error: type[Exception], names: str
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error) as info:
            call()
    assert names in str(info.value)
    assert isinstance(info.value, DmlError)


def test_type_errors_are_type_errors_and_desc_type_errors_are_invalid_descs() -> None:
    assert issubclass(ArgumentTypeError, TypeError)
    assert issubclass(DescTypeError, TypeError) and issubclass(DescTypeError, InvalidDescError)
    assert issubclass(UnknownFeatureLevelError, ValueError) and issubclass(ArgumentValueError, ValueError)


def test_feature_level_error_lists_every_known_level() -> None:
    with pytest.raises(UnknownFeatureLevelError) as info:
        dmlops.FeatureLevel.from_any("9_9")
    for level in dmlops.FeatureLevel:
        assert level.name[1:] in str(info.value)


JUNK = [None, "abc", {"a": 1}, [None], [[1, 2]], 1.5, np.float32(2.0), True, object(), b"x", {1: 2, None: 3}, (), [()]]
GOOD: dict[str, dict[str, Any]] = {
    "gather": dict(x=np.arange(4, dtype=np.float32), indices=np.array([1, 0], np.uint32), axis=0),
    "slice1": dict(x=X, offsets=[0, 0, 0, 0], sizes=[1, 1, 2, 2], strides=[1, 1, 1, 1]),
    "max_pooling2": dict(x=X, window_size=[2, 2]),
    "max_pooling_grad": dict(x=X, dy=np.ones((1, 1, 3, 3), np.float32), window_size=[2, 2]),
    "resample2": dict(x=X, output_sizes=[1, 1, 2, 2]),
    "resample_grad1": dict(dy=X, input_sizes=[1, 1, 2, 2]),
    "roi_align": dict(
        x=X, roi=np.array([[0, 0, 4, 4]], np.float32), batch_indices=np.array([0], np.uint32), output_size=2
    ),
}


@pytest.mark.parametrize("function", sorted(GOOD))
def test_every_wrapper_argument_with_junk_raises_only_dmlops_errors(function: str) -> None:
    # The sweep behind the cases above: every parameter of every functional wrapper, each junk value.
    f = getattr(dmlops, function)
    f(**GOOD[function])
    for parameter in inspect.signature(f).parameters:
        for junk in JUNK:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    f(**{**GOOD[function], parameter: junk})
                except DmlError as exc:
                    assert not isinstance(exc, AttributeError), (parameter, junk, exc)
                except Exception as exc:  # pragma: no cover - the failure message is the point
                    pytest.fail(f"dmlops.{function}({parameter}={junk!r}) raised {type(exc).__name__}: {exc}")


@pytest.mark.parametrize("op", sorted(dmlops.REGISTRY))
def test_every_desc_member_with_junk_raises_only_dmlops_errors(op: str) -> None:
    cls = desc_class(op)
    for info in cls.member_infos():
        for junk in JUNK:
            kwargs = {i.attr: None for i in cls.member_infos()}
            kwargs[info.attr] = junk
            try:
                cls(**kwargs)
            except DmlError:
                pass
            except Exception as exc:  # pragma: no cover
                pytest.fail(f"{cls.__name__}({info.attr}={junk!r}) raised {type(exc).__name__}: {exc}")


def test_array_protocol_producers_are_arrays() -> None:
    # Objects that only expose an array protocol (NumPy's here; __cuda_array_interface__ and
    # DLPack on the GPU) are arrays to dmlops.execute, not misuse.
    class Producer:
        def __init__(self, arr: np.ndarray) -> None:
            self._arr = arr

        def __array__(self, dtype=None, copy=None):
            return self._arr

    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    desc = dmlops.desc_from_json(
        "SLICE1",
        {
            "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 4, 4]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 2]},
            "InputWindowOffsets": [0, 0, 0, 0],
            "InputWindowSizes": [1, 1, 4, 4],
            "InputWindowStrides": [1, 1, 2, 2],
        },
    )
    got = dmlops.execute(desc, {"InputTensor": Producer(x)})["OutputTensor"]
    np.testing.assert_array_equal(got, x[:, :, ::2, ::2])


def test_a_repeated_call_is_checked_like_the_first() -> None:
    """After a valid call, the same desc with wrong arguments still gets the full checks'
    errors (the repeated-call shortcut of ``dmlops.execute`` applies to valid calls only)."""
    t = {"DataType": "FLOAT32", "Sizes": [4]}
    desc = desc_from_json("ELEMENT_WISE_ADD", {"ATensor": t, "BTensor": t, "OutputTensor": t})
    a = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(dmlops.execute(desc, {"ATensor": a, "BTensor": a})["OutputTensor"], 2 * a)
    with pytest.raises(TensorMismatchError, match="missing BTensor"):
        dmlops.execute(desc, {"ATensor": a})
    with pytest.raises(TensorMismatchError, match="unknown output"):
        dmlops.execute(desc, {"ATensor": a, "BTensor": a}, outputs={"Nope": a})
    with pytest.raises(ArgumentTypeError, match="strict must be a bool"):
        dmlops.execute(desc, {"ATensor": a, "BTensor": a}, strict="yes")
    # a nested list goes the full path (the shortcut declines it), whose backend names its dtype
    with pytest.raises(TensorMismatchError, match="expected dtype float32"):
        dmlops.execute(desc, {"ATensor": [0, 1, 2, 3], "BTensor": a})
