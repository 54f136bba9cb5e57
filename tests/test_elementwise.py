"""The element-wise family's NumPy reference: page examples, DirectML's probed rules, the hooks.

The differential tests against the real DirectML are in
tests/directml/test_directml_elementwise.py; these run everywhere.
"""

from __future__ import annotations

import numpy as np
import pytest

import dmlops
from conftest import to_numpy
from dmlops.descs import desc_class, desc_from_json
from dmlops.descs.elementwise import OPERATORS, REFERENCE_OPERATORS
from dmlops.errors import InvalidDescError, UnsupportedError
from dmlops.reference import elementwise as reference
from oracles.elementwise_rules import RULE_DESCS


def test_the_family_claims_its_92_operators() -> None:
    assert len(OPERATORS) == 92 and REFERENCE_OPERATORS <= OPERATORS
    assert set(reference.OPERATORS) == REFERENCE_OPERATORS
    for name in OPERATORS:
        cls = desc_class(name)
        assert cls.family == "elementwise"
        if name not in REFERENCE_OPERATORS:
            assert cls.backends == ("directml",)
        else:  # the cpu and cuda backends run every operator the reference does
            assert cls.backends == ("numpy", "cpu", "cuda", "directml")
    import dmlops.cpu.elementwise as cpu
    import dmlops.cuda.elementwise as cuda  # its tables import without a GPU
    from dmlops.descs.elementwise import CUDA_OPERATORS

    assert set(cpu.OPERATORS) == REFERENCE_OPERATORS
    assert set(cuda.OPERATORS) == CUDA_OPERATORS  # the claim lists what the cuda module runs
    assert desc_class("GEMM").family == "matrix"  # another family's


def test_every_operator_of_the_family_runs_on_numpy_with_a_function() -> None:
    assert REFERENCE_OPERATORS == OPERATORS
    for name in ("quantize_linear", "dequantize_linear", "quantized_linear_add"):
        assert callable(getattr(dmlops, name))


def test_an_unsupported_data_type_is_refused_naming_directml() -> None:
    with pytest.raises(UnsupportedError, match="directml"):
        dmlops.divide(np.ones(2, np.int64), np.ones(2, np.int64))


def test_float_modulus_is_refused_not_guessed() -> None:
    with pytest.raises(UnsupportedError, match="directml"):
        dmlops.modulus_floor(np.ones(2, np.float32), np.ones(2, np.float32))


# -- page examples and hand-computed cases --------------------------------------------------


def test_add1_with_fused_relu() -> None:
    a = np.array([1, -2, 3], np.float32)
    b = np.array([1, 1, -5], np.float32)
    got = dmlops.add1(a, b, fused_activation="ACTIVATION_RELU")
    np.testing.assert_array_equal(got, [2, 0, 0])
    assert np.signbit(got[1]) and np.signbit(got[2])  # DirectML's fused RELU: x * (x > 0)


def test_identity_scale_bias_is_two_float32_roundings() -> None:
    x = np.array([1, 2, 3], np.float32)
    np.testing.assert_array_equal(dmlops.identity(x, scale_bias=(0.5, 3.0)), [3.5, 4, 4.5])
    # an integer input: float32 arithmetic, the result truncated and saturated
    got = dmlops.identity(np.array([-3, 1, 5, 100], np.int8), scale_bias=(1.5, 0.25))
    np.testing.assert_array_equal(got, [-4, 1, 7, 127])


def test_integer_division_and_moduli_follow_directml() -> None:
    a = np.array([7, -7, 7, -7, 5, -5, 0, -128, 127], np.int8)
    b = np.array([2, 2, -2, -2, 0, 0, 0, -1, -1], np.int8)
    np.testing.assert_array_equal(dmlops.divide(a, b), [3, -3, -3, 3, -1, 1, -1, -128, -127])
    np.testing.assert_array_equal(dmlops.modulus_truncate(a, b), [1, -1, 1, -1, 5, -5, 0, 0, 0])
    np.testing.assert_array_equal(dmlops.modulus_floor(a, b), [1, 1, -1, -1, -1, 1, -1, 0, 0])
    u = np.array([7, 255, 0], np.uint8)
    v = np.array([2, 0, 0], np.uint8)
    np.testing.assert_array_equal(dmlops.divide(u, v), [3, 255, 255])
    np.testing.assert_array_equal(dmlops.modulus_truncate(u, v), [1, 255, 255])


