"""`pytest --benchmark`: 이 프로젝트의 측정 옵션입니다(pytest-benchmark에는 없는 옵션입니다).

- `pytest`: 벤치마크마다 작은 입력("quick" 크기)으로 한 번씩만 실행합니다(시간은 재지 않음).
  끝에 `results/`에서 코드가 바뀐 뒤 다시 재지 않은 결과를 알려 줍니다.
- `pytest --benchmark`: `benchmarks/`만 제대로 잽니다(워밍업, 라운드마다 1 ms 이상, GPU 동기화,
  중앙값과 IQR). 페이지별 한국어 요약을 출력하고 `test-output/results/<장치>.json`에 씁니다.
- `--publish`: 전체 벤치마크가 실패 없이 끝났을 때만 `results/<장치>.json`에 씁니다. 그러지 못하면
  (실패, 일부만 실행, 쓸 수 없는 폴더) 측정을 버리지 않고 test-output에 쓰고 이유를 알립니다.
- `--gpu`: CUDA GPU에서 재야 하는 실행입니다. GPU가 없거나 /dev/shm이 작으면 바로 멈추고,
  `--max-minutes`(기본 10분)가 지나면 남은 측정을 건너뜁니다.
- `--dry-run`: 같은 명령을 아주 작은 입력과 한 라운드로 끝까지 흘려 봅니다(GPU가 없어도 됨).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch

from benchmarks import analysis, environment, results_file
from benchmarks.timing import synchronized_perf_counter
from guide import registry

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = ROOT / "benchmarks"
LOCAL_RESULTS = ROOT / "test-output" / "results"
PUBLISHED_RESULTS = ROOT / "results"
# 팁 1은 GPU 컴퓨터에서 워커를 32개까지 띄웁니다. 워커가 배치를 넘기는 공유 메모리가 모자라면
# 측정 도중 "Bus error"로 죽습니다(Docker의 기본값은 64 MB).
MIN_SHM_BYTES = 1 << 30


@dataclass
class MeasurementRun:
    """한 번의 pytest 실행에서 모은 측정과, 어떻게 재는지에 대한 설정입니다."""

    timing: bool
    gpu: bool
    dry_run: bool
    publish: bool
    results_dir: Path | None
    device: torch.device
    max_seconds: float | None = None
    started: float = field(default_factory=time.monotonic)
    entries: list[dict] = field(default_factory=list)
    not_measured: list[dict] = field(default_factory=list)
    modules_run: set[str] = field(default_factory=set)
    deselected: int = 0
    out_of_time: int = 0
    messages: list[str] = field(default_factory=list)
    document: dict | None = None

    @property
    def size_key(self) -> str:
        """크기 표의 열쇠: 작은 입력이면 "quick", 아니면 장치 종류("cuda" 또는 "cpu")."""
        return "quick" if self.dry_run or not self.timing else self.device.type


RUN = pytest.StashKey[MeasurementRun]()


def pytest_addoption(parser):
    group = parser.getgroup("seven-tips", "이 프로젝트의 측정 옵션")
    group.addoption(
        "--benchmark",
        action="store_true",
        help="benchmarks/만 시간을 재서 실행하고, 페이지별 한국어 요약과 결과 파일을 씁니다.",
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
    group.addoption(
        "--max-minutes",
        type=float,
        default=None,
        help="측정 전체의 시간 한도(분). 넘으면 남은 측정을 건너뜁니다(--gpu의 기본값 10).",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    # pytest-benchmark가 자기 설정을 읽기 전에 옵션 값을 정해야 하므로 먼저 실행합니다.
    config.addinivalue_line(
        "markers", "measures(group): 이 벤치마크가 채우는 비교 묶음(guide/pages.toml의 groups 열쇠)"
    )
    _start_run(config)


def _gpu_missing_message() -> str:
    return (
        "--gpu: CUDA GPU를 찾지 못했습니다(torch.cuda.is_available()가 False, "
        f"torch {torch.__version__}, CUDA 빌드 {torch.version.cuda}). "
        "GPU 측정은 GPU가 있는 컴퓨터에서 실행하세요. 흐름만 확인하려면 --dry-run을 더하세요."
    )


def _shm_problem() -> str | None:
    try:
        free = shutil.disk_usage("/dev/shm").free
    except OSError:
        return None  # /dev/shm이 없는 운영체제(macOS, Windows)는 다른 방식으로 넘깁니다.
    if free >= MIN_SHM_BYTES:
        return None
    return (
        f"--gpu: /dev/shm의 여유 공간이 {free / 2**20:.0f} MiB뿐입니다. DataLoader 워커가 배치를 "
        "넘기는 공유 메모리라서, 팁 1의 많은 워커가 측정 도중 죽습니다. 1 GiB 이상으로 늘리세요"
        "(Docker라면 `--shm-size=2g`)."
    )


def _writable_problem(folder: Path) -> str | None:
    """측정하기 전에 결과 폴더에 정말 쓸 수 있는지 파일을 하나 만들어 봅니다(root는 권한 비트를
    무시하므로 os.access로는 알 수 없습니다)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-", suffix=".tmp"):
            pass
    except OSError as error:
        return (
            f"{folder}에 쓸 수 없습니다({error.strerror or error}). 측정은 그대로 하고, 결과는 "
            f"{LOCAL_RESULTS}에 씁니다."
        )
    return None


