"""`pytest --benchmark`: 이 프로젝트의 측정 옵션입니다(pytest-benchmark에는 없는 옵션입니다).

- `pytest`: 벤치마크마다 작은 입력으로 한 번씩만 실행합니다(시간은 재지 않음). 코드가 썩지 않게
  하려는 것입니다. 끝에 `results/`에서 코드가 바뀐 뒤 다시 재지 않은 결과를 알려 줍니다.
- `pytest --benchmark`: `benchmarks/`만 제대로 잽니다(워밍업, 라운드마다 1 ms 이상, GPU 동기화,
  중앙값과 IQR). 팁별 한국어 요약을 출력하고 `test-output/results/<장치>.json`에 씁니다.
- `--publish`: 전체 벤치마크가 실패 없이 끝났을 때만 `results/<장치>.json`에 씁니다.
- `--gpu`: CUDA GPU에서 재야 하는 실행입니다. GPU가 없으면 바로 실패합니다.
- `--dry-run`: 같은 명령을 아주 작은 입력과 한 라운드로 끝까지 흘려 봅니다(GPU가 없어도 됨).
  결과는 `dry-run-<장치>.json`으로 test-output에만 쓰고 `results/`에는 절대 쓰지 않습니다.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch

from benchmarks import analysis, environment, results_file

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = ROOT / "benchmarks"
LOCAL_RESULTS = ROOT / "test-output" / "results"
PUBLISHED_RESULTS = ROOT / "results"
SYNCED_TIMER = "benchmarks.timing.synchronized_perf_counter"


@dataclass
class MeasurementRun:
    """한 번의 pytest 실행에서 모은 측정과, 어떻게 재는지에 대한 설정입니다."""

    timing: bool
    gpu: bool
    dry_run: bool
    publish: bool
    results_dir: Path | None
    device: torch.device
    entries: list[dict] = field(default_factory=list)
    not_measured: list[dict] = field(default_factory=list)
    modules_run: set[str] = field(default_factory=set)
    deselected: int = 0
    messages: list[str] = field(default_factory=list)
    document: dict | None = None

    @property
    def quick(self) -> bool:
        """작은 입력으로 돌릴지: 시간을 재지 않거나 드라이 런일 때입니다."""
        return self.dry_run or not self.timing


RUN = pytest.StashKey[MeasurementRun]()


def pytest_addoption(parser):
    group = parser.getgroup("seven-tips", "이 프로젝트의 측정 옵션")
    group.addoption(
        "--benchmark",
        action="store_true",
        help="benchmarks/만 시간을 재서 실행하고, 팁별 한국어 요약과 결과 파일을 씁니다.",
    )
    group.addoption(
        "--gpu", action="store_true", help="CUDA GPU에서 잽니다. GPU가 없으면 실패합니다."
    )
    group.addoption(
        "--publish",
        action="store_true",
        help="전체 벤치마크가 성공하면 결과를 results/<장치>.json에 씁니다(저장소에 올릴 파일).",
    )
    group.addoption(
        "--dry-run",
        action="store_true",
        help="작은 입력, 한 라운드로 전체 과정을 확인합니다. results/에는 쓰지 않습니다.",
    )
    group.addoption(
        "--results-dir",
        type=Path,
        default=None,
        help="결과 파일을 쓸 폴더(기본: test-output/results, --publish면 results).",
    )


def _gpu_missing_message() -> str:
    return (
        "--gpu: CUDA GPU를 찾지 못했습니다(torch.cuda.is_available()가 False, "
        f"torch {torch.__version__}, CUDA 빌드 {torch.version.cuda}). "
        "GPU 측정은 GPU가 있는 컴퓨터에서 실행하세요. 흐름만 확인하려면 --dry-run을 더하세요."
    )


def _configure_pytest_benchmark(option, run: MeasurementRun) -> None:
    if not run.timing:
        # 평소 pytest: 벤치마크 함수를 한 번만 실행합니다(pytest-benchmark의 disable 모드).
        if not getattr(option, "benchmark_enable", False):
            option.benchmark_disable = True
        return
    option.benchmark_enable = True
    option.benchmark_disable = False
    option.benchmark_warmup = not run.dry_run
    # 워밍업은 호출 2번(짧은 연산은 1 ms 이상인 라운드 1번)이면 충분합니다. 반복 횟수를 정하는
    # 보정 단계에서 이미 여러 번 실행했기 때문입니다. 느린 측정의 GPU 시간을 아낍니다.
    option.benchmark_warmup_iterations = 2
    # 한 라운드가 1 ms 이상이 되도록 반복 횟수를 고릅니다: 동기화와 타이머 비용이 묻힙니다.
    option.benchmark_min_time = "0.001"
    option.benchmark_min_rounds = 1 if run.dry_run else 7
    option.benchmark_max_time = "0.000001" if run.dry_run else "1.0"
    if run.device.type == "cuda":
        option.benchmark_timer = SYNCED_TIMER


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    option = config.option
    cuda = torch.cuda.is_available()
    if option.gpu and not cuda and not option.dry_run:
        raise pytest.UsageError(_gpu_missing_message())
    run = MeasurementRun(
        timing=option.benchmark,
        gpu=option.gpu,
        dry_run=option.dry_run,
        publish=option.publish,
        results_dir=option.results_dir,
        device=torch.device("cuda" if cuda else "cpu"),
    )
    config.stash[RUN] = run
    _configure_pytest_benchmark(option, run)


def pytest_ignore_collect(collection_path, config):
    # --benchmark는 측정만 합니다. 정확성 테스트(tests/)는 평소 pytest가 실행합니다.
    run = config.stash.get(RUN, None)
    if run and run.timing and Path(collection_path).is_relative_to(ROOT / "tests"):
        return True
    return None


def pytest_deselected(items):
    if items:
        items[0].config.stash[RUN].deselected += len(items)


# --- 벤치마크가 쓰는 준비물 ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def measurement_run(request) -> MeasurementRun:
    return request.config.stash[RUN]


@pytest.fixture(scope="session")
def bench_device(measurement_run) -> torch.device:
    return measurement_run.device


@pytest.fixture(scope="session")
def quick(measurement_run) -> bool:
    """True면 작은 입력을 씁니다(평소 pytest와 드라이 런)."""
    return measurement_run.quick


@pytest.fixture(scope="session")
def size_key(measurement_run) -> str:
    """크기 표를 고르는 열쇠: 작은 입력이면 "quick", 아니면 장치 종류("cuda" 또는 "cpu")."""
    return "quick" if measurement_run.quick else measurement_run.device.type


class Measure:
    """`measure(fn, *args, key=..., group=..., variant=..., role=...)`: 재고 기록합니다.

    - key: 팁 안에서 고유한 영어 이름(결과 파일의 id는 "tipN.key").
    - group: 비교하는 묶음의 한국어 이름. 같은 group 안에서 role="baseline"이 기준입니다.
    - role: "baseline"(느린 방식), "fast"(빠른 방식), "other", "ceiling"(같은 실행에서 잰 천장).
    - bytes_moved, flops, samples, steps: 호출 한 번이 옮기는 바이트, 하는 연산, 처리하는 샘플과
      스텝. 중앙값으로 나눠 GB/s, TFLOP/s, 샘플/초, 스텝/초를 계산합니다.
    - metrics: 시간과 상관없이 잰 값(예: peak_memory_mib, syncs_per_step).
    - ceiling: 비교할 천장 측정의 key.
    - rounds: 주면 호출 한 번이 곧 한 라운드입니다(몇 초씩 걸리는 학습 같은 것). 없으면
      pytest-benchmark가 라운드가 1 ms 이상이 되도록 반복 횟수를 정합니다.
    """

    def __init__(self, benchmark, request, run: MeasurementRun):
        self.benchmark, self.request, self.run = benchmark, request, run

    def __call__(
        self,
        fn,
        *args,
        key: str,
        group: str,
        variant: str,
        role: str = "other",
        bytes_moved: float | None = None,
        flops: float | None = None,
        samples: float | None = None,
        steps: float | None = None,
        metrics: dict | None = None,
        ceiling: str | None = None,
        rounds: int | None = None,
        extra: dict | None = None,
    ):
        if rounds is None:
            result = self.benchmark(fn, *args)
        else:
            warmup = 0 if self.run.dry_run else 1
            rounds = 1 if self.run.dry_run else rounds
            result = self.benchmark.pedantic(fn, args=args, rounds=rounds, warmup_rounds=warmup)
        if self.benchmark.stats is None:  # 시간을 재지 않는 평소 pytest
            return result
        stats = self.benchmark.stats.stats
        derived = {
            "gb_per_s": bytes_moved and bytes_moved / stats.median / 1e9,
            "tflop_per_s": flops and flops / stats.median / 1e12,
            "samples_per_s": samples and samples / stats.median,
            "steps_per_s": steps and steps / stats.median,
        }
        derived = {name: value for name, value in derived.items() if value}
        self.run.entries.append(
            _entry(self.request.module, key, group, variant, role, stats, self.benchmark.stats)
            | {
                "metrics": _rounded(derived | (metrics or {})),
                "ceiling": f"{self.request.module.TIP}.{ceiling}" if ceiling else None,
                **({"extra": extra} if extra else {}),
            }
        )
        return result


def _rounded(values: dict) -> dict:
    return {name: float(f"{value:.4g}") for name, value in values.items()}


def _entry(module, key, group, variant, role, stats, metadata) -> dict:
    snippet = Path(module.SNIPPET.__file__).resolve()
    return {
        "id": f"{module.TIP}.{key}",
        "tip": module.TIP,
        "key": key,
        "group": group,
        "variant": variant,
        "role": role,
        "median_s": float(f"{stats.median:.4g}"),
        "iqr_s": float(f"{stats.iqr:.4g}"),
        "rounds": stats.rounds,
        "iterations": metadata.iterations,
        "snippet": snippet.relative_to(ROOT).as_posix(),
        "snippet_sha256": results_file.snippet_sha256(snippet),
    }


@pytest.fixture
def measure(benchmark, request, measurement_run) -> Measure:
    return Measure(benchmark, request, measurement_run)


# --- 실행 결과 모으기와 쓰기 ---------------------------------------------------------------------


def _is_benchmark(item) -> bool:
    return item.path.parent == BENCH_DIR and hasattr(item.module, "TIP")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not _is_benchmark(item) or (report.when != "call" and not report.skipped):
        return
    run = item.config.stash[RUN]
    run.modules_run.add(item.module.__name__)
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        run.not_measured.append({"tip": item.module.TIP, "key": item.name, "reason": reason})


def _expected_modules() -> set[str]:
    return {f"benchmarks.{path.stem}" for path in BENCH_DIR.glob("bench_*.py")}


def _publish_problem(session, run: MeasurementRun) -> str | None:
    if run.dry_run:
        return "드라이 런이라서 results/에는 쓰지 않았습니다."
    if session.testsfailed:
        return f"실패한 벤치마크가 {session.testsfailed}개 있어 results/를 그대로 두었습니다."
    missing = sorted(_expected_modules() - run.modules_run)
    if missing or run.deselected:
        left_out = ", ".join(missing) or f"{run.deselected}개 항목"
        return f"전체 벤치마크를 실행했을 때만 results/에 씁니다(빠진 것: {left_out})."
    return None


def _write(path: Path, doc: dict, run: MeasurementRun) -> None:
    results_file.write_atomically(path, doc)
    run.messages.append(f"결과 파일을 썼습니다: {path}")


def pytest_sessionfinish(session, exitstatus):
    run = session.config.stash.get(RUN, None)
    if not run or not run.timing:
        return
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        run.messages.append(
            "실행이 중단되어 결과 파일을 쓰지 않았습니다. 예전 파일은 그대로입니다."
        )
        return
    if not run.entries and not run.not_measured:
        return
    env = environment.describe(run.device, ROOT)
    run.document = {
        "schema_version": results_file.SCHEMA_VERSION,
        "dry_run": run.dry_run,
        "environment": env,
        "benchmarks": run.entries,
        "not_measured": run.not_measured,
    }
    name = ("dry-run-" if run.dry_run else "") + environment.results_name(env) + ".json"
    problem = _publish_problem(session, run) if run.publish else None
    if run.publish and problem is None:
        _write((run.results_dir or PUBLISHED_RESULTS) / name, run.document, run)
        return
    _write((run.results_dir or LOCAL_RESULTS) / name, run.document, run)
    if problem:
        run.messages.append(problem)
        if not run.dry_run:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def stale_lines(root: Path) -> list[str]:
    """`results/`에서 측정한 뒤 코드가 바뀐 결과(와 읽을 수 없는 결과 파일)를 알리는 줄들입니다."""
    lines = []
    for path in results_file.published_files(root):
        try:
            stale = results_file.stale_snippets(results_file.load(path), root)
        except results_file.ResultsError as error:
            lines.append(str(error))
            continue
        for tip, snippets in stale.items():
            changed = ", ".join(snippets)
            lines.append(
                f"{path.relative_to(root)} · {tip}: 측정한 뒤 {changed}이(가) 바뀌었습니다"
            )
    return lines


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    run = config.stash.get(RUN, None)
    if run is None:
        return
    write = terminalreporter.write_line
    if run.document:
        terminalreporter.section("측정 요약")
        for line in analysis.summary_lines(run.document):
            write(line)
    for line in run.messages:
        write(line)
    stale = stale_lines(ROOT)
    if stale:
        terminalreporter.section("다시 재야 하는 결과(실패는 아닙니다)")
        for line in stale:
            write(line)