def test_shift_counts_are_taken_modulo_32() -> None:
    x = np.full(6, 0b10110101, np.uint8)
    s = np.array([1, 7, 8, 33, 39, 40], np.uint8)
    np.testing.assert_array_equal(dmlops.bit_shift_left(x, s), [106, 128, 0, 106, 128, 0])
    np.testing.assert_array_equal(dmlops.bit_shift_right(x, s), [90, 1, 0, 90, 1, 0])
    y = np.full(3, 0xB5000001, np.uint32)
    np.testing.assert_array_equal(dmlops.bit_shift_left(y, np.array([32, 33, 64], np.uint32)), [y[0], 0x6A000002, y[0]])


def test_abs_negate_saturate_on_8_bit_and_wrap_on_32_bit() -> None:
    np.testing.assert_array_equal(dmlops.abs(np.array([-128, -5], np.int8)), [127, 5])
    np.testing.assert_array_equal(dmlops.negate(np.array([-128, 5], np.int8)), [127, -5])
    np.testing.assert_array_equal(dmlops.abs(np.array([-(2**31)], np.int32)), [-(2**31)])
    np.testing.assert_array_equal(dmlops.add(np.array([125], np.int8), np.array([10], np.int8)), [-121])


def test_max_min_clip_threshold_with_nan() -> None:
    n = np.nan
    x = np.array([n, 1, n, -0.0, 0.0], np.float32)
    y = np.array([1, n, n, 0.0, -0.0], np.float32)
    got = dmlops.max(x, y)
    np.testing.assert_array_equal(got, [1, 1, n, 0, 0])
    assert list(np.signbit(got)) == [False, False, False, True, False]  # a tie gives A
    c = np.array([n, -5, 5, 0.5], np.float32)
    np.testing.assert_array_equal(dmlops.clip(c, min=-1.0, max=1.0), [1, -1, 1, 0.5])
    np.testing.assert_array_equal(dmlops.clip(c, min=1.0, max=-1.0), [1, 1, 1, 1])
    np.testing.assert_array_equal(dmlops.threshold(c, min=1.0), [1, 1, 5, 1])


def test_round_modes() -> None:
    t = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7, -2.7], np.float32)
    np.testing.assert_array_equal(
        dmlops.round(t, rounding_mode="HALVES_TO_NEAREST_EVEN"), [-2, -2, -0.0, 0, 2, 2, 3, -3]
    )
    np.testing.assert_array_equal(dmlops.round(t, rounding_mode="TOWARD_ZERO"), [-2, -1, 0, 0, 1, 2, 2, -2])
    np.testing.assert_array_equal(dmlops.round(t, rounding_mode="TOWARD_INFINITY"), [-3, -2, -1, 1, 2, 3, 3, -3])
    assert not np.signbit(dmlops.round(np.array([-0.0], np.float32), rounding_mode="TOWARD_INFINITY"))[0]


def test_is_infinity_modes_and_sign() -> None:
    x = np.array([np.inf, -np.inf, np.nan, 1], np.float32)
    np.testing.assert_array_equal(dmlops.is_infinity(x, infinity_mode="EITHER"), [1, 1, 0, 0])
    np.testing.assert_array_equal(dmlops.is_infinity(x, infinity_mode="POSITIVE"), [1, 0, 0, 0])
    np.testing.assert_array_equal(dmlops.is_infinity(x, infinity_mode="NEGATIVE"), [0, 1, 0, 0])
    got = dmlops.sign(np.array([np.nan, -0.0, -3, 2], np.float32))
    np.testing.assert_array_equal(got, [0, 0, -1, 1])
    assert not np.signbit(got[1])


