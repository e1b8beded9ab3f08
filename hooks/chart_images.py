"""차트를 페이지에 넣는 방법: SVG 파일(밝은 화면용, 어두운 화면용)과 그것을 가리키는 `<img>` 두 개.

SVG를 HTML에 그대로 넣으면 차트 하나가 요소 수백 개가 되어, 결과가 많은 페이지(전부 합치기)는
휴대폰이 스타일과 배치를 계산하느라 멈춥니다. 파일로 빼면 차트 하나가 요소 두 개입니다.
`<img>` 안의 SVG는 페이지의 글자색(currentColor)을 모르므로 글자색을 넣은 파일을 화면 모드마다
만들고, Material이 `#only-light`·`#only-dark`로 끝나는 주소의 이미지를 모드에 맞춰 숨깁니다.
파일 이름은 내용의 해시라서 같은 차트는 같은 파일이고, 바뀐 차트는 브라우저 캐시에 남지 않습니다.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from html import unescape
from pathlib import Path

from markupsafe import Markup

from hooks.chart_svg import INK
from hooks.templating import render

FOLDER = "assets/charts"
# Material 팔레트의 본문 글자색(밝은 화면: 검정 87%, 어두운 화면 slate: 밝은 회청색 82%).
INKS = {"light": "rgba(0, 0, 0, 0.87)", "dark": "rgba(226, 228, 233, 0.82)"}
PT_TO_PX = 4 / 3


def _size_px(svg: str, name: str) -> int:
    """matplotlib이 pt로 쓴 크기를 CSS 픽셀로. 자리를 미리 잡아 두어 배치가 흔들리지 않습니다."""
    points = float(re.search(rf'\b{name}="([\d.]+)pt"', svg)[1])
    return round(points * PT_TO_PX)


def write_files(svg: str, site_dir: Path) -> dict[str, str]:
    """화면 모드마다 SVG 파일을 씁니다(있으면 건너뜁니다). {모드: 사이트 안 경로}."""
    digest = hashlib.sha256(svg.encode()).hexdigest()[:16]
    written = {}
    for mode, ink in INKS.items():
        path = f"{FOLDER}/{digest}-{mode}.svg"
        target = site_dir / path
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            text = svg.replace("currentColor", ink)
            target.write_text('<?xml version="1.0" encoding="utf-8"?>\n' + text, encoding="utf-8")
        written[mode] = path
    return written


def embed(svg: str, site_dir: Path, url: Callable[[str], str]) -> Markup:
    """차트 SVG를 파일로 쓰고 `<img>` 두 개(밝은 화면, 어두운 화면)를 돌려줍니다."""
    assert "currentColor" in svg and INK not in svg, "charts.py가 마친 SVG여야 합니다"
    paths = write_files(svg, site_dir)
    alt = unescape(re.search(r'aria-label="([^"]*)"', svg)[1])
    return Markup(
        render(
            "chart_image.html",
            alt=alt,
            width=_size_px(svg, "width"),
            height=_size_px(svg, "height"),
            light=url(paths["light"]),
            dark=url(paths["dark"]),
        ).strip()
    )
