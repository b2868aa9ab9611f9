"""Images on the wire: a numpy array in an observation travels as a PNG ``data:`` URI.

An observation field typed :data:`ImageArray` holds a ``uint8`` numpy array (``HxW``,
``HxWx1``, ``HxWx2``, ``HxWx3`` or ``HxWx4``) on both sides and is sent as the JSON string
``"data:image/png;base64,<...>"``. The server writes unfiltered PNG rows compressed by zlib at
level 1: lossless, a few kilobytes for a game frame, and about three times quicker to write than
Pillow's default encoder (``benchmarks/images.py`` compares the candidates). Any PNG reader
decodes it, browsers show it as it is, and :func:`decode_image` reads it back into numpy without
Pillow. ``docs/protocol.md`` describes the format for clients in other languages.

Example:
    >>> import numpy as np
    >>> from openenv_hub import Observation
    >>> from openenv_hub.model.image_fields import ImageArray
    >>> class Screen(Observation):
    ...     frame: ImageArray
    >>> sent = Screen(frame=np.zeros((2, 3, 3), dtype=np.uint8)).model_dump(mode="json")
    >>> sent["frame"][:22]
    'data:image/png;base64,'
    >>> Screen.model_validate(sent).frame.shape
    (2, 3, 3)

numpy is imported on first use; decoding a PNG written by another encoder (with row filters, a
palette or interlacing) also needs Pillow.

Layer: model.
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib
from typing import Annotated, Any

from pydantic import PlainSerializer, PlainValidator, WithJsonSchema

from openenv_hub.errors import DependencyNotInstalledError

__all__ = ["PNG_DATA_URI_PREFIX", "ImageArray", "decode_image", "encode_image"]

PNG_DATA_URI_PREFIX = "data:image/png;base64,"
_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG colour type
_CHANNELS = {value: key for key, value in _COLOR_TYPES.items()}
_ZLIB_LEVEL = 1


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:
        raise DependencyNotInstalledError("numpy", "images", feature="Image observations") from None
    return numpy


def _as_pixels(array: Any) -> Any:
    """``array`` as a C-contiguous ``uint8`` array of shape ``HxWxC`` (C in 1..4)."""
    np = _numpy()
    pixels = np.asarray(array)
    if pixels.dtype == np.bool_:
        pixels = pixels.astype(np.uint8) * 255
    if pixels.dtype != np.uint8:
        raise ValueError(
            f"an image must hold uint8 pixels, got dtype {pixels.dtype}; convert it first "
            "(e.g. np.clip(x * 255, 0, 255).astype(np.uint8))"
        )
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    if pixels.ndim != 3 or pixels.shape[2] not in _COLOR_TYPES or 0 in pixels.shape:
        raise ValueError(
            f"an image must be shaped HxW or HxWxC with C in 1..4, got shape {pixels.shape}"
        )
    return np.ascontiguousarray(pixels)


def _chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def encode_png(array: Any) -> bytes:
    """A PNG file of ``array`` (unfiltered rows, zlib level 1)."""
    np = _numpy()
    pixels = _as_pixels(array)
    height, width, channels = pixels.shape
    rows = np.zeros((height, 1 + width * channels), dtype=np.uint8)  # column 0: filter "none"
    rows[:, 1:] = pixels.reshape(height, width * channels)
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPES[channels], 0, 0, 0)
    return (
        _SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows.tobytes(), _ZLIB_LEVEL))
        + _chunk(b"IEND", b"")
    )


def encode_image(array: Any) -> str:
    """``array`` as the ``data:image/png;base64,...`` string sent on the wire.

    Raises:
        ValueError: ``array`` is not ``uint8`` (or bool) shaped ``HxW`` or ``HxWxC``, C in 1..4.
    """
    return PNG_DATA_URI_PREFIX + base64.b64encode(encode_png(array)).decode("ascii")


def decode_png(data: bytes) -> Any:
    """The pixels of a PNG file, shaped ``HxW`` for grey images and ``HxWxC`` otherwise."""
    np = _numpy()
    if not data.startswith(_SIGNATURE):
        raise ValueError("not a PNG file (wrong signature)")
    header, idat = _read_chunks(data)
    width, height, depth, color_type, _, _, interlace = struct.unpack(">IIBBBBB", header)
    channels = _CHANNELS.get(color_type)
    if depth != 8 or channels is None or interlace:
        return _decode_with_pillow(data)
    rows = np.frombuffer(zlib.decompress(idat), dtype=np.uint8)
    if rows.size != height * (1 + width * channels):
        raise ValueError("PNG image data does not match its header")
    rows = rows.reshape(height, 1 + width * channels)
    if rows[:, 0].any():  # rows filtered by another encoder
        return _decode_with_pillow(data)
    pixels = rows[:, 1:].reshape(height, width, channels)
    return pixels[:, :, 0] if channels == 1 else pixels


def _read_chunks(data: bytes) -> tuple[bytes, bytes]:
    position, header, idat = len(_SIGNATURE), b"", []
    while position + 8 <= len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if len(header) != 13 or not idat:
        raise ValueError("PNG file without a header or image data")
    return header, b"".join(idat)


def _decode_with_pillow(data: bytes) -> Any:
    try:
        import io

        from PIL import Image
    except ImportError:
        raise DependencyNotInstalledError(
            "pillow", "images", feature="Decoding a PNG written by another encoder"
        ) from None
    image: Any = Image.open(io.BytesIO(data))
    if image.mode not in ("L", "LA", "RGB", "RGBA"):
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    return _numpy().asarray(image)


def decode_image(value: str) -> Any:
    """The numpy array of a PNG sent as a ``data:`` URI (or as bare base64).

    Raises:
        ValueError: the string is not a base64 PNG.
    """
    payload = value.split(",", 1)[1] if value.startswith("data:") else value
    if value.startswith("data:") and not value.startswith(PNG_DATA_URI_PREFIX):
        raise ValueError(f"expected a PNG data URI ({PNG_DATA_URI_PREFIX}...), got {value[:30]!r}")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("image data is not valid base64") from None
    return decode_png(data)


def _validate(value: Any) -> Any:
    if isinstance(value, str):
        return decode_image(value)
    if isinstance(value, bytes):
        return decode_png(value)
    np = _numpy()
    array = np.asarray(value)
    if array.dtype.kind in "iu" and array.size and array.min() >= 0 and array.max() <= 255:
        array = array.astype(np.uint8, copy=False)
    _as_pixels(array)  # raises for what cannot be an image
    return array


ImageArray = Annotated[
    Any,
    PlainValidator(_validate),
    PlainSerializer(encode_image, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "format": "data-url",
            "contentMediaType": "image/png",
            "contentEncoding": "base64",
            "description": "A PNG image as a data URI (data:image/png;base64,...); "
            "a uint8 numpy array in Python.",
        }
    ),
]
"""An observation field holding a ``uint8`` image: numpy in Python, a PNG data URI on the wire."""