def test_softmax_axes_and_hardmax_ties() -> None:
    x = np.array([[1, 3, 3, 2], [5, 1, 5, 0]], np.float32)
    np.testing.assert_array_equal(dmlops.hardmax1(x, axes=[0, 1]), [[0, 0, 0, 0], [1, 0, 0, 0]])
    np.testing.assert_array_equal(dmlops.hardmax1(x, axes=[0]), [[0, 1, 0, 1], [1, 0, 1, 0]])
    np.testing.assert_array_equal(dmlops.hardmax(np.array([[np.nan, 1, 2]], np.float32)), [[1, 0, 0]])
    got = dmlops.softmax1(x, axes=[1])
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(1, keepdims=True), rtol=1e-6)
    # LOG_SOFTMAX floors a NaN sum at 1e-20 (probed): [nan, 1, 2, 0] -> x - 2 + 46.0517
    got = dmlops.log_softmax(np.array([[np.nan, 1, 2, 0]], np.float32))
    np.testing.assert_allclose(got[0, 1:], [45.0517, 46.0517, 44.0517], rtol=1e-5)


def test_broadcast_operand_reads_through_zero_strides() -> None:
    a = np.array([[1, 2, 3]], np.float32)
    b = np.array([[10], [20]], np.float32)
    np.testing.assert_array_equal(dmlops.add(a, b), a + b)
    np.testing.assert_array_equal(dmlops.logical_less_than(a, np.float32(2)), [[1, 0, 0]])


def test_activations_hand_computed() -> None:
    x = np.array([-2, -0.5, 0, 0.5, 2], np.float32)
    np.testing.assert_array_equal(dmlops.relu(x), [0, 0, 0, 0.5, 2])
    np.testing.assert_allclose(dmlops.leaky_relu(x, alpha=0.1), [-0.2, -0.05, 0, 0.5, 2], rtol=1e-6)
    np.testing.assert_allclose(dmlops.sigmoid(x), 1 / (1 + np.exp(-x.astype(np.float64))), rtol=1e-6)
    np.testing.assert_allclose(dmlops.hard_sigmoid(x, alpha=0.2, beta=0.5), [0.1, 0.4, 0.5, 0.6, 0.9], rtol=1e-6)
    np.testing.assert_array_equal(dmlops.thresholded_relu(x, alpha=0.5), [0, 0, 0, 0, 2])
    np.testing.assert_allclose(dmlops.shrink(x, bias=0.25, threshold=0.5), [-1.75, 0, 0, 0, 1.75])
    np.testing.assert_allclose(dmlops.gelu(np.array([1.0], np.float32)), [0.8413447460685429], rtol=1e-7)
    np.testing.assert_array_equal(dmlops.relu_grad(x, np.ones(5, np.float32)), [0, 0, 0, 1, 1])


@pytest.mark.parametrize("op", ["ELEMENT_WISE_CLIP_GRAD", "ELEMENT_WISE_CLIP_GRAD1"])
def test_clip_grad_passes_the_gradient_strictly_inside(op: str) -> None:
    # Probed on DirectML 1.15.4 with Min -1, Max 1: the bounds themselves, NaN and outside give +0;
    # a NaN or inf gradient outside does not leak (a select, not a product).
    t = {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 7]}
    bounds = (
        {"Min": -1.0, "Max": 1.0}
        if op == "ELEMENT_WISE_CLIP_GRAD"
        else {"MinMaxDataType": "FLOAT32", "Min": {"Float32": -1.0}, "Max": {"Float32": 1.0}}
    )
    desc = dmlops.desc_from_json(op, {"InputTensor": t, "InputGradientTensor": t, "OutputGradientTensor": t, **bounds})
    x = np.array([-2, -1, 0, 1, 2, np.nan, -0.0], np.float32).reshape(1, 1, 1, 7)
    dy = np.array([np.nan, 2, 3, 4, np.inf, 6, 7], np.float32).reshape(1, 1, 1, 7)
    got = dmlops.execute(desc, {"InputTensor": x, "InputGradientTensor": dy})["OutputGradientTensor"]
    np.testing.assert_array_equal(got.ravel(), np.array([0, 0, 3, 0, 0, 0, 7], np.float32))
    assert not np.signbit(got.ravel()[0])


# -- quantization ---------------------------------------------------------------------------


def test_quantize_linear_page_formula_with_ties_to_even() -> None:
    # clamp(round(x / scale) + zero_point, 0, 255); halves go to the even neighbour
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 300.0, 7.0, -7.0], np.float32)
    got = dmlops.quantize_linear(x, np.full(8, 1.0, np.float32), np.full(8, 3, np.uint8))
    np.testing.assert_array_equal(got, [3, 5, 5, 3, 1, 255, 10, 0])
    assert got.dtype == np.uint8
    got = dmlops.quantize_linear(x, np.float32(2.0), np.int8(-3))  # scalars broadcast through 0-strides
    np.testing.assert_array_equal(got, [-3, -2, -2, -3, -4, 127, 1, -7])
    assert got.dtype == np.int8


