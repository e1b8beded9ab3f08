"""스윕의 숫자: 크기를 따라 판정이 바뀌는 교차점.

숫자만 다룹니다. 문장은 report/curve_sentences.py가 만듭니다. 점과 행은 report/analysis.py가
결과 파일에서 만든 것을 받습니다.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from torchdoctor.stats import Interval


@dataclass(frozen=True)
class Point:
    x: float
    ratio: Interval
    baseline_s: float
    variant_s: float
    metrics: dict


@dataclass(frozen=True)
class Crossover:
    """스윕에서 기준 대비 판정이 바뀌는 곳. kind: "from"(여기부터 빨라짐), "all"(범위 전체),
    "none"(범위 안에 교차 없음), "until"(여기까지만 빨라짐), "mixed"(오르내려서 교차점 하나로
    말할 수 없음: runs()로 구간마다 말합니다)."""

    kind: str
    verdict: str
    x: float | None
    low_x: float
    high_x: float


# 판정의 순서: 느려짐 < 차이 없음·판정 보류 < 빨라짐. 크기를 따라 한 방향으로만 움직여야 교차점이
# 하나입니다. 판정 보류는 ±5% 띠에 걸친 구간이라 차이 없음과 같은 높이에 둡니다.
ORDER = {"slower": 0, "same": 1, "inconclusive": 1, "faster": 2}
DEFINITE = ("faster", "slower")


def runs(points: list[Point]) -> list[tuple[str, float, float]]:
    """x 순서로 같은 판정이 이어지는 구간들: [(판정, 첫 x, 끝 x), ...]."""
    found: list[tuple[str, float, float]] = []
    for p in sorted(points, key=lambda p: p.x):
        if found and found[-1][0] == p.ratio.verdict:
            found[-1] = (found[-1][0], found[-1][1], p.x)
        else:
            found.append((p.ratio.verdict, p.x, p.x))
    return found


def crossover(points: list[Point]) -> Crossover:
    points = sorted(points, key=lambda p: p.x)
    verdicts = [p.ratio.verdict for p in points]
    span = (points[0].x, points[-1].x)
    if len({ORDER[v] for v in verdicts}) == 1:
        kind = "all" if verdicts[0] in DEFINITE and len(set(verdicts)) == 1 else "none"
        return Crossover(kind, verdicts[0], None, *span)
    stretches = [verdict for verdict, *_ in runs(points)]
    pairs = itertools.pairwise(stretches)
    steps = {ORDER[b] > ORDER[a] for a, b in pairs if ORDER[a] != ORDER[b]}
    if len(steps) == 2:  # 올라갔다 내려오거나 그 반대: 교차점 하나로 말하면 틀립니다
        return Crossover("mixed", verdicts[-1], None, *span)
    last = verdicts[-1]
    # 큰 쪽 끝에서 같은 높이의 판정이 이어지는 첫 점: 그 앞 점과의 사이에서 판정이 바뀝니다.
    start = len(points) - 1
    while start > 0 and ORDER[verdicts[start - 1]] == ORDER[last]:
        start -= 1
    before, after = points[start - 1], points[start]
    if last in DEFINITE:
        return Crossover("from", last, _log_interpolate(before, after), before.x, after.x)
    return Crossover("until", verdicts[start - 1], None, before.x, after.x)


def _log_interpolate(before: Point, after: Point) -> float:
    """두 점 사이에서 비율의 중앙값이 1을 지나는 x(로그 축에서 직선으로 잇습니다)."""
    a, b = math.log(before.ratio.median), math.log(after.ratio.median)
    if a == b or not (min(a, b) <= 0 <= max(a, b)):
        return math.sqrt(before.x * after.x)
    share = (0 - a) / (b - a)
    return math.exp(math.log(before.x) + share * (math.log(after.x) - math.log(before.x)))