def _start_run(config):
    option = config.option
    cuda = torch.cuda.is_available()
    if option.gpu and not option.dry_run:
        if not cuda:
            raise pytest.UsageError(_gpu_missing_message())
        problem = _shm_problem()
        if problem:
            raise pytest.UsageError(problem)
    minutes = option.max_minutes if option.max_minutes is not None else (10 if option.gpu else None)
    run = MeasurementRun(
        timing=option.benchmark,
        gpu=option.gpu,
        dry_run=option.dry_run,
        publish=option.publish,
        results_dir=option.results_dir,
        device=torch.device("cuda" if cuda else "cpu"),
        max_seconds=minutes * 60 if minutes else None,
    )
    if run.timing and run.publish and not run.dry_run:
        problem = _writable_problem(run.results_dir or PUBLISHED_RESULTS)
        if problem:
            run.messages.append(problem)
    config.stash[RUN] = run
    _configure_pytest_benchmark(option, run)


def _configure_pytest_benchmark(option, run: MeasurementRun) -> None:
    """pytest-benchmark를 켜거나 끕니다. 켜고 끄는 것만은 표시(marker)로 정할 수 없어 옵션 값을
    정합니다. 어떻게 재는지는 pytest_collection_modifyitems가 benchmark 표시로 넘깁니다."""
    if run.timing:
        option.benchmark_enable, option.benchmark_disable = True, False
    else:
        # 평소 pytest: 벤치마크 함수를 한 번만 실행합니다(pytest-benchmark의 disable 모드).
        option.benchmark_disable = not getattr(option, "benchmark_enable", False)


def timing_settings(run: MeasurementRun) -> dict:
    """`pytest --benchmark`의 측정 방법: pytest-benchmark의 benchmark 표시에 넘길 값입니다."""
    settings = {
        "warmup": not run.dry_run,
        # 워밍업은 호출 2번이면 충분합니다. 반복 횟수를 정하는 보정 단계에서 이미 여러 번
        # 실행했습니다.
        "warmup_iterations": 2,
        # 한 라운드가 1 ms 이상이 되도록 반복 횟수를 고릅니다: 동기화와 타이머 비용이 묻힙니다.
        "min_time": 0.001,
        "min_rounds": 1 if run.dry_run else 7,
        "max_time": 1e-6 if run.dry_run else 1.0,
    }
    if run.device.type == "cuda":
        settings["timer"] = synchronized_perf_counter
    return settings


def pytest_collection_modifyitems(config, items):
    """측정하는 테스트마다 이 프로젝트의 측정 방법을 benchmark 표시로 붙입니다(pytest-benchmark가
    읽는 방법). 테스트가 직접 붙인 benchmark 표시의 값이 이깁니다."""
    run = config.stash.get(RUN, None)
    if not (run and run.timing):
        return
    settings = timing_settings(run)
    for item in items:
        if "benchmark" in getattr(item, "fixturenames", ()):
            own = item.get_closest_marker("benchmark")
            marker = pytest.mark.benchmark(**(settings | (own.kwargs if own else {})))
            item.add_marker(marker, append=False)


def pytest_ignore_collect(collection_path, config):
    # --benchmark는 측정만 합니다. 정확성 테스트(tests/)는 평소 pytest가 실행합니다.
    run = config.stash.get(RUN, None)
    if run and run.timing and Path(collection_path).is_relative_to(ROOT / "tests"):
        return True
    return None


def pytest_deselected(items):
    if items:
        items[0].config.stash[RUN].deselected += len(items)


def pytest_runtest_setup(item):
    run = item.config.stash.get(RUN, None)
    if not (run and run.timing and run.max_seconds and _is_benchmark(item)):
        return
    if time.monotonic() - run.started > run.max_seconds:
        run.out_of_time += 1
        pytest.skip(f"측정 전체의 시간 한도({run.max_seconds / 60:.0f}분)를 넘어 재지 않았습니다.")


