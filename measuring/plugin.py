"""`pytest --benchmark`: 이 프로젝트의 측정 옵션과 pytest 훅(연결만 합니다).

- `pytest`: 벤치마크마다 작은 입력("quick" 크기)으로 변형을 한 번씩 부릅니다(시간은 재지 않음).
  묶음·변형 이름은 이때도 레지스트리와 맞춰 봅니다.
- `pytest --benchmark`: `benchmarks/`만 섞인 라운드로 잽니다(measuring/measure.py). 페이지별
  한국어 요약을 출력하고 `test-output/results/<장치>.json`에 씁니다.
- `--publish`: 끝까지 잰 페이지만 `results/<장치>.json`에서 그 페이지 부분을 바꿉니다
  (measuring/session.py). `--sweep`: 크기를 바꿔 가며 재는 스윕도 잽니다.
- `--gpu`: CUDA GPU에서 재야 하는 실행입니다. GPU가 없거나 /dev/shm이 작으면 바로 멈춥니다.
- `--dry-run`: 같은 명령을 아주 작은 입력과 한 라운드로 끝까지 흘려 봅니다(GPU가 없어도 됨).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import torch

from measuring import checks, interleave, memory, timing
from measuring import session as measurement
from measuring.measure import compare  # noqa: F401  (준비물을 이 플러그인에 등록합니다)
from measuring.sweep import sweep  # noqa: F401
from report import summary

BENCH_DIR = measurement.ROOT / "benchmarks"
RUN = pytest.StashKey[measurement.MeasurementRun]()
# pytest-benchmark가 --benchmark-skip으로 건너뛸 때의 이유. 모으는 단계에서 붙인 표시(active)가 먼저
# 걸리므로 둘 다 알아봅니다. 하나라도 놓치면 영어 이유가 "재지 않음"으로 발행됩니다(이슈 21).
SKIPPED_BY_PYTEST_BENCHMARK = ("--benchmark-skip was used", "--benchmark-skip active")


def pytest_addoption(parser):
    group = parser.getgroup("seven-tips", "이 프로젝트의 측정 옵션")
    add = group.addoption
    add(
        "--benchmark",
        action="store_true",
        help="benchmarks/만 섞인 라운드로 재고 요약과 결과 파일을 씁니다.",
    )
    add("--gpu", action="store_true", help="CUDA GPU에서 잽니다. GPU가 없으면 실패합니다.")
    add("--publish", action="store_true", help="끝까지 잰 페이지를 results/<장치>.json에 씁니다.")
    add(
        "--sweep",
        action="store_true",
        help="크기를 바꿔 가며 재는 스윕도 잽니다(시간이 더 듭니다).",
    )
    add("--dry-run", action="store_true", help="작은 입력, 한 라운드로 전체 과정을 확인합니다.")
    add("--results-dir", type=Path, default=None, help="결과 파일을 쓸 폴더.")
    add(
        "--max-minutes",
        type=float,
        default=None,
        help="측정 전체의 시간 한도(분, --gpu의 기본값 10).",
    )
    add("--seed", type=int, default=None, help="라운드 순서를 정하는 시드(기본: 실행마다 새로).")
    budget = "묶음 하나의 라운드 시간(초, 기본 CPU 10, GPU 8). 구간이 ±5%%면 먼저 멈춥니다."
    add("--budget", type=float, default=None, help=budget)
    threads = "잴 때의 torch 스레드 수(기본: CPU 1, GPU는 torch의 기본값). docs/method.md#threads"
    add("--threads", type=timing.positive_int, default=None, help=threads)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    # pytest-benchmark가 자기 설정을 읽기 전에 켜고 끄는 값을 정해야 하므로 먼저 실행합니다.
    config.addinivalue_line("markers", "measures(*groups): 이 벤치마크가 채우는 비교 묶음")
    config.addinivalue_line("markers", "sweep(key): 크기를 바꿔 가며 재는 스윕(--sweep)")
    option = config.option
    if option.benchmark and hasattr(option, "dist"):
        # 측정은 한 프로세스에서 합니다: 평소 pytest의 pytest-xdist 작업자(pyproject.toml의 -n 2)가
        # 함께 돌면 서로의 시간을 흔들고, 결과 파일도 작업자마다 따로 씁니다.
        option.dist, option.tx = "no", []
    if option.gpu and not option.dry_run:
        problem = checks.gpu_problem()
        if problem:
            raise pytest.UsageError(problem)
    run = new_run(option)
    if run.timing and run.publish and not run.dry_run:
        problem = checks.writable_problem(run.results_dir or measurement.PUBLISHED_RESULTS)
        if problem:
            run.messages.append(problem)
    config.stash[RUN] = run
    if run.timing:
        timing.use_threads(option.threads, run.device)
    # 평소 pytest: 벤치마크 함수를 한 번만 실행합니다(pytest-benchmark의 disable 모드).
    option.benchmark_enable, option.benchmark_disable = run.timing, not run.timing


def new_run(option) -> measurement.MeasurementRun:
    cuda = torch.cuda.is_available()
    minutes = option.max_minutes if option.max_minutes is not None else (10 if option.gpu else None)
    budget = option.budget if option.budget is not None else (8.0 if cuda else 10.0)
    settings = interleave.Settings(budget_s=budget)
    if option.dry_run:
        settings = interleave.Settings(min_rounds=1, max_rounds=1, memory=False, dry_run=True)
    return measurement.MeasurementRun(
        timing=option.benchmark,
        gpu=option.gpu,
        dry_run=option.dry_run,
        publish=option.publish,
        sweep=option.sweep,
        results_dir=option.results_dir,
        device=torch.device("cuda" if cuda else "cpu"),
        settings=settings,
        seed=option.seed if option.seed is not None else int.from_bytes(os.urandom(4), "big"),
        max_seconds=minutes * 60 if minutes else None,
    )


def pytest_collection_modifyitems(config, items):
    run = config.stash[RUN]
    if run.timing:
        memory.settle()
        # 스윕은 --sweep일 때만 잽니다. 빠진 스윕은 발행할 때 예전 결과가 그대로 남습니다.
        if not run.sweep:
            items[:] = [item for item in items if not item.get_closest_marker("sweep")]
        for item in items:
            if "benchmark" in getattr(item, "fixturenames", ()):
                own = item.get_closest_marker("benchmark")
                marker = pytest.mark.benchmark(
                    **(timing.benchmark_settings(run.device) | (own.kwargs if own else {}))
                )
                item.add_marker(marker, append=False)


def pytest_ignore_collect(collection_path, config):
    # --benchmark는 측정만 합니다. 정확성 테스트(tests/)는 평소 pytest가 실행합니다.
    run = config.stash.get(RUN, None)
    if run and run.timing and Path(collection_path).is_relative_to(measurement.ROOT / "tests"):
        return True
    return None


def pytest_deselected(items):
    if items:
        items[0].config.stash[RUN].deselected += len(items)


def page_id(item) -> str | None:
    """벤치마크 테스트가 재는 페이지(벤치마크가 아니면 None)."""
    if item.path.parent != BENCH_DIR:
        return None
    found = getattr(getattr(item, "module", None), "PAGE", None)
    if found is None and hasattr(item, "callspec"):
        found = item.callspec.params.get("page")
    # 매개변수가 하나도 없는 레지스트리 벤치마크(빈 목록)는 어느 페이지도 재지 않습니다.
    return found if isinstance(found, str) else None


def is_benchmark(item) -> bool:
    return page_id(item) is not None


def pytest_runtest_setup(item):
    run = item.config.stash[RUN]
    if run.timing and run.max_seconds and is_benchmark(item):
        if time.monotonic() - run.started > run.max_seconds:
            run.page(page_id(item)).skipped_by_limit += 1
            pytest.skip(
                f"측정 전체의 시간 한도({run.max_seconds / 60:.3g}분)를 넘어 재지 않았습니다."
            )


def _declared_groups(item) -> tuple[str, ...]:
    marker = item.get_closest_marker("measures")
    return marker.args if marker else ()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    run = item.config.stash[RUN]
    if not (run.timing and is_benchmark(item)) or (report.when != "call" and report.passed):
        return
    record = run.page(page_id(item))
    if report.failed:
        record.failed += 1
    elif report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        if any(text in reason for text in SKIPPED_BY_PYTEST_BENCHMARK):
            run.benchmark_skipped += 1
            return
        if item.get_closest_marker("sweep"):
            return  # 스윕을 건너뛴 이유는 페이지가 registry의 not_applicable로 보여 줍니다.
        for group in _declared_groups(item):
            run.record_not_measured(page_id(item), group, reason)


@pytest.fixture(scope="session")
def measurement_run(request) -> measurement.MeasurementRun:
    return request.config.stash[RUN]


@pytest.fixture(scope="session")
def bench_device(measurement_run) -> torch.device:
    return measurement_run.device


@pytest.fixture(scope="session")
def size_key(measurement_run) -> str:
    """크기 표(`SIZES[size_key]`)를 고르는 열쇠: "quick", "cpu" 또는 "cuda"."""
    return measurement_run.size_key


def pytest_sessionfinish(session, exitstatus):
    run = session.config.stash.get(RUN, None)
    if not run or not run.timing:
        return
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        run.messages.append(
            "실행이 중단되어 결과 파일을 쓰지 않았습니다. 예전 파일은 그대로입니다."
        )
        return
    if not run.pages:
        if run.benchmark_skipped:
            run.messages.append(
                "--benchmark-skip으로 모든 측정을 건너뛰어 아무것도 쓰지 않았습니다."
            )
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return
    if not measurement.finish(run):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    run = config.stash.get(RUN, None)
    if run is None:
        return
    write = terminalreporter.write_line
    if run.document:
        terminalreporter.section("측정 요약")
        for line in summary.lines(run.document):
            write(line)
    for line in run.messages:
        write(line)
    stale = summary.stale_lines(measurement.ROOT)
    if stale:
        terminalreporter.section("다시 재야 하는 결과(실패는 아닙니다)")
        for line in stale:
            write(line)
