"""먼저 할 일 페이지의 `<!-- gpus -->` 자리에 '내 GPU가 지원하는 것' 표를 그립니다.

행은 guide/gpus.toml, 마지막 열(밀집 bf16 최고 성능)은 guide/peaks.toml에서 옵니다. 표를 페이지에
손으로 쓰면 데이터와 어긋나므로, 빌드할 때마다 데이터에서 그립니다.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from pathlib import Path

from mkdocs.exceptions import PluginError

# 사이트의 패키지는 설치하지 않으므로(pyproject.toml) 저장소 루트에서 찾습니다. MkDocs는 훅을
# 읽는 동안 hooks/만 경로에 넣었다가 되돌리므로, 아래 import가 모두 여기서 풀립니다.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guide import gpus, peaks
from hooks.templating import render

MARKER = re.compile(r"^<!--\s*gpus\s*-->[ \t]*$", re.M)
NO_PEAK = "—"
YES_NO = {True: "있음", False: "없음"}


def rows(found: Iterable[gpus.Gpu], known: Iterable[peaks.Peak]) -> list[dict[str, str]]:
    """표의 칸 글자. 최고 성능이 없는 GPU는 —이고, peaks.toml에 없는 label은 빌드를 멈춥니다."""
    by_label = {peak.label: peak for peak in known}
    table = []
    for gpu in found:
        if gpu.peak and gpu.peak not in by_label:
            raise PluginError(
                f"guide/gpus.toml의 {gpu.label}: guide/peaks.toml에 {gpu.peak!r} 항목이 없습니다"
            )
        figure = f"{by_label[gpu.peak].bf16_dense_tflops:g}" if gpu.peak else NO_PEAK
        table.append({"label": gpu.label, "where": gpu.where, "cc": gpu.cc,
                      "bf16": YES_NO[gpu.bf16], "tf32": YES_NO[gpu.tf32],
                      "float8": YES_NO[gpu.float8], "precision": gpu.precision,
                      "peak": figure})  # fmt: skip
    return table


def table(found: Iterable[gpus.Gpu], known: Iterable[peaks.Peak]) -> str:
    return render("gpus_table.html", rows=rows(found, known))


def on_page_markdown(markdown: str, page, config, files) -> str:
    if not MARKER.search(markdown):
        return markdown
    return MARKER.sub(lambda _: table(gpus.load(), peaks.load()), markdown)
