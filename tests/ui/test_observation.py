"""Which observation fields are shown as images, as text, and as JSON."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from openenv_hub.ui.observation import MAX_IMAGES, split_observation


def png_base64(size=(5, 3)) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", size, (10, 20, 30)).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


@pytest.mark.parametrize(
    ("value", "size", "mode"),
    [
        ("data:image/png;base64," + png_base64(), (5, 3), "RGB"),
        (png_base64((7, 2)), (7, 2), "RGB"),
        ([[[255, 0, 0]] * 6] * 4, (6, 4), "RGB"),
        ([[[0.0, 0.5, 1.0, 1.0]] * 5] * 5, (5, 5), "RGBA"),
        ([[i % 4 for i in range(20)]] * 16, (20, 16), "L"),
    ],
)
def test_images_are_found(value, size, mode):
    view = split_observation({"frame": value, "other": 1})
    ((path, image),) = view.images
    assert path == "frame" and image.size == size and image.mode == mode
    assert view.summary["frame"] == f"<image {size[0]}x{size[1]} {mode}, shown above>"
    assert view.summary["other"] == 1


def test_float_pixels_are_scaled_and_small_grids_normalised():
    ((_, rgb),) = split_observation({"rgb": [[[0.0, 0.5, 1.0]] * 2] * 2}).images
    assert rgb.getpixel((0, 0)) == (0, 128, 255)
    ((_, grid),) = split_observation({"image": [[0, 1], [2, 3]]}).images  # named like an image
    assert [grid.getpixel((x, y)) for y in range(2) for x in range(2)] == [0, 85, 170, 255]


@pytest.mark.parametrize(
    "value",
    [
        [[1, 2], [3, 4]],  # a small matrix is data, not a picture
        [[1, 2, 3], [4, 5]],  # ragged
        [["a", "b"]] * 20,
        "iVBORw0KGgo-not-really-an-image-but-long-enough",
        [[[1, 2]] * 5] * 5,  # two channels
    ],
)
def test_non_images_stay_json(value):
    view = split_observation({"board": value})
    assert view.images == [] and view.summary == {"board": value}


def test_long_and_multiline_text_is_shown_as_text():
    long = "x" * 300
    lines = "a\nb\nc"
    view = split_observation({"log": long, "poem": lines, "short": "hi", "nested": {"doc": long}})
    assert view.texts == [("log", long), ("poem", lines), ("nested.doc", long)]
    assert view.summary["short"] == "hi"
    assert view.summary["log"].endswith("(300 characters, shown in full below)")


def test_images_in_lists_get_indexed_paths_and_are_capped():
    view = split_observation({"frames": [png_base64()] * (MAX_IMAGES + 2)})
    assert [path for path, _ in view.images] == [f"frames[{i}]" for i in range(MAX_IMAGES)]
    assert len(view.summary["frames"]) == MAX_IMAGES + 2
