"""The random family (RANDOM_GENERATOR) against independent oracles.

The cpu and cuda backends compare with the reference bit for bit (the cuda tests,
marked ``cuda``, skip without a GPU; on an H100 with CuPy 14.2 all 13 cuda instances here
and in test_vectors passed).

The oracle is a scalar Philox 4x32-10 in Python integers, written from the published
algorithm (Salmon, Moraes, Dror and Shaw, SC11 2011: ten rounds of two 32x32 -> 64-bit
multiplies, ``hi ^ other word ^ key``, the key bumped by the Weyl constants between
rounds), checked first against Random123's known-answer vectors; the output order and
the state update are the page's (counter words 0-3, key words 4-5, ``ceil(n / 4)``
blocks a call). NumPy's ``np.random.Philox`` is Philox **4x64**-10 (64-bit words, a
128-bit key), a different generator: it is not an oracle here. PyTorch and
``onnx.reference`` have no Philox 4x32 on the CPU.
"""

from __future__ import annotations

import numpy as np
import pytest

import dmlops
from conftest import backend_params, to_numpy
from dmlops.backends import load_backend
from dmlops.descs import desc_from_json
from dmlops.descs.random import counter_increment, next_state
from dmlops.errors import ArgumentTypeError, ArgumentValueError, BackendUnavailableError, InvalidDescError
from dmlops.ops.random import random_generator
from dmlops.reference import random as reference

