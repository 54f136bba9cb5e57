"""Images as buffers, the way DxDispatch's ImageReaderWriter reads and writes them.

DxDispatch decodes a ``sourcePath`` ending in ``.jpg`` or ``.png`` (any case) with
Windows Imaging Component; every other extension, ``.jpeg`` and ``.bmp`` included, is
read as raw bytes. What it does, and what dmlops does the same way:

* **Reading.** The resource's ``resampleSize`` ``[N, C, H, W]`` fixes the tensor: C
  channels (3: RGB, otherwise RGBA), H rows, W columns, NCHW (planar) layout; N is not
  read (the buffer holds one image). The first frame is converted to 8-bit RGB or RGBA
  (grayscale replicated, palettes expanded, an alpha channel dropped or set to 255),
  then scaled to W x H when its size differs (WIC's high-quality cubic; here Pillow's
  bicubic filter on each channel, without alpha premultiplication, as WIC's scaler).
  Each 8-bit value ``v`` becomes ``float(v) / 255.0f``; FLOAT32 or FLOAT16 only (FLOAT16
  through ``half_float::half``, which truncates toward zero).
* **Writing.** ``writeFile`` to ``.png`` or ``.jpg`` takes ``dimensions``
  ``[N, C, H, W]`` (C, H, W default to 1; N is not read), C of 1 (grayscale), 3 (RGB)
  or 4 (RGBA), reads C * H * W FLOAT32/FLOAT16 values from the start of the buffer as
  NCHW, and stores ``(uint8)(clamp(v, 0, 1) * 255)`` (truncated; NaN becomes 255).

Pixels equal DxDispatch's where no scaling happens and the file is a PNG; JPEG decoders
and cubic scalers differ between WIC and Pillow in the last levels of some pixels, and
JPEG encoders in their bytes. Pillow is an optional dependency (``pip install
"dmlops[images]"``); a model with an image asks for it with a clear error.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO

import numpy as np
from numpy.typing import NDArray

from ..enums import TensorDataType
from ..errors import UnknownFieldWarning
from .errors import ModelError, field_error
from .files import open_regular

IMAGE_EXTENSIONS = (".jpg", ".png")
"""The extensions DxDispatch decodes or encodes as images (compared in lower case)."""
PIXEL_DATA_TYPES = (TensorDataType.FLOAT32, TensorDataType.FLOAT16)
JPEG_QUALITY = 90
"""WIC's JPEG encoder default (ImageQuality 0.9)."""
_INSTALL = 'pip install "dmlops[images]"'


def is_image_path(path: str) -> bool:
    """True for the ``.jpg``/``.png`` paths DxDispatch treats as images."""
    return Path(path).suffix.lower() in IMAGE_EXTENSIONS


def pillow(what: str) -> ModuleType:
    """``PIL.Image``, or ModelError saying how to install it."""
    try:
        from PIL import Image
    except ImportError:
        raise ModelError(f"{what} needs Pillow, which is not installed ({_INSTALL})") from None
    return Image


def _uint32_array(value: Any, name: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 0xFFFFFFFF for v in value
    ):
        raise field_error(name, "Expected an array of unsigned integers.")
    return tuple(value)


def resample_fields(obj: Mapping[str, Any]) -> tuple[tuple[int, ...], str]:
    """``resampleSize`` (empty or 4 values) and ``resampleMode`` (default ``scale``), as DxDispatch parses them."""
    size = _uint32_array(obj["resampleSize"], "resampleSize") if "resampleSize" in obj else ()
    if size and len(size) != 4:
        raise ModelError("Field 'resampleSize' must be empty or have four dimensions in N,C,H,W order. N must be 1.")
    mode = obj.get("resampleMode", "scale")
    if not isinstance(mode, str):
        raise field_error("resampleMode", "Expected a string.")
    return size, mode


def _pixel_type(dt: TensorDataType, what: str) -> None:
    if dt is TensorDataType.UNKNOWN:
        raise ModelError("Field 'initialValuesDataType' is required.")
    if dt not in PIXEL_DATA_TYPES:
        raise ModelError(f"{what}: unsupported data type {dt.name} (images are FLOAT32 or FLOAT16 values in [0, 1])")