def test_quantize_linear_divides_in_float32() -> None:
    # 0.3 * 4.5 rounds (float32) to 1.3499999; / 0.3 gives 4.5 exactly -> 4 (even), while
    # the product with float32(1 / 0.3) gives 4.4999995 -> 4 too; 1.35 / 0.3 (float32) is 4.5000005 -> 5
    s = np.float32(0.3)
    x = np.array([np.float32(s * np.float32(4.5)), np.float32(1.35)], np.float32)
    got = dmlops.quantize_linear(x, s, np.uint8(0))
    assert list(got) == [int(np.rint(np.float32(v / s))) for v in x]
    # an INT32 input is converted to float32 first: 16777217 -> 16777216, / 2^16 = 256 -> 255
    got = dmlops.quantize_linear(np.array([16777217, 129], np.int32), np.float32(65536.0 / 128), np.uint8(0))
    np.testing.assert_array_equal(got, [255, 0])


def test_quantize_linear_converts_as_d3d() -> None:
    # NaN -> 0; +-inf and huge values saturate; a zero scale gives +-inf or NaN
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 1.0, 0.0], np.float32)
    scale = np.array([1, 1, 1, 1, 1, 0, 0], np.float32)
    np.testing.assert_array_equal(dmlops.quantize_linear(x, scale, np.uint8(3)), [0, 255, 0, 255, 0, 255, 0])
    np.testing.assert_array_equal(dmlops.quantize_linear(x, scale, np.int8(3)), [0, 127, -128, 127, -128, 127, 0])


def test_dequantize_linear_subtracts_in_float32() -> None:
    got = dmlops.dequantize_linear(np.array([0, 3, 255], np.uint8), np.float32(0.5), np.uint8(3))
    np.testing.assert_array_equal(got, [-1.5, 0.0, 126.0])
    assert got.dtype == np.float32
    # float32(2^31 - 1) - float32(-5) = 2^31 (no wrap-around); 16777217 - 1 = 16777216 - 1
    q = np.array([2**31 - 1, 16777217], np.int32)
    got = dmlops.dequantize_linear(q, np.float32(1.0), np.array([-5, 1], np.int32))
    np.testing.assert_array_equal(got, [2.0**31, 16777215.0])
    got = dmlops.dequantize_linear(np.array([5, 7], np.int8), np.array([np.inf, -0.0], np.float32), np.int8(5))
    assert np.isnan(got[0]) and got[1] == 0 and np.signbit(got[1])


def test_quantized_linear_add_page_formula() -> None:
    a = np.array([0, 1, 2, 3, 4, 5, 255], np.uint8)
    b = np.array([0, 1, 2, 3, 4, 5, 0], np.uint8)
    f = np.float32
    # (a * 0.5 + b * 0.75) / 1: 2.5 -> 2 and 127.5 -> 128 (halves to even)
    got = dmlops.quantized_linear_add(a, f(0.5), None, b, f(0.75), None, f(1.0), None)
    np.testing.assert_array_equal(got, [0, 1, 2, 4, 5, 6, 128])
    got = dmlops.quantized_linear_add(a, f(0.5), np.uint8(10), b, f(0.75), np.uint8(3), f(1.0), np.uint8(100))
    np.testing.assert_array_equal(got, [93, 94, 95, 96, 98, 99, 220])


def test_quantized_linear_add_nan_depends_on_the_output_zero_point() -> None:
    a = np.array([1, 2], np.int8)
    f = np.float32
    # with an OutputZeroPointTensor the value is clamped as a float (NaN -> Min) ...
    got = dmlops.quantized_linear_add(a, f(np.nan), None, a, f(1), None, f(1), np.int8(5))
    np.testing.assert_array_equal(got, [-128, -128])
    # ... without one, converted as D3D converts (NaN -> 0)
    got = dmlops.quantized_linear_add(a, f(np.nan), None, a, f(1), None, f(1), None)
    np.testing.assert_array_equal(got, [0, 0])


# -- what the differential campaign found (errata E56-E62) ---------------------------------------