# --- 벤치마크가 쓰는 준비물 ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def measurement_run(request) -> MeasurementRun:
    return request.config.stash[RUN]


@pytest.fixture(scope="session")
def bench_device(measurement_run) -> torch.device:
    return measurement_run.device


@pytest.fixture(scope="session")
def size_key(measurement_run) -> str:
    """크기 표(`SIZES[size_key]`)를 고르는 열쇠: "quick", "cpu" 또는 "cuda"."""
    return measurement_run.size_key


def _page_of(module) -> registry.Page:
    page = registry.by_id(module.PAGE)
    if page.benchmark != Path(module.__file__).stem:
        raise registry.RegistryError(
            f"{module.__name__}: pages.toml의 {page.id} 벤치마크가 아닙니다"
        )
    return page


class Measure:
    """`measure(fn, *args, key=…, group=…, variant=…, role=…)`: 재고 기록합니다.

    - key: 페이지 안에서 고유한 영어 이름(결과 파일의 id는 "<page>.<key>").
    - group, variant: guide/pages.toml의 묶음과 변형 열쇠. 한국어 이름은 레지스트리에 있습니다.
    - role: "baseline"(기준), "recommended"(권장 방식), "other", "ceiling"(같은 실행의 천장).
    - params: 이름의 `{자리}`를 채우는 숫자(배치 크기, 워커 수 등).
    - per_call: 호출 한 번의 일(bytes, flops, samples, steps, tokens). 중앙값으로 나눠 속도를 냄.
    - metrics: 시간 밖에서 잰 값(예: peak_memory_mib). ceiling: 비교할 천장 측정의 key.
    - rounds: 주면 호출 한 번이 곧 한 라운드입니다(몇 초씩 걸리는 학습 같은 것).
    """

    def __init__(self, benchmark, request, run: MeasurementRun):
        self.benchmark, self.request, self.run = benchmark, request, run
        self.last: dict | None = None  # 방금 기록한 항목(시간을 재지 않는 평소 pytest에서는 None)

    def __call__(self, fn, *args, key, group, variant, role="other", params=None,
                 per_call=None, metrics=None, ceiling=None, rounds=None, extra=None):  # fmt: skip
        if rounds is None:
            result = self.benchmark(fn, *args)
        else:
            warmup = 0 if self.run.dry_run else 1
            rounds = 1 if self.run.dry_run else rounds
            result = self.benchmark.pedantic(fn, args=args, rounds=rounds, warmup_rounds=warmup)
        if self.benchmark.stats is None:  # 시간을 재지 않는 평소 pytest
            return result
        stats = self.benchmark.stats.stats
        rates = {
            results_file.RATES[name][0]: amount / stats.median / results_file.RATES[name][1]
            for name, amount in (per_call or {}).items()
            if amount
        }
        timing = {
            "computed": False,
            "median_s": _rounded(stats.median),
            "iqr_s": _rounded(stats.iqr),
            "rounds": stats.rounds,
            "iterations": self.benchmark.stats.iterations,
        }
        self._record(key, group, variant, role, params, rates | (metrics or {}), ceiling, extra,
                     timing)  # fmt: skip
        return result

    def computed(self, *, key, group, variant, role="ceiling", params=None, metrics):
        """시간을 재지 않고 계산한 값(예: 데이터시트의 최고 성능, 워커 하나 × 코어 수)을 씁니다."""
        if not self.run.timing:
            return
        timing = {"computed": True, "median_s": None, "iqr_s": None, "rounds": 0, "iterations": 0}
        self._record(key, group, variant, role, params, metrics, None, None, timing)

    def _record(self, key, group, variant, role, params, metrics, ceiling, extra, timing):
        module = self.request.module
        page = _page_of(module)
        page.group(group)
        page.variant_label(variant, params or {})  # 레지스트리에 없는 이름이면 여기서 멈춥니다.
        snippet, bench = page.snippet_path, page.benchmark_path
        self.last = {
            "id": f"{page.id}.{key}",
            "page": page.id,
            "key": key,
            "group": group,
            "variant": variant,
            "role": role,
            **timing,
            "params": params or {},
            "metrics": {name: _rounded(value) for name, value in (metrics or {}).items()},
            "ceiling": f"{page.id}.{ceiling}" if ceiling else None,
            "snippet": snippet.relative_to(ROOT).as_posix(),
            "benchmark": bench.relative_to(ROOT).as_posix(),
            "fingerprint": results_file.fingerprint(snippet, bench),
            **({"extra": extra} if extra else {}),
        }
        self.run.entries.append(self.last)


def _rounded(value: float) -> float:
    return float(f"{value:.4g}")


