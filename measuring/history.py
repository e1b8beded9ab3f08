"""발행할 때 예전 실행을 새 실행에 잇습니다: 같은 코드로 잰 예전 중앙값 비율을 항목마다 남깁니다.

한 실행의 구간은 그 실행의 기계 상태만 겪습니다. 같은 코드를 다시 실행하면 효과 자체가 그보다 크게
움직이므로, 페이지는 실행마다의 중앙값으로 구간을 냅니다(report/runs.py).
코드(스니펫, 벤치마크)가 바뀌면 예전 실행은 다른 것을 잰 것이라 잇지 않습니다.
"""

from __future__ import annotations

from results_format.schema import MAX_RUNS

CODE_FIELDS = ("snippet_sha256", "benchmark_sha256")
KEEP = MAX_RUNS - 1  # 지금 실행과 함께 MAX_RUNS개


def same_code(old: dict, new: dict) -> bool:
    return all(old[key] == new[key] for key in CODE_FIELDS)


def _earlier(value: dict | None, history: list[float] | None) -> list[float]:
    """예전 항목의 중앙값과 그보다 예전 값들(새것부터)."""
    if value is None:
        return []
    return [value["median"], *(history or [])][:KEEP]


def _with_history(entry: dict, name: str, history_name: str, earlier: list[float]) -> dict:
    if entry.get(name) is None or not earlier:
        return entry
    return entry | {history_name: earlier}


def _entry(new: dict, old: dict | None) -> dict:
    if old is None:
        return new
    ratio = _earlier(old.get("ratio"), old.get("ratio_history"))
    previous = _earlier(old.get("versus_previous"), old.get("previous_history"))
    new = _with_history(new, "ratio", "ratio_history", ratio)
    return _with_history(new, "versus_previous", "previous_history", previous)


def _sweep(new: dict, old: dict | None) -> dict:
    if old is None or not same_code(old["measured"], new["measured"]):
        return new
    by_x = {point["x"]: point for point in old["points"]}
    points = []
    for point in new["points"]:
        before = by_x.get(point["x"])
        earlier = _earlier(before["ratio"], before.get("ratio_history")) if before else []
        points.append(point | {"ratio_history": earlier} if earlier else point)
    return new | {"points": points}


def carry(old: dict | None, new: dict) -> dict:
    """새 페이지 부분에 같은 코드로 잰 예전 부분의 실행을 잇습니다(예전 것이 없거나 코드가 다르면
    새 부분 그대로). 스윕은 스윕마다 자기 코드로 따로 봅니다."""
    if old is None:
        return new
    sweeps = {key: _sweep(sweep, old["sweeps"].get(key)) for key, sweep in new["sweeps"].items()}
    new = new | {"sweeps": sweeps}
    if not same_code(old["measured"], new["measured"]):
        return new
    run = {"date": old["measured"]["date"], "seed": old["measured"]["seed"]}
    earlier_runs = [run, *old["measured"].get("earlier_runs", [])][:KEEP]
    by_key = {(entry["group"], entry["key"]): entry for entry in old["benchmarks"]}
    benchmarks = [_entry(e, by_key.get((e["group"], e["key"]))) for e in new["benchmarks"]]
    measured = new["measured"] | {"earlier_runs": earlier_runs}
    return new | {"measured": measured, "benchmarks": benchmarks}