def test_shrink_tests_above_the_threshold_first() -> None:
    x = np.array([1.0, -1.0, 0.0, np.nan, -np.inf], np.float32)
    got = dmlops.shrink(x, bias=0.25, threshold=-3.0)
    np.testing.assert_array_equal(got, [0.75, -1.25, -0.25, 0.0, -np.inf])


def test_threshold_clip_and_leaky_relu_zero_signs() -> None:
    z = np.array([0.0, -0.0], np.float32)
    assert not np.signbit(dmlops.threshold(z, min=0.0)).any()
    assert np.signbit(dmlops.threshold(z, min=-0.0)).all()
    assert np.signbit(dmlops.clip(z, min=-0.0, max=1.0)).all()
    assert not np.signbit(dmlops.clip(np.array([1.0, np.nan], np.float32), min=0.0, max=-0.0)).any()
    got = dmlops.leaky_relu(z, alpha=-0.1)
    assert list(np.signbit(got)) == [False, True]


def test_integer_clip_bounds_are_truncated() -> None:
    x = np.array([-3, -1, 0, 1, 2, 3], np.int8)
    np.testing.assert_array_equal(dmlops.clip(x, min=1.5, max=2.5), [1, 1, 1, 1, 2, 2])
    got = dmlops.clip_grad(x, np.full(6, 9, np.int8), min=-1.5, max=2.5)
    np.testing.assert_array_equal(got, [0, 0, 9, 9, 0, 0])


def test_pow_is_exp2_of_y_log2_x_with_directml_specials() -> None:
    x = np.array([np.nan, 0.0, -0.0, 1.0, np.inf, -2.0, -2.0, -2.0], np.float32)
    y = np.array([0.0, -1.0, 0.5, np.nan, 0.0, 3.0, 0.5, np.inf], np.float32)
    got = dmlops.pow(x, y)
    np.testing.assert_array_equal(got[:3], [0, 0, 0])
    assert np.isnan(got[3]) and np.isnan(got[4]) and np.isnan(got[6]) and np.isnan(got[7])
    assert got[5] == -8
    # ScaleBias scales the exponent too: (1*2+1)^(1*2+1) = 27
    got = dmlops.pow(np.ones(1, np.float32), np.ones(1, np.float32), scale_bias=(2.0, 1.0))
    np.testing.assert_allclose(got, [27.0])


def test_atan_of_nan_and_the_float32_log_formulas() -> None:
    np.testing.assert_allclose(dmlops.atan(np.array([np.nan], np.float32)), [np.pi / 4], rtol=1e-6)
    got = dmlops.atan_yx(
        np.array([np.nan, np.nan, -1.0, np.nan], np.float32), np.array([-0.5, 0.5, np.nan, 0.0], np.float32)
    )
    np.testing.assert_allclose(got[:3], [np.pi / 4 - np.pi, np.pi / 4, np.pi / 4], rtol=1e-6)
    assert np.isnan(got[3])
    got = dmlops.asinh(np.array([-np.inf, -1e30], np.float32))
    assert np.isnan(got[0]) and got[1] == np.inf
    assert dmlops.sinh(np.array([89.09], np.float32))[0] == np.inf  # exp overflows in float32 first


def test_quantized_linear_add_into_a_strided_output_converts_without_the_float_clamp() -> None:
    f = np.float32
    desc = desc_from_json(
        "ELEMENT_WISE_QUANTIZED_LINEAR_ADD",
        {
            **{
                m: {"DataType": t, "Sizes": [1, 1] if "Scale" in m or "Zero" in m else [1, 2]}
                for m, t in (
                    ("ATensor", "INT8"),
                    ("AScaleTensor", "FLOAT32"),
                    ("BTensor", "INT8"),
                    ("BScaleTensor", "FLOAT32"),
                    ("OutputScaleTensor", "FLOAT32"),
                    ("OutputZeroPointTensor", "INT8"),
                )
            },
            "OutputTensor": {"DataType": "INT8", "Sizes": [1, 2], "Strides": [4, 2]},
        },
    )
    one = np.ones((1, 1), f)
    inputs = {
        "ATensor": np.array([[1, 2]], np.int8),
        "AScaleTensor": one * f(np.nan),
        "BTensor": np.array([[1, 2]], np.int8),
        "BScaleTensor": one,
        "OutputScaleTensor": one,
        "OutputZeroPointTensor": np.zeros((1, 1), np.int8),
    }
    out = np.full(4, 7, np.int8)
    got = dmlops.execute(desc, inputs, outputs={"OutputTensor": out})["OutputTensor"]
    np.testing.assert_array_equal(np.asarray(got).reshape(-1)[[0, 2]], [0, 0])  # NaN -> 0, not Min


