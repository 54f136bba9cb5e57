"""Dispatch timing in constant memory, and a progress line for long runs.

``-i N`` may ask for a billion iterations; keeping every sample to take a median would
grow without bound. :class:`MedianTimer` keeps the samples exactly while they are few
and then folds them into a fixed logarithmic histogram, whose median is within
:data:`RELATIVE_RESOLUTION` of the exact one.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, TextIO

import numpy as np

EXACT_SAMPLES = 1 << 16
"""Samples kept as they are; the median is exact up to this many (DxDispatch: sorted[n // 2])."""
_LOW_MS, _HIGH_MS = 1e-6, 1e8  # 1 ns to about 28 hours per sample
_BINS = 1 << 14
_LOG_LOW = math.log(_LOW_MS)
_BIN_WIDTH = (math.log(_HIGH_MS) - _LOG_LOW) / _BINS
RELATIVE_RESOLUTION = math.expm1(_BIN_WIDTH / 2)
"""Largest relative error of the median beyond EXACT_SAMPLES samples (about 0.1 %)."""


class MedianTimer:
    """DxDispatch's dispatch median in O(1) memory (a fixed histogram past EXACT_SAMPLES).

    As DxDispatch, the first sample is warm-up: left out of the median when there are more.
    """

    def __init__(self) -> None:
        self.count = 0
        self._first: float | None = None
        self._samples: list[float] = []
        self._histogram: np.ndarray | None = None

    def add(self, ms: float) -> None:
        """Record one sample."""
        self.count += 1
        if self._first is None:
            self._first = ms
        elif self._histogram is None:
            self._samples.append(ms)
            if len(self._samples) > EXACT_SAMPLES:
                self._histogram = np.zeros(_BINS, dtype=np.int64)
                np.add.at(self._histogram, _bin(np.asarray(self._samples)), 1)
                self._samples = []
        else:
            self._histogram[_bin(np.asarray([ms]))[0]] += 1

    def median(self) -> float:
        """``sorted(samples)[n // 2]`` over the samples after the first (the first alone if it is all; NaN if none)."""
        if self._histogram is None:
            if not self._samples:
                return math.nan if self._first is None else self._first
            return sorted(self._samples)[len(self._samples) // 2]
        rank = (self.count - 1) // 2
        index = int(np.searchsorted(np.cumsum(self._histogram), rank, side="right"))
        return math.exp(_LOG_LOW + (index + 0.5) * _BIN_WIDTH)  # the bin's geometric centre


def _bin(ms: np.ndarray) -> np.ndarray:
    clipped = np.clip(ms, _LOW_MS, _HIGH_MS)
    return np.minimum(((np.log(clipped) - _LOG_LOW) / _BIN_WIDTH).astype(np.int64), _BINS - 1)


class Progress:
    """A one-line progress display on a terminal, for dispatch loops that run long.

    Silent unless ``stream`` is a terminal and the loop has run for ``after_s`` seconds;
    redrawn at most ``rate_hz`` times a second; erased by :meth:`close`.
    """

    def __init__(
        self,
        label: str,
        total: int | None,
        deadline_s: float | None,
        *,
        stream: TextIO | None = None,
        after_s: float = 1.0,
    ) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.label, self.total, self.deadline_s = label, total, deadline_s
        self.start = time.perf_counter()
        self._next_draw = self.start + after_s  # short loops never draw
        self._drawn = 0

    def update(self, done: int) -> None:
        """Called after each iteration; cheap when nothing is drawn."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if now < self._next_draw:
            return
        self._next_draw = now + 0.1
        line = self._line(done, now - self.start)
        self.stream.write("\r" + line.ljust(self._drawn))
        self.stream.flush()
        self._drawn = len(line)

    def _line(self, done: int, elapsed: float) -> str:
        fractions = []
        if self.total:
            fractions.append(done / self.total)
        if self.deadline_s:
            fractions.append(elapsed / self.deadline_s)
        fraction = min(max(fractions, default=0.0), 1.0)
        width = 24
        bar = "#" * int(fraction * width)
        count = f"{done}/{self.total}" if self.total else f"{done}"
        left = ""
        if fraction > 0:
            left = f", about {elapsed / fraction - elapsed:.0f} s left"
        return f"{self.label} [{bar:<{width}}] {count} iterations, {elapsed:.0f} s{left}"

    def close(self) -> None:
        """Erase the line if one was drawn."""
        if self._drawn:
            self.stream.write("\r" + " " * self._drawn + "\r")
            self.stream.flush()
            self._drawn = 0


class CudaEventTimer:
    """The GPU time of one dispatch on the cuda backend: CUDA events on the current stream.

    DxDispatch's ``ms median (GPU)`` comes from Direct3D 12 timestamps around the
    dispatch; here a start event is recorded before the operator's first launch and a
    stop event after its last, and :meth:`end` waits for the stop event.
    """

    def __init__(self) -> None:
        import cupy

        self._cupy = cupy
        self._start = cupy.cuda.Event()
        self._stop = cupy.cuda.Event()

    def upload(self, arrays: dict[str, Any]) -> dict[str, Any]:
        """Host arrays as device arrays, before the timed region (DxDispatch's buffers live on the GPU)."""
        return {name: self._cupy.asarray(array) for name, array in arrays.items()}

    def begin(self) -> None:
        """Record the start event."""
        self._start.record()

    def end(self) -> float:
        """Record the stop event, wait for it, and return the milliseconds between the two."""
        self._stop.record()
        self._stop.synchronize()
        return float(self._cupy.cuda.get_elapsed_time(self._start, self._stop))