MASK = 0xFFFFFFFF
KATS = [  # Random123 tests/kat_vectors, "philox4x32 10": counter, key, output
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((MASK,) * 4, (MASK, MASK), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
]


# -- the oracle, from the paper ------------------------------------------------


def oracle_block(ctr: tuple[int, ...], key: tuple[int, int]) -> tuple[int, int, int, int]:
    """One Philox 4x32-10 block, one round at a time in Python integers."""
    x0, x1, x2, x3 = ctr
    k0, k1 = key
    for round_index in range(10):
        if round_index > 0:
            k0, k1 = (k0 + 0x9E3779B9) & MASK, (k1 + 0xBB67AE85) & MASK
        prod0, prod1 = 0xD2511F53 * x0, 0xCD9E8D57 * x2
        x0, x1, x2, x3 = (prod1 >> 32) ^ x1 ^ k0, prod1 & MASK, (prod0 >> 32) ^ x3 ^ k1, prod0 & MASK
    return x0, x1, x2, x3


def oracle(state: list[int], n: int) -> tuple[list[int], list[int]]:
    """``(n output words, next state)``: word i from block ``counter + i // 4``; counter + ceil(n/4)."""
    counter = state[0] | state[1] << 32 | state[2] << 64 | state[3] << 96
    words: list[int] = []
    block = 0
    while len(words) < n:
        c = (counter + block) % (1 << 128)
        words.extend(oracle_block(tuple((c >> (32 * i)) & MASK for i in range(4)), (state[4], state[5])))
        block += 1
    advanced = (counter + block) % (1 << 128)
    return words[:n], [(advanced >> (32 * i)) & MASK for i in range(4)] + state[4:]


@pytest.mark.parametrize(("ctr", "key", "want"), KATS)
def test_oracle_known_answers(ctr, key, want) -> None:
    assert oracle_block(ctr, key) == want


# -- the reference against the oracle -----------------------------------------


def _desc(out_sizes, *, state_dims: int = 4, output_state: bool = True, out_strides=None):
    state = {"DataType": "UINT32", "Sizes": [1] * (state_dims - 1) + [6]}
    out = {"DataType": "UINT32", "Sizes": list(out_sizes)}
    if out_strides is not None:
        out["Strides"] = list(out_strides)
    d = {"InputStateTensor": state, "OutputTensor": out, "Type": "PHILOX_4X32_10"}
    if output_state:
        d["OutputStateTensor"] = dict(state)
    return desc_from_json("RANDOM_GENERATOR", d)


def _run(desc, state, backend: str = "numpy"):
    shape = desc.input_state_tensor.sizes
    return dmlops.execute(desc, {"InputStateTensor": np.array(state, dtype=np.uint32).reshape(shape)}, backend=backend)


def _states(rng: np.random.Generator) -> list[list[int]]:
    """Random states and the carry and wrap cases: counter words near 0xFFFFFFFF, keys at the extremes."""
    states = [[int(w) for w in rng.integers(0, MASK, 6, endpoint=True)] for _ in range(4)]
    states += [[MASK - 1, 0, 5, 7, 1, 2], [MASK, MASK, 3, 0, MASK, 0], [MASK - 2, MASK, MASK, MASK, 0, MASK]]
    return states


@pytest.mark.parametrize(
    "sizes", [(1,), (3,), (4,), (5,), (2, 3), (1, 1, 1, 13), (2, 2, 2, 2, 2), (3, 1, 2, 1, 1, 2, 1, 2)]
)
def test_reference_matches_the_oracle(sizes) -> None:
    rng = np.random.default_rng(len(sizes) * 100 + int(np.prod(sizes)))
    n = int(np.prod(sizes))
    for state in _states(rng):
        got = _run(_desc(sizes, state_dims=int(rng.integers(1, 9))), state)
        words, advanced = oracle(state, n)
        assert got["OutputTensor"].reshape(-1).tolist() == words, state
        assert got["OutputStateTensor"].reshape(-1).tolist() == advanced, state


def test_chunks_do_not_change_a_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    state = np.array([MASK - 1, MASK, 0, 0, 9, 8], dtype=np.uint32)
    whole = reference.philox_words(state, 1001)
    monkeypatch.setattr(reference, "CHUNK_BLOCKS", 7)
    assert np.array_equal(reference.philox_words(state, 1001), whole)
    assert whole.tolist() == oracle([int(w) for w in state], 1001)[0]


def test_chained_calls_continue_the_sequence() -> None:
    """Through OutputStateTensor: a multiple of 4 continues exactly; otherwise the last block's rest is dropped."""
    state = [MASK - 1, 0, 0, 0, 0x1234, 0x5678]
    first = _run(_desc((8,)), state)
    second = _run(_desc((6,)), first["OutputStateTensor"].reshape(-1).tolist())
    assert np.concatenate([first["OutputTensor"], second["OutputTensor"]]).tolist() == oracle(state, 14)[0]
    odd = _run(_desc((5,)), state)
    after = _run(_desc((4,)), odd["OutputStateTensor"].reshape(-1).tolist())
    assert after["OutputTensor"].tolist() == oracle(state, 12)[0][8:]  # block 2, not words 5-8


def test_strided_output_and_no_output_state() -> None:
    state = [1, 2, 3, 4, 5, 6]
    plain = _run(_desc((3, 5), output_state=False), state)
    assert set(plain) == {"OutputTensor"}
    strided = _run(_desc((3, 5), out_strides=(1, 3)), state)  # column-major storage: same logical words
    assert np.array_equal(strided["OutputTensor"], plain["OutputTensor"])
    assert plain["OutputTensor"].reshape(-1).tolist() == oracle(state, 15)[0]


def test_page_example_counter_increment_e180() -> None:
    """The Remarks' example, with the increment added (the page's result subtracts it: erratum E180)."""
    counter = 0x48656C6C_6F46726F_6D536561_74746C65
    state = [(counter >> (32 * i)) & MASK for i in range(4)] + [0, 0]
    assert counter_increment(3 * 3 * 20 * 7219) == 324_855
    got = _run(_desc((3, 3, 20, 7219)), state)["OutputStateTensor"].reshape(-1).tolist()
    assert got == list(next_state(state, 3 * 3 * 20 * 7219))
    assert got[:4] == [0x7479615C, 0x6D536561, 0x6F46726F, 0x48656C6C]
    assert got[0] != 0x746F776E  # the page's value


def test_counter_wraps_at_2_to_128() -> None:
    assert next_state([MASK] * 4 + [7, 8], 9) == (2, 0, 0, 0, 7, 8)
    assert next_state([MASK, 5, 0, 0, 7, 8], 1) == (0, 6, 0, 0, 7, 8)


@pytest.mark.parametrize("data_type", ["FLOAT32", "INT32", "UINT64"])
def test_only_uint32_outputs(data_type: str) -> None:
    d = {
        "InputStateTensor": {"DataType": "UINT32", "Sizes": [6]},
        "OutputTensor": {"DataType": data_type, "Sizes": [4]},
        "Type": "PHILOX_4X32_10",
    }
    with pytest.raises(InvalidDescError, match="OutputTensor"):
        _run(desc_from_json("RANDOM_GENERATOR", d), [0] * 6)


# -- the functional API --------------------------------------------------------


def test_random_generator_function() -> None:
    bits, state = random_generator([0, 0, 0, 0, 0, 0], (2, 2))
    assert bits.dtype == np.uint32 and bits.reshape(-1).tolist() == list(KATS[0][2])
    assert state.tolist() == [1, 0, 0, 0, 0, 0]
    more, state2 = random_generator(state, 7)
    assert more.tolist() == oracle([0] * 6, 11)[0][4:] and state2.tolist() == [3, 0, 0, 0, 0, 0]


def test_random_generator_options() -> None:
    state = np.array([[[[9, 0, 0, 0, 1, 1]]]], dtype=np.uint32)
    bits, none = random_generator(state, 5, output_state=False)
    assert none is None and bits.tolist() == oracle([9, 0, 0, 0, 1, 1], 5)[0]
    out = np.zeros(5, dtype=np.uint32)
    got, next_ = random_generator(state, [5], out=out)
    assert got is out and np.array_equal(out, bits) and next_.shape == (1, 1, 1, 6)


def test_random_generator_misuse() -> None:
    with pytest.raises(InvalidDescError, match="Type"):
        random_generator([0] * 6, 4, type="MT19937")
    with pytest.raises(InvalidDescError, match="InputStateTensor"):
        random_generator([0] * 5, 4)
    with pytest.raises(InvalidDescError, match="InputStateTensor"):
        random_generator(np.zeros(6, dtype=np.int32), 4)
    with pytest.raises(ArgumentValueError, match="UINT32"):
        random_generator([-1, 0, 0, 0, 0, 0], 4)
    with pytest.raises(ArgumentTypeError, match="output_state"):
        random_generator([0] * 6, 4, output_state=1)
    with pytest.raises(ArgumentTypeError, match="sizes"):
        random_generator([0] * 6, "4")


# -- the cpu and cuda backends: bit for bit with the reference -------------------

PARITY_SIZES = [(1,), (3,), (4,), (2, 3, 5), (1, 1, 1, 1001), (3, 1, 2, 1, 1, 2, 1, 2), (1 << 16) + 3]


@pytest.fixture(params=backend_params("cpu", "cuda"))
def fast_backend(request: pytest.FixtureRequest) -> str:
    try:
        load_backend(request.param)
    except BackendUnavailableError as exc:
        pytest.skip(str(exc))
    return request.param


def _parity(backend: str, desc, buffer) -> None:
    want = dmlops.execute(desc, {"InputStateTensor": buffer}, backend="numpy")
    got = dmlops.execute(desc, {"InputStateTensor": buffer}, backend=backend)
    assert set(got) == set(want)
    for member, expected in want.items():
        assert np.array_equal(to_numpy(got[member]), expected), member


@pytest.mark.parametrize("sizes", PARITY_SIZES, ids=str)
def test_backend_matches_reference(fast_backend: str, sizes) -> None:
    sizes = sizes if isinstance(sizes, tuple) else (sizes,)
    rng = np.random.default_rng(int(np.prod(sizes)))
    for i, state in enumerate(_states(rng)):
        desc = _desc(sizes, state_dims=1 + i % 8, output_state=i % 3 != 1)
        _parity(fast_backend, desc, np.array(state, dtype=np.uint32).reshape(desc.input_state_tensor.sizes))


def test_backend_strided_tensors(fast_backend: str) -> None:
    """Strided OutputTensor (column-major), strided state in and out (every other element of a flat buffer)."""
    d = {
        "InputStateTensor": {"DataType": "UINT32", "Sizes": [1, 6], "Strides": [12, 2]},
        "OutputTensor": {"DataType": "UINT32", "Sizes": [7, 9], "Strides": [1, 7]},
        "OutputStateTensor": {"DataType": "UINT32", "Sizes": [1, 6], "Strides": [6, 1]},
        "Type": "PHILOX_4X32_10",
    }
    buffer = np.zeros(12, dtype=np.uint32)
    buffer[::2] = [MASK, MASK, 7, 0, 11, MASK]
    _parity(fast_backend, desc_from_json("RANDOM_GENERATOR", d), buffer)


def test_backend_into_out(fast_backend: str) -> None:
    state = np.array([5, 0, 0, 0, 1, 2], dtype=np.uint32)
    out = np.zeros((4, 5), dtype=np.uint32)
    bits, next_ = random_generator(state, (4, 5), backend=fast_backend, out=out)
    assert np.array_equal(to_numpy(bits), random_generator(state, (4, 5))[0])
    assert to_numpy(next_).tolist() == [10, 0, 0, 0, 1, 2]


@pytest.mark.cuda
def test_cuda_grid_stride_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """More Philox blocks than threads of the capped grid: each thread takes several."""
    try:
        load_backend("cuda")
    except BackendUnavailableError as exc:
        pytest.skip(str(exc))
    from dmlops.cuda import random as cuda_random

    monkeypatch.setattr(cuda_random, "sm_count", lambda: 1)
    monkeypatch.setattr(cuda_random, "BLOCKS_PER_SM", 2)
    _parity(
        "cuda",
        _desc((3 * 256 * 4 * 2 + 5,)),
        np.array([MASK - 3, 0, MASK, 0, 9, 9], dtype=np.uint32).reshape(1, 1, 1, 6),
    )