@pytest.mark.parametrize("case", list(RULE_DESCS), ids=str)
def test_createoperator_rules_beyond_the_tables(case: str) -> None:
    """E63: the FL 1.0 softmax-like operators take 2-D tensors (leading sizes 1), ScaleBias on a
    64-bit tensor is the identity, QUANTIZED_LINEAR_ADD's scales hold one element. Each
    rejected desc names the member (tests/directml checks DirectML's own verdicts)."""
    op, desc_json, accepted = RULE_DESCS[case]
    desc = desc_from_json(op, desc_json)
    if accepted:
        desc.validate()
        return
    with pytest.raises(InvalidDescError, match=r"\.(InputTensor\.Sizes\[\d\]|ScaleBias|\w+Tensor\.Sizes): must"):
        desc.validate()


def test_float_results_saturate_into_32_bit_integers() -> None:
    """ScaleBias'd UINT32/INT32: the float result saturates as D3D's ftou/ftoi define it (DirectML
    1.15.4 gives UINT32_MAX for 6e9). The bound is compared in float64: float32(UINT32_MAX) is
    2^32, whose cast would wrap to 0."""
    x = np.array([3_000_000_000, 1, 2_147_483_648, 4_294_967_295], np.uint32)
    got = dmlops.identity(x, scale_bias=(2.0, 0.0))
    assert got.tolist() == [4_294_967_295, 2, 4_294_967_295, 4_294_967_295]
    y = np.array([2_000_000_000, -2_000_000_000, 5], np.int32)
    assert dmlops.identity(y, scale_bias=(2.0, 0.0)).tolist() == [2_147_483_647, -2_147_483_648, 10]


COPY_AND_SIGN_BIT = {
    # operator: the output bits from the input bits, as DirectML computes them (E197)
    "ELEMENT_WISE_IDENTITY": lambda bits, sign: bits,
    "ACTIVATION_IDENTITY": lambda bits, sign: bits,
    "ELEMENT_WISE_ABS": lambda bits, sign: bits & ~sign,
    "ELEMENT_WISE_NEGATE": lambda bits, sign: bits ^ sign,
}
NAN_PAYLOADS = {
    # signalling and quiet NaNs with payloads, both signs; infinities, zeros, a subnormal, a number
    "FLOAT32": [
        0x7F800001,
        0x7FA12345,
        0xFF800001,
        0x7FC00001,
        0xFFC12345,
        0x7F800000,
        0x80000000,
        0x00000001,
        0xBF800000,
    ],
    "FLOAT16": [0x7C01, 0x7D23, 0xFC01, 0x7E01, 0xFF45, 0x7C00, 0x8000, 0x0001, 0xBC00],
}


@pytest.mark.parametrize("size", [9, 70_001], ids=["small", "threaded"])
@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("operator", list(COPY_AND_SIGN_BIT))
def test_copies_and_sign_bit_operators_keep_nan_payloads(
    backend: str, operator: str, data_type: str, size: int
) -> None:
    """Every NaN keeps its payload, a signalling one too (E197); on every backend."""
    unsigned = np.uint32 if data_type == "FLOAT32" else np.uint16
    sign = unsigned(1 << (8 * np.dtype(unsigned).itemsize - 1))
    bits = np.resize(np.array(NAN_PAYLOADS[data_type], unsigned), size)
    x = bits.view(np.float32 if data_type == "FLOAT32" else np.float16)
    tensor = {"DataType": data_type, "Sizes": [size]}
    desc = desc_from_json(operator, {"InputTensor": tensor, "OutputTensor": tensor})
    got = to_numpy(dmlops.execute(desc, {"InputTensor": x}, backend=backend)["OutputTensor"])
    np.testing.assert_array_equal(got.view(unsigned), COPY_AND_SIGN_BIT[operator](bits, sign))
