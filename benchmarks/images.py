"""How to send an image observation: the candidates measured on real Atari frames.

    python benchmarks/images.py

For 100 Breakout frames (210x160x3, uint8) from random play, and the same frames in grey, each
encoding is timed from the numpy array to the JSON text sent (encode) and from that text back
to a numpy array (decode); size is the JSON text's length. ``at 100 Mbit/s`` adds the time
the bytes take on such a link (a Space reached over the internet) to encode and decode.

* JSON list: the pixels as a flat list of integers (what OpenEnv's Atari env sends);
* raw base64: ``{"shape": [...], "dtype": "uint8", "data": base64 of the bytes}``;
* PNG, Pillow: base64 of a PNG written by Pillow (its defaults: adaptive filters, zlib level 6);
* PNG, openenv-hub: base64 of a PNG with unfiltered rows at zlib level 1 (``openenv_hub.model.image_fields``).
"""

from __future__ import annotations

import base64
import io
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from PIL import Image

from openenv_hub.model.image_fields import decode_image, encode_image

LINK_BYTES_PER_S = 100e6 / 8


def frames(count: int = 100) -> list[Any]:
    from ale_py import ALEInterface, LoggerMode, roms

    ALEInterface.setLoggerMode(LoggerMode.Error)
    ale = ALEInterface()
    ale.setInt("random_seed", 0)
    ale.loadROM(roms.get_rom_path("breakout"))
    actions, rng, out = ale.getMinimalActionSet(), np.random.default_rng(0), []
    while len(out) < count:
        for _ in range(4):
            ale.act(actions[int(rng.integers(len(actions)))])
        if ale.game_over():
            ale.reset_game()
        out.append(ale.getScreenRGB())
    return out


def json_list(array: Any) -> str:
    return json.dumps({"screen": array.ravel().tolist(), "shape": list(array.shape)})


def from_json_list(text: str) -> Any:
    value = json.loads(text)
    return np.asarray(value["screen"], dtype=np.uint8).reshape(value["shape"])


def raw(array: Any) -> str:
    data = base64.b64encode(array.tobytes()).decode()
    return json.dumps({"shape": list(array.shape), "dtype": "uint8", "data": data})


def from_raw(text: str) -> Any:
    value = json.loads(text)
    return np.frombuffer(base64.b64decode(value["data"]), np.uint8).reshape(value["shape"])


def pillow_png(array: Any) -> str:
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG")
    return json.dumps("data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode())


def from_pillow_png(text: str) -> Any:
    data = base64.b64decode(json.loads(text).split(",", 1)[1])
    return np.asarray(Image.open(io.BytesIO(data)))


def ours(array: Any) -> str:
    return json.dumps(encode_image(array))


def from_ours(text: str) -> Any:
    return decode_image(json.loads(text))


CANDIDATES: dict[str, tuple[Callable[[Any], str], Callable[[str], Any]]] = {
    "JSON list": (json_list, from_json_list),
    "raw base64": (raw, from_raw),
    "PNG, Pillow": (pillow_png, from_pillow_png),
    "PNG, openenv-hub": (ours, from_ours),
}


def measure(images: list[Any]) -> None:
    print("| encoding | bytes | encode, µs | decode, µs | total at 100 Mbit/s, µs |")
    print("|---|---:|---:|---:|---:|")
    for name, (encode, decode) in CANDIDATES.items():
        started = time.perf_counter()
        texts = [encode(image) for image in images]
        encode_us = (time.perf_counter() - started) / len(images) * 1e6
        started = time.perf_counter()
        back = [decode(text) for text in texts]
        decode_us = (time.perf_counter() - started) / len(images) * 1e6
        assert all(np.array_equal(a, b) for a, b in zip(images, back, strict=True)), name
        size = sum(len(text) for text in texts) / len(texts)
        link_us = size / LINK_BYTES_PER_S * 1e6
        print(
            f"| {name} | {size:,.0f} | {encode_us:,.0f} | {decode_us:,.0f} | "
            f"{encode_us + decode_us + link_us:,.0f} |"
        )


def main() -> None:
    rgb = frames()
    print("## Breakout frames, 210x160x3\n")
    measure(rgb)
    print("\n## The same frames in grey, 210x160\n")
    measure([np.asarray(Image.fromarray(f).convert("L")) for f in rgb])


if __name__ == "__main__":
    main()
