"""hooks의 템플릿 한곳: 자동 이스케이프하는 Jinja 환경(hooks/templates/)과 글자를 다듬는 작은 함수.

결과 파일의 글자는 바깥 데이터라서 모두 이스케이프하고, Markdown이 다시 해석하지 않도록 HTML 블록
하나로 내보냅니다.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from guide import registry

TEMPLATES = Path(__file__).with_name("templates")
# 렌더 함수가 받는 두 함수: 문서 경로를 이 페이지에서의 주소로, 차트 SVG를 페이지에 넣을 HTML로.
Url = Callable[[str], str]
Chart = Callable[[str], Markup]
REQUIRES_LABELS = {"any": "CPU 또는 GPU", "cuda": "CUDA GPU", "multi-gpu": "GPU 2개 이상"}


def code(text: object) -> Markup:
    """이스케이프한 다음 `백틱`으로 감싼 부분만 <code>로 바꿉니다(이스케이프가 먼저라 안전)."""
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


ENV = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined)
ENV.filters["code"] = code


def render(template: str, **context) -> str:
    """템플릿을 그리고 빈 줄을 없앱니다. 빈 줄이 있으면 Markdown이 HTML 블록을 끊습니다."""
    html = ENV.get_template(template).render(**context)
    return "\n".join(line for line in html.splitlines() if line.strip()) + "\n"


def plain(label: str) -> str:
    """차트와 요약에 쓰는 이름: 레지스트리 이름의 `백틱`을 뺍니다."""
    return label.replace("`", "")


def measure_command(page: registry.Page) -> str:
    """이 페이지만 재서 발행하는 명령. 레지스트리가 재는 페이지들은 bench_registry.py 하나를 나눠
    쓰므로 `-k <id>`로 이 페이지만 고릅니다(없으면 그 파일의 모든 페이지를 다시 잽니다)."""
    only = f" -k {page.id}" if page.benchmark == "bench_registry" else ""
    return f".venv/bin/python -m pytest benchmarks/{page.benchmark}.py{only} --benchmark --publish"
