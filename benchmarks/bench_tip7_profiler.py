"""팁 7 벤치마크: 프로파일러가 찾은 병목을 고치면 얼마나 빨라지는지, 프로파일러는 얼마나 드는지.

두 묶음을 잽니다. 둘 다 스니펫의 fit_with_profiler로 같은 Lightning 학습(fit)을 통째로 돌립니다.

1. 심어 둔 병목(샘플을 꺼낼 때마다 특징 계산) vs 고친 것(미리 한 번 계산), 프로파일러 없이.
   이 팁의 대표 숫자입니다. 미리 계산하는 데 든 시간은 시간 밖에서 한 번 재어 따로 남깁니다.
2. 느린 데이터셋으로 profiler=None(기준) vs "simple", "advanced", "pytorch"의 비용.
   SimpleProfiler가 실제로 낸 보고서의 일부를 결과에 남기고, 데이터 가져오기가 가장 큰 비용으로
   나오는지 확인합니다.

fit 한 번이 곧 한 라운드입니다. Trainer를 만들고 준비하는 시간도 들어 있습니다.
보고서와 추적 파일은 pytest의 임시 폴더(tmp_path)에 쓰므로 저장소에는 아무것도 남지 않습니다.
"""

import time

import pytest

from snippets import tip7_profiler as tip7

PAGE = "tip7"

# 샘플 수와 학습 스텝 수(fit 한 번이 한 라운드). 배치는 16이라 한 에폭이 8스텝이고
# 16스텝이면 두 에폭입니다. 한 에폭이 5스텝 이상이어야 PyTorchProfiler가 기본 일정(wait=1,
# warmup=1, active=3)을 씁니다.
SIZES = {
    "cuda": {"n": 128, "max_steps": 16},
    # CPU도 40스텝(에폭 다섯)이라 PyTorchProfiler의 일정(대기 1, 워밍업 1, 기록 3)이 여러 번 돕니다.
    # 16스텝이면 준비와 추적 파일 쓰기가 비용의 대부분이 되어 프로파일러의 평소 비용을 부풀립니다.
    "cpu": {"n": 128, "max_steps": 40},
    "quick": {"n": 32, "max_steps": 2},
}
BATCH_SIZE = 16

# SimpleProfiler 보고서에서 에폭 전체를 감싸는 동작입니다. 데이터 가져오기를 포함하므로
# "가장 큰 비용"을 따질 때는 빼고 봅니다.
EPOCH_ACTION = "run_training_epoch"
EXCERPT_ROWS = 6


def report_excerpt(report, top=EXCERPT_ROWS):
    """보고서의 제목, 머리줄, Total, 비율이 큰 동작 몇 줄과 training_step 줄을 그대로 뽑습니다."""
    wanted = {name for name, _, _ in tip7.parse_simple_report(report)[:top]}
    wanted.add(tip7.TRAINING_STEP_ACTION)
    lines = []
    for line in report.splitlines():
        row = tip7.parse_simple_report(line)  # 표의 한 줄이면 [(동작, 총 시간, 비율)]입니다.
        keep = (row and row[0][0] in wanted) or line.startswith(("|  Action", "|  Total"))
        if keep or "Profiler Report" in line:
            lines.append(line.rstrip())
    return "\n".join(lines)


def top_action(report):
    """에폭 전체를 뺀 동작 가운데 비율이 가장 큰 것의 이름입니다."""
    rows = tip7.parse_simple_report(report)
    return next(name for name, _, _ in rows if name != EPOCH_ACTION)


@pytest.mark.measures("bottleneck")
def test_data_bottleneck(compare, bench_device, size_key, tmp_path):
    size = SIZES[size_key]
    steps = size["max_steps"]
    group = compare("bottleneck", params={"steps": steps},
                    per_call={"samples": steps * BATCH_SIZE})  # fmt: skip
    for kind, variant, role in (("slow", "on-the-fly", "baseline"),
                                ("fast", "precomputed", "recommended")):  # fmt: skip
        started = time.perf_counter()
        dataset = tip7.make_dataset(kind, n=size["n"])
        # 미리 계산하는 방식은 데이터셋을 만들 때 특징을 한 번 계산합니다. 그 시간을 남겨 둡니다.
        metrics = {"precompute_s": time.perf_counter() - started} if kind == "fast" else {}
        group.add(variant, tip7.fit_with_profiler, None, dataset, steps, tmp_path / kind,
                  bench_device, BATCH_SIZE, role=role, metrics=metrics, memory=False)  # fmt: skip
    assert set(group.run().values()) == {""}


# 작은 입력(quick)은 한 에폭이 5스텝보다 짧아 PyTorchProfiler가 일정을 바꾼다고 알립니다.
@pytest.mark.measures("overhead")
@pytest.mark.filterwarnings("ignore:The PyTorch Profiler default schedule will be overridden")
def test_profiler_overhead(compare, bench_device, size_key, tmp_path):
    size = SIZES[size_key]
    steps = size["max_steps"]
    dataset = tip7.make_dataset("slow", n=size["n"])
    group = compare("overhead", params={"steps": steps}, per_call={"samples": steps * BATCH_SIZE})
    for profiler in (None, "simple", "advanced", "pytorch"):
        variant = f"profiler-{profiler or 'none'}"
        group.add(variant, tip7.fit_with_profiler, profiler, dataset, steps, tmp_path / variant,
                  bench_device, BATCH_SIZE, role="baseline" if profiler is None else "other",
                  memory=False)  # fmt: skip
    reports = group.run()
    assert reports["profiler-none"] == ""
    assert all(report.strip() for key, report in reports.items() if key != "profiler-none")
    # 같은 실행, 같은 설정에서 SimpleProfiler가 실제로 쓴 보고서의 일부를 결과에 남깁니다.
    report = reports["profiler-simple"]
    assert top_action(report) == tip7.FETCH_ACTION
    excerpt = report_excerpt(report)
    assert tip7.FETCH_ACTION in excerpt and len(excerpt.splitlines()) <= 15
    group.attach("profiler-simple", report_excerpt=excerpt)