@pytest.fixture
def measure(benchmark, request, measurement_run) -> Measure:
    return Measure(benchmark, request, measurement_run)


# --- 실행 결과 모으기와 쓰기 ---------------------------------------------------------------------


def _is_benchmark(item) -> bool:
    return item.path.parent == BENCH_DIR and hasattr(item.module, "PAGE")


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
        marker = item.get_closest_marker("measures")
        group = marker.args[0] if marker else "unknown"
        run.not_measured.append(
            {"page": item.module.PAGE, "group": group, "reason": reason.removeprefix("Skipped: ")}
        )


def _expected_modules() -> set[str]:
    return {f"benchmarks.{page.benchmark}" for page in registry.load()}


def _publish_problem(session, run: MeasurementRun) -> str | None:
    if run.dry_run:
        return "드라이 런이라서 results/에는 쓰지 않았습니다."
    if session.testsfailed:
        return f"실패한 벤치마크가 {session.testsfailed}개 있어 results/를 그대로 두었습니다."
    if run.out_of_time:
        return f"시간 한도를 넘어 {run.out_of_time}개 측정을 건너뛰어 results/를 그대로 두었습니다."
    missing = sorted(_expected_modules() - run.modules_run)
    if missing or run.deselected:
        left_out = ", ".join(missing) or f"{run.deselected}개 항목"
        return f"전체 벤치마크를 실행했을 때만 results/에 씁니다(빠진 것: {left_out})."
    return None


def _without_dangling_ceilings(entries: list[dict]) -> list[dict]:
    """일부만 실행했거나 천장 측정이 실패했으면, 없는 천장을 가리키는 참조를 지웁니다."""
    ceilings = {entry["id"] for entry in entries if entry["role"] == "ceiling"}
    return [e | {"ceiling": e["ceiling"] if e["ceiling"] in ceilings else None} for e in entries]


def _build_document(run: MeasurementRun) -> dict:
    return {
        "schema_version": results_file.SCHEMA_VERSION,
        "dry_run": run.dry_run,
        "environment": environment.describe(run.device, ROOT),
        "benchmarks": _without_dangling_ceilings(run.entries),
        "not_measured": run.not_measured,
    }


def _try_write(path: Path, doc: dict, run: MeasurementRun) -> bool:
    try:
        results_file.write_atomically(path, doc)
    except (OSError, results_file.ResultsError) as error:
        run.messages.append(f"{path}에 쓰지 못했습니다: {error}")
        return False
    run.messages.append(f"결과 파일을 썼습니다: {path}")
    return True


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
    run.document = _build_document(run)
    name = ("dry-run-" if run.dry_run else "") + environment.results_name(
        run.document["environment"]
    )
    name += ".json"
    problem = _publish_problem(session, run) if run.publish else None
    if run.publish and problem is None:
        if _try_write((run.results_dir or PUBLISHED_RESULTS) / name, run.document, run):
            return
        problem = "발행하지 못해 측정을 로컬 결과 폴더에 남깁니다."
    # 드라이 런은 발행하지 않으므로 --results-dir가 있으면 늘 그곳에 씁니다.
    keep_dir = run.results_dir and (run.dry_run or not run.publish)
    local = run.results_dir if keep_dir else LOCAL_RESULTS
    written = _try_write(local / name, run.document, run)
    if problem:
        run.messages.append(problem)
    if (problem and not run.dry_run) or not written:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def stale_lines(root: Path) -> list[str]:
    """`results/`에서 측정한 뒤 코드가 바뀐 결과(와 읽을 수 없는 결과 파일)를 알리는 줄들입니다."""
    lines = []
    for path in results_file.published_files(root):
        try:
            stale = results_file.stale_pages(results_file.load(path), root)
        except results_file.ResultsError as error:
            lines.append(str(error))
            continue
        for page, changes in stale.items():
            described = ", ".join(f"{source}({state})" for source, state in changes.items())
            lines.append(
                f"{path.relative_to(root)} · {page}: 측정한 뒤 코드가 바뀌었습니다: {described}"
            )
    return lines


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    run = config.stash.get(RUN, None)
    if run is None:
        return
    write = terminalreporter.write_line
    if run.document:
        terminalreporter.section("측정 요약")
        try:
            for line in analysis.summary_lines(run.document):
                write(line)
        except registry.RegistryError as error:
            write(f"요약을 만들지 못했습니다: {error}")
    for line in run.messages:
        write(line)
    stale = stale_lines(ROOT)
    if stale:
        terminalreporter.section("다시 재야 하는 결과(실패는 아닙니다)")
        for line in stale:
            write(line)
