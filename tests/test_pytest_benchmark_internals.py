"""pytest-benchmark의 비공개 부분에 기대는 곳은 두 군데뿐입니다: measuring/interleave.py(준비물을
복제해 그 실행기와 통계를 쓰는 clone_fixture, prepare, claim)와 measuring/plugin.py
(`--benchmark-skip`의 영어 이유를 알아보는 SKIPPED_BY_PYTEST_BENCHMARK). pytest-benchmark를
올렸을 때 그중 하나라도 없어지면 측정이 조용히 틀어지지 않고, 이 테스트가 무엇이 없어졌는지
한국어로 말하며 실패합니다.
"""

import importlib.metadata
import inspect
import re
from pathlib import Path

import pytest_benchmark.plugin

from measuring import interleave, plugin

ROOT = Path(__file__).resolve().parents[1]


def missing_internals(fixture) -> list[str]:
    return [name for name in interleave.FIXTURE_INTERNALS if not hasattr(fixture, name)]


def test_the_fixture_still_has_every_private_name_the_interleaved_rounds_use(benchmark):
    version = importlib.metadata.version("pytest-benchmark")
    missing = missing_internals(benchmark)
    interleave.claim(benchmark)  # 이 준비물로 재지 않았다는 경고를 내지 않게
    assert missing == [], (
        f"pytest-benchmark {version}의 benchmark 준비물에 measuring/interleave.py가 쓰는 "
        f"비공개 이름이 없습니다: {', '.join(missing)}. 그 판의 BenchmarkFixture를 읽고 "
        "clone_fixture·prepare·claim을 고치거나, requirements-dev.txt의 고정을 되돌리세요."
    )


def test_the_skip_reasons_the_plugin_recognises_are_still_pytest_benchmarks_own():
    version = importlib.metadata.version("pytest-benchmark")
    source = inspect.getsource(pytest_benchmark.plugin)
    gone = [text for text in plugin.SKIPPED_BY_PYTEST_BENCHMARK if text not in source]
    assert gone == [], (
        f"pytest-benchmark {version}가 --benchmark-skip으로 건너뛸 때 쓰는 이유가 바뀌었습니다. "
        f"measuring/plugin.py의 SKIPPED_BY_PYTEST_BENCHMARK에서 찾지 못한 글: {gone}"
    )


def test_only_the_interleave_module_touches_the_fixtures_private_names():
    pattern = re.compile(r"\.(" + "|".join(interleave.FIXTURE_INTERNALS) + r")\b")
    users = sorted(
        str(path.relative_to(ROOT))
        for folder in ("measuring", "benchmarks")
        for path in (ROOT / folder).glob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    )
    assert users == ["measuring/interleave.py"]


def test_the_internals_check_can_fail():
    class Upgraded:  # _calibrate_timer가 없어진 판을 흉내 냅니다
        _make_runner = _make_stats = _min_time = _mode = _warmup = _cleanup_callbacks = None

    assert missing_internals(Upgraded()) == ["_calibrate_timer"]