def image_initializer(path: Path, source: str, dt: TensorDataType, size: Sequence[int], mode: str) -> tuple[int, Any]:
    """Check an image ``sourcePath`` now (header, sizes, memory); return ``(bytes, fill)``.

    The image is decoded when the buffer is allocated, straight into it.
    """
    from .resources import check_allocation  # resources imports this module

    what = f"image '{source}'"
    if mode != "scale":
        raise ModelError("Field 'resampleMode' must be 'scale' for image files.")
    _pixel_type(dt, what)
    if not size:
        raise ModelError(
            f"{what} needs 'resampleSize' [1, C, H, W] on its resource: DxDispatch reads an image only "
            "at the size it gives"
        )
    n, channels, height, width = size
    if channels not in (3, 4):
        raise field_error("resampleSize", f"C must be 3 (RGB) or 4 (RGBA) for an image; got {channels}.")
    if not height or not width:
        raise field_error("resampleSize", f"H and W must be at least 1; got {height} x {width}.")
    if n != 1:
        warnings.warn(
            f"{what}: resampleSize N = {n} is not read; the buffer holds one image, as in DxDispatch",
            UnknownFieldWarning,
            stacklevel=2,
        )
    itemsize = dt.numpy_dtype.itemsize
    nbytes = channels * height * width * itemsize
    check_allocation(nbytes, f"{what} at resampleSize {list(size)}")
    image_module = pillow(f"reading {what}")
    with open_regular(path, "image file") as (file, _):
        source_w, source_h = _header_size(image_module, file, source)
    # Decoding holds the image as 8-bit RGBA at its own size, then at the target size.
    check_allocation(4 * (source_w * source_h + height * width), f"decoding {what} ({source_w} x {source_h})")

    def fill(view: memoryview) -> None:
        with open_regular(path, "image file") as (file, _):
            pixels = _decode(image_module, file, source, channels, height, width)
        out = np.frombuffer(view, dtype=dt.numpy_dtype).reshape(channels, height, width)
        planar = pixels.transpose(2, 0, 1)  # HWC -> CHW
        values = planar.astype(np.float32) / np.float32(255.0)
        if dt is TensorDataType.FLOAT16:
            out.view(np.uint16)[...] = float32_to_half_bits(values)
        else:
            out[...] = values

    return nbytes, fill


def _header_size(image_module: ModuleType, file: BinaryIO, source: str) -> tuple[int, int]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", image_module.DecompressionBombWarning)
            with image_module.open(file) as image:
                return int(image.size[0]), int(image.size[1])
    except (image_module.DecompressionBombError, image_module.DecompressionBombWarning) as exc:
        raise ModelError(f"image '{source}' is too large to decode: {exc}") from None
    except (OSError, ValueError, SyntaxError) as exc:
        raise ModelError(f"'{source}' is not an image Pillow can read: {exc}") from None


def _decode(
    image_module: ModuleType, file: BinaryIO, source: str, channels: int, height: int, width: int
) -> NDArray[np.uint8]:
    """The first frame as HWC uint8 RGB/RGBA at ``width`` x ``height``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", image_module.DecompressionBombWarning)
            with image_module.open(file) as image:
                image.seek(0)
                image.load()
                converted = _to_8bit_rgb(image_module, image, "RGB" if channels == 3 else "RGBA")
    except (image_module.DecompressionBombError, image_module.DecompressionBombWarning) as exc:
        raise ModelError(f"image '{source}' is too large to decode: {exc}") from None
    except (OSError, ValueError, SyntaxError) as exc:
        raise ModelError(f"'{source}' could not be decoded: {exc}") from None
    if converted.size != (width, height):
        # Each channel on its own: WIC's scaler does not premultiply alpha (Pillow's RGBA resize would).
        bands = [band.resize((width, height), image_module.Resampling.BICUBIC) for band in converted.split()]
        converted = image_module.merge(converted.mode, bands)
    pixels: NDArray[np.uint8] = np.asarray(converted, dtype=np.uint8).reshape(height, width, channels)
    return pixels


def _to_8bit_rgb(image_module: ModuleType, image: Any, mode: str) -> Any:
    """WIC's format conversion to 24bpp RGB / 32bpp RGBA."""
    if image.mode in ("I;16", "I;16B", "I;16L", "I;16N", "I"):
        # 16-bit grayscale: the high byte (Pillow's own I -> L conversion clips instead).
        values = np.asarray(image, dtype=np.int64)
        if image.mode != "I":
            values = values >> 8
        image = image_module.fromarray(np.clip(values, 0, 255).astype(np.uint8))
    if image.mode == "P" and "transparency" in image.info and mode == "RGB":
        image = image.convert("RGBA")
    return image.convert(mode)


