"""Pictures for custom tabs: accessible <img> elements and SVG line charts."""

from __future__ import annotations

import base64
import xml.etree.ElementTree as ET

from openenv_hub.ui.media import image_html, line_chart_svg, svg_data_uri

SVG = "{http://www.w3.org/2000/svg}"


def test_image_html_escapes_and_describes() -> None:
    html = image_html('x" onerror="boom', alt='A <b>"board"</b>', elem_id="pic", width=300,
                      pixelated=True)  # fmt: skip
    assert html.startswith("<img ") and 'onerror="' not in html
    assert 'alt="A &lt;b&gt;&quot;board&quot;&lt;/b&gt;"' in html and 'id="pic"' in html
    assert "width:300px" in html and "image-rendering:pixelated" in html


def test_svg_data_uri_round_trips() -> None:
    svg = '<svg xmlns="http://www.w3.org/2000/svg"><title>é</title></svg>'
    uri = svg_data_uri(svg)
    assert base64.b64decode(uri.split(",", 1)[1]).decode() == svg


def test_line_chart_draws_each_series_with_a_title_and_labels() -> None:
    svg = line_chart_svg(
        {"portfolio": [100.0, 101.5, 99.0, 103.0], "GOOGL": [100.0, 98.0, 97.5, 105.0]},
        title="Value & prices",
        x_labels=["2014-01-02", "2014-01-07"],
        y_label="%",
    )
    root = ET.fromstring(svg)
    assert root.get("aria-label") == "Value & prices" and root.get("role") == "img"
    lines = root.findall(f"{SVG}polyline")
    assert [len(line.get("points", "").split()) for line in lines] == [4, 4]
    assert len({line.get("stroke") for line in lines}) == 2
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert {"portfolio", "GOOGL", "2014-01-02", "2014-01-07", "Value & prices"} <= set(texts)


def test_a_single_point_and_a_flat_series_still_draw() -> None:
    root = ET.fromstring(line_chart_svg({"flat": [5.0]}, title="One day"))
    assert root.findall(f"{SVG}circle") and not root.findall(f"{SVG}polyline")
    flat = ET.fromstring(line_chart_svg({"flat": [5.0, 5.0, 5.0]}, title="Flat"))
    assert flat.findall(f"{SVG}polyline")
