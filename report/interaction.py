"""전부 합치면의 상호작용: 단계로 더할 때의 몫과 마지막 단계에서 뺄 때의 몫이 다른 기법.

폭포(waterfall)는 기법을 하나씩 더하며 앞 단계와 비교하고, 빼 보기(leave-one-out)는 모든 기법을
쓴 단계에서 하나만 뺍니다. 두 판정이 다르면 그 기법의 몫이 함께 쓰는 기법에 달려 있다는
뜻입니다. 빼 보기의 변형 이름은 `without-<폭포의 변형 이름>`입니다(guide/pages.toml).
"""

from __future__ import annotations

from report.analysis import VERDICTS, Group
from report.formatting import quoted

# 빼서 느려지면 그 기법은 빠르게 하는 것이고, 빼서 빨라지면 느리게 하는 것입니다.
EFFECT_OF_REMOVING = {"slower": "faster", "faster": "slower", "same": "same"}


def disagreements(leave_one_out: Group, waterfall: Group, skip: set[str]) -> list[str]:
    """두 판정이 다른 기법마다 "‘이름’(더할 때 …, 뺄 때 …)". skip: 판정하지 않을 변형."""
    added = {row.entry["variant"]: row for row in waterfall.rows if row.previous}
    found = []
    for row in leave_one_out.rows:
        name = row.entry["variant"].removeprefix("without-")
        stage = added.get(name)
        if not (row.ratio and stage) or name in skip or row.entry["variant"] in skip:
            continue
        when_added, when_removed = stage.previous.verdict, EFFECT_OF_REMOVING.get(row.verdict)
        # 판정 보류가 한쪽에라도 있으면 다르다고 말할 수 없습니다.
        if when_removed and when_added != "inconclusive" and when_added != when_removed:
            found.append(
                f"{quoted(stage.label)}(앞 단계에 더할 때 {VERDICTS[when_added]}, "
                f"마지막 단계에서의 몫은 {VERDICTS[when_removed]})"
            )
    return found


def sentence(leave_one_out: Group, waterfall: Group | None, skip: set[str]) -> str:
    found = disagreements(leave_one_out, waterfall, skip) if waterfall else []
    if not found:
        return ""
    return (
        f" 폭포와 판정이 다른 것: {', '.join(found)}. 한 기법의 몫은 함께 쓰는 기법에 따라"
        " 달라집니다(상호작용). 예를 들어 다른 단계가 스텝 시간을 크게 늘리면 그 안에 묻힙니다."
    )
