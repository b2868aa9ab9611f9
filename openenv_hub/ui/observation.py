"""Split an observation into what is best shown as JSON, as images and as text.

A field is shown as an image when it holds a base64 PNG/JPEG/GIF/WebP (a ``data:image/...``
URI or the bare base64 string) or a numeric array shaped ``HxW``, ``HxWx1``, ``HxWx3`` or
``HxWx4``. A string is shown as text when it is long or spans several lines. In the JSON
view such values are replaced by a short note. numpy and Pillow (gradio dependencies) are
imported only when a candidate value is found.

Layer: ui.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ObservationView", "split_observation"]

MAX_IMAGES = 8
LONG_TEXT_CHARS = 200
_IMAGE_HINT = re.compile(r"image|img|frame|pixel|screen|rgb|render|camera|picture", re.I)
_BASE64_MAGIC = ("iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR")  # PNG, JPEG, GIF, WebP
_DATA_URI = re.compile(r"^data:image/[\w.+-]+;base64,", re.I)


@dataclass
class ObservationView:
    """An observation ready to display.

    Attributes:
        summary: The observation with images and long text replaced by short notes.
        images: ``(field path, PIL image)`` pairs, at most ``MAX_IMAGES``.
        texts: ``(field path, text)`` pairs for long strings.
    """

    summary: Any = None
    images: list[tuple[str, Any]] = field(default_factory=list)
    texts: list[tuple[str, str]] = field(default_factory=list)


def split_observation(observation: Any) -> ObservationView:
    """Find the images and long texts in ``observation`` (any JSON value)."""
    view = ObservationView()
    view.summary = _walk(observation, "", view)
    return view


def _walk(value: Any, path: str, view: ObservationView) -> Any:
    if isinstance(value, str):
        return _string(value, path, view)
    if isinstance(value, dict):
        return {k: _walk(v, f"{path}.{k}" if path else str(k), view) for k, v in value.items()}
    if isinstance(value, list):
        if len(view.images) < MAX_IMAGES:
            image = _array_image(value, path)
            if image is not None:
                view.images.append((path or "observation", image))
                return f"<image {image.width}x{image.height} {image.mode}, shown above>"
        return [_walk(item, f"{path}[{i}]", view) for i, item in enumerate(value)]
    return value


def _string(value: str, path: str, view: ObservationView) -> str:
    if len(view.images) < MAX_IMAGES and len(value) >= 32:
        image = _decode_base64_image(value)
        if image is not None:
            view.images.append((path or "observation", image))
            return f"<image {image.width}x{image.height} {image.mode}, shown above>"
    if len(value) >= LONG_TEXT_CHARS or value.count("\n") >= 2:
        view.texts.append((path or "observation", value))
        head = value[:80].replace("\n", " ")
        return f"{head}… ({len(value)} characters, shown in full below)"
    return value


def _decode_base64_image(value: str) -> Any:
    match = _DATA_URI.match(value)
    if match:
        payload = value[match.end() :]
    elif value.startswith(_BASE64_MAGIC):
        payload = value
    else:
        return None
    try:
        raw = base64.b64decode(payload, validate=False)
        from PIL import Image

        image = Image.open(io.BytesIO(raw))
        image.load()
    except (binascii.Error, ValueError, OSError, ImportError):
        return None
    return image


def _array_image(value: list[Any], path: str) -> Any:
    """A PIL image when ``value`` is a numeric ``HxW`` or ``HxWxC`` array, else None."""
    if len(value) < 2 or not isinstance(value[0], list) or not value[0]:
        return None
    first = value[0][0]
    if not isinstance(first, (int, float, list)) or isinstance(first, bool):
        return None
    try:
        import numpy as np

        array = np.asarray(value)
    except (ImportError, ValueError):
        return None
    if array.dtype.kind not in "iuf" or not _image_shape(array.shape, path):
        return None
    return _to_pil(array)


def _image_shape(shape: tuple[int, ...], path: str) -> bool:
    hinted = bool(_IMAGE_HINT.search(path.rsplit(".", 1)[-1]))
    if len(shape) == 3 and shape[2] in (1, 3, 4):
        return min(shape[:2]) >= (2 if hinted else 4)
    if len(shape) == 2:
        return min(shape) >= (2 if hinted else 16)
    return False


def _to_pil(array: Any) -> Any:
    import numpy as np
    from PIL import Image

    data = array.astype("float64")
    low, high = float(data.min()), float(data.max())
    if low >= 0 and high <= 1 and array.dtype.kind == "f":
        data = data * 255
    elif low < 0 or high > 255 or (array.ndim == 2 and high <= 32):
        data = (data - low) * (255 / (high - low)) if high > low else np.zeros_like(data)
    pixels = np.clip(np.rint(data), 0, 255).astype("uint8")
    if pixels.ndim == 3 and pixels.shape[2] == 1:
        pixels = pixels[:, :, 0]
    return Image.fromarray(pixels)
