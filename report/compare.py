"""두 결과 파일의 결론 비교: `python -m report.compare 예전.json 새것.json`

비교 묶음의 변형마다(그리고 스윕의 점마다) 두 파일의 배수와 95% 구간, 판정(빨라짐 / 느려짐 /
차이 없음 / 판정 보류)을 나란히 한국어로 출력하고, 판정이 같은지 셉니다. 전부 합치면의 단계는
누적 배수가 아니라 앞 단계 대비 비율로 견줍니다. 방향이 뒤집힌 것(빨라짐 ↔ 느려짐)이 하나라도
있으면 종료 코드 1입니다. 정해진 판정이 판정 보류로 바뀐 것은 따로 셉니다(부하가 있으면 정직한
답입니다). 한쪽에만 있는 항목은 "한쪽에만 있음"으로 세고 실패로 보지
않습니다(새 페이지, 재지 않은 페이지). 두 파일 모두 빌드와 같은 검사를 통과해야 합니다.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from guide import registry
from report import analysis, formatting
from results_format import results_file
from results_format.validation import ResultsError
from torchdoctor.stats import Interval
from torchdoctor.words import ratio_text

REVERSED = {("faster", "slower"), ("slower", "faster")}


@dataclass(frozen=True)
class Item:
    where: str  # 사람이 읽는 이름: 페이지 · 묶음 · 변형
    ratio: Interval


def items(doc: dict) -> dict[tuple, Item]:
    """(페이지, 묶음, key) → 비교할 항목. 스윕의 점은 (페이지, "sweep:<key>", x)입니다."""
    found = {}
    for page_id, view in analysis.analyze(doc).items():
        if not view.measured:
            continue
        page = registry.by_id(page_id)
        for group in view.groups:
            for row in group.rows:
                if row.previous:  # 폭포의 단계: 앞 단계 대비가 판정입니다
                    where = f"{page.heading} · {group.title} · {row.label}(앞 단계 대비)"
                    found[(page_id, group.key, row.key)] = Item(where, row.previous)
                elif row.ratio:
                    where = f"{page.heading} · {group.title} · {row.label}"
                    found[(page_id, group.key, row.key)] = Item(where, row.ratio)
        for key, points in view.sweeps().items():
            spec = page.sweep(key)
            for point in points:
                where = f"{page.heading} · {spec.x_label} {formatting.format_number(point.x)}"
                found[(page_id, f"sweep:{key}", point.x)] = Item(where, point.ratio)
    return found


def compare(old: dict, new: dict) -> tuple[list[str], dict[str, int]]:
    """출력할 줄들과 센 값(same, changed, reversed, held, one_side)."""
    before, after = items(old), items(new)
    counts = {"same": 0, "changed": 0, "reversed": 0, "held": 0, "one_side": 0}
    lines = []
    for key in sorted(before.keys() | after.keys(), key=str):
        a, b = before.get(key), after.get(key)
        if a is None or b is None:
            counts["one_side"] += 1
            only = a or b
            lines.append(f"  한쪽에만 있음: {only.where}")
            continue
        pair = (a.ratio.verdict, b.ratio.verdict)
        if pair in REVERSED:
            mark, kind = "뒤집힘", "reversed"
        elif pair[0] != pair[1] and "inconclusive" in pair:
            mark, kind = "판정 보류와 바뀜", "held"
        elif pair[0] != pair[1]:
            mark, kind = "판정 바뀜", "changed"
        else:
            mark, kind = "같음", "same"
        counts[kind] += 1
        lines.append(f"  [{mark}] {a.where}: {ratio_text(a.ratio)} → {ratio_text(b.ratio)}")
    return lines, counts


def summary(counts: dict[str, int]) -> str:
    judged = counts["same"] + counts["changed"] + counts["reversed"] + counts["held"]
    share = f" ({100 * counts['same'] / judged:.0f}%)" if judged else ""
    return (
        f"판정이 같은 것 {counts['same']}/{judged}{share}, 정해진 판정끼리 바뀐 것 "
        f"{counts['changed']}, 판정 보류와 바뀐 것 {counts['held']}, 뒤집힌 것 "
        f"{counts['reversed']}, 한쪽에만 있는 것 {counts['one_side']}"
    )


USAGE = "사용법: python -m report.compare 예전_결과.json 새_결과.json"


def main(argv: list[str]) -> int:
    if len(argv) != 2 or any(arg.startswith("-") for arg in argv):
        print(USAGE, file=sys.stderr)
        return 0 if set(argv) & {"-h", "--help"} else 2
    try:
        old, new = (results_file.load(Path(name), check_name=False) for name in argv)
    except ResultsError as error:
        print(error, file=sys.stderr)
        return 2
    lines, counts = compare(old, new)
    print(f"예전: {argv[0]} ({results_file.device_title(old['device'])})")
    print(f"새것: {argv[1]} ({results_file.device_title(new['device'])})")
    print("\n".join(lines))
    print(summary(counts))
    if counts["reversed"]:
        print("방향이 뒤집힌 결론이 있습니다(빨라짐 ↔ 느려짐). 같은 장치에서 다시 재 보세요.")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