def float32_to_half_bits(values: NDArray[np.float32]) -> NDArray[np.uint16]:
    """``half_float::half(float)`` as DxDispatch builds it: truncation toward zero, overflow to infinity.

    half.hpp's default rounding (``HALF_ROUND_STYLE`` -1, "round_indeterminate") keeps the
    top mantissa bits: its ``base + (mantissa >> shift)`` tables, reproduced here.
    """
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    index = bits >> np.uint32(23)
    hbits = _HALF_BASE[index] + ((bits & np.uint32(0x7FFFFF)) >> _HALF_SHIFT[index]).astype(np.uint16)
    result: NDArray[np.uint16] = hbits.astype(np.uint16)
    return result


def _half_tables() -> tuple[NDArray[np.uint16], NDArray[np.uint32]]:
    base = np.zeros(512, dtype=np.uint16)
    shift = np.zeros(512, dtype=np.uint32)
    for i in range(256):
        e = i - 127
        if e < -24:  # too small for a subnormal half: zero
            b, s = 0x0000, 24
        elif e < -14:  # a subnormal half
            b, s = 0x0400 >> (-e - 14), -e - 1
        elif e <= 15:  # a normal half
            b, s = (e + 15) << 10, 13
        elif e < 128:  # too large: infinity
            b, s = 0x7C00, 24
        else:  # infinity and NaN keep their top mantissa bits
            b, s = 0x7C00, 13
        base[i], base[i | 0x100] = b, b | 0x8000
        shift[i] = shift[i | 0x100] = s
    return base, shift


_HALF_BASE, _HALF_SHIFT = _half_tables()


# -- writing ------------------------------------------------------------------------------------------


def image_target_shape(dims: Sequence[int] | None) -> tuple[int, int, int]:
    """``(C, H, W)`` from ``dimensions`` as DxDispatch reads them (missing entries are 1; N unread)."""
    d = tuple(dims or ())
    channels = d[1] if len(d) > 1 else 1
    height = d[2] if len(d) > 2 else 1
    width = d[3] if len(d) > 3 else 1
    return channels, height, width


def check_image_target(
    target: str, dims: Sequence[int] | None, dt: TensorDataType, buffer_bytes: int, resource: str
) -> None:
    """Everything DxDispatch's image writer would fail on, checked before the run."""
    what = f"image '{target}'"
    channels, height, width = image_target_shape(dims)
    if channels not in (1, 3, 4):
        raise ModelError(f"Unsupported channel count {channels} for image file (1, 3 or 4; dimensions[1]).")
    if dt not in PIXEL_DATA_TYPES:
        raise ModelError(f"{what}: resource '{resource}' is {dt.name}; images are written from FLOAT32 or FLOAT16")
    if not height or not width:
        raise ModelError(f"{what}: H and W (dimensions[2], dimensions[3]) must be at least 1; got {height} x {width}")
    need = channels * height * width * dt.numpy_dtype.itemsize
    if need > buffer_bytes:
        raise ModelError(
            f"{what}: dimensions {list(dims or ())} need {channels} x {height} x {width} {dt.name} values "
            f"({need} bytes) but resource '{resource}' has {buffer_bytes} bytes"
        )
    pillow(f"writing {what}")


def tensor_to_pixels(buffer: bytearray, dt: TensorDataType, channels: int, height: int, width: int) -> NDArray[Any]:
    """NCHW values from the start of ``buffer`` -> HWC uint8: ``(uint8)(clamp(v, 0, 1) * 255)``."""
    values = np.frombuffer(buffer, dtype=dt.numpy_dtype, count=channels * height * width)
    v = values.astype(np.float32).reshape(channels, height, width).transpose(1, 2, 0)
    # std::max(0, std::min(1, v)): NaN compares false and becomes 1.
    clamped = np.where(v < np.float32(1.0), v, np.float32(1.0))
    clamped = np.where(np.float32(0.0) < clamped, clamped, np.float32(0.0))
    return (clamped * np.float32(255.0)).astype(np.uint8)


def write_image(file: BinaryIO, suffix: str, pixels: NDArray[Any]) -> None:
    """Encode HWC uint8 pixels (1, 3 or 4 channels) as PNG or JPEG into ``file``."""
    image_module = pillow("writing an image")
    channels = pixels.shape[2]
    # uint8 H x W is mode L, H x W x 3 RGB, H x W x 4 RGBA.
    image = image_module.fromarray(np.ascontiguousarray(pixels if channels > 1 else pixels[:, :, 0]))
    if suffix == ".png":
        image.save(file, format="PNG")
    else:  # JPEG has no alpha: WIC's encoder converts RGBA to RGB
        if channels == 4:
            image = image.convert("RGB")
        image.save(file, format="JPEG", quality=JPEG_QUALITY)
