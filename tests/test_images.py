"""Images on the wire: PNG data URIs that any PNG reader opens and that come back as numpy."""

from __future__ import annotations

import base64
import io
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image
from pydantic import ValidationError

from openenv_hub import Observation
from openenv_hub.model.image_fields import (
    PNG_DATA_URI_PREFIX,
    ImageArray,
    decode_image,
    decode_png,
    encode_image,
    encode_png,
)

RNG = np.random.default_rng(0)


class Screen(Observation):
    frame: ImageArray
    thumbnail: ImageArray | None = None


@pytest.mark.parametrize("shape", [(210, 160, 3), (210, 160), (5, 7, 1), (9, 4, 2), (16, 16, 4)])
def test_round_trip_is_lossless_and_pillow_reads_the_png(shape: tuple[int, ...]) -> None:
    pixels = RNG.integers(0, 256, shape, dtype=np.uint8)
    uri = encode_image(pixels)
    assert uri.startswith(PNG_DATA_URI_PREFIX)
    back = decode_image(uri)
    expected = pixels[:, :, 0] if len(shape) == 3 and shape[2] == 1 else pixels
    assert back.dtype == np.uint8 and np.array_equal(back, expected)
    opened = np.asarray(Image.open(io.BytesIO(base64.b64decode(uri[len(PNG_DATA_URI_PREFIX) :]))))
    assert np.array_equal(opened, expected)


def test_pngs_from_other_encoders_decode_through_pillow() -> None:
    pixels = RNG.integers(0, 256, (30, 20, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG", optimize=True)  # filtered rows
    assert np.array_equal(decode_png(buffer.getvalue()), pixels)
    palette = io.BytesIO()
    Image.fromarray(pixels).convert("P").save(palette, format="PNG")
    assert decode_png(palette.getvalue()).shape == (30, 20, 3)


def test_an_observation_field_is_numpy_in_python_and_a_data_uri_in_json() -> None:
    frame = RNG.integers(0, 256, (12, 10, 3), dtype=np.uint8)
    sent = Screen(frame=frame).model_dump(mode="json")
    assert sent["frame"].startswith(PNG_DATA_URI_PREFIX) and sent["thumbnail"] is None
    assert Screen(frame=frame).model_dump()["frame"] == sent["frame"]  # python mode too
    received = Screen.model_validate(sent)
    assert np.array_equal(received.frame, frame)
    schema = Screen.model_json_schema()["properties"]["frame"]
    assert schema["contentMediaType"] == "image/png" and schema["type"] == "string"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (np.zeros((4, 4), dtype=np.float32), "uint8"),
        (np.zeros((4, 4, 5), dtype=np.uint8), "shape"),
        ("data:image/jpeg;base64,AAAA", "PNG data URI"),
        ("data:image/png;base64,@@@", "base64"),
        ("data:image/png;base64," + base64.b64encode(b"GIF89a").decode(), "not a PNG"),
    ],
)
def test_values_that_are_not_images_fail_validation_with_a_reason(
    value: object, message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        Screen(frame=value)


def test_encoding_is_smaller_than_raw_pixels_for_a_game_frame() -> None:
    frame = np.zeros((210, 160, 3), dtype=np.uint8)
    frame[100:110, 40:60] = (200, 72, 72)
    assert len(encode_png(frame)) < frame.nbytes / 20


def test_missing_numpy_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "from openenv_hub.model.image_fields import encode_image\n"
        "try:\n    encode_image([[0]])\n"
        "except ImportError as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 'pip install "openenv-hub[images]"' in out.stdout


def test_the_web_ui_shows_an_image_field_as_a_picture() -> None:
    from openenv_hub.ui.observation import split_observation

    frame = RNG.integers(0, 256, (40, 30, 3), dtype=np.uint8)
    view = split_observation(Screen(frame=frame).model_dump(mode="json"))
    ((path, picture),) = view.images
    assert path == "frame" and np.array_equal(np.asarray(picture), frame)
    assert view.summary["frame"].startswith("<image 30x40 RGB")
