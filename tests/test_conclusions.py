"""benchmarks/conclusions.py의 테스트: 표 아래 결론 문장(이슈 17, 21, 22).

- 판정은 구간으로만: 구간이 1.05 위면 빨라짐, 0.95 아래면 느려짐, 아니면 "차이 없음 (±x%)".
- 메커니즘이 없는 장치의 단계(전부 합치면의 TF32 등)는 "이 장치에서는 바뀌는 것 없음"이고 느려진
  단계로 적지 않습니다.
- 조사는 받침에 맞게 고르고 "이(가)" 같은 표기는 쓰지 않습니다. 레지스트리의 모든 페이지와 결론
  종류를 채운 합성 문서(현실적인 값과 경계 근처의 값)에서 나온 모든 문장을 훑습니다.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from guide import registry
from report import analysis, conclusions, curve_sentences, curves, formatting, summary
from report.conclusions import NO_MECHANISM
from tests.results_sample import (
    CONTRADICTIONS,
    CPU_DEVICE,
    GPU_DEVICE,
    cpu_document,
    entry,
    full_document,
    ratio,
)
from tests.site_build import ROOT
from torchdoctor.stats import Interval


@pytest.mark.parametrize(
    ("word", "pair", "expected"),
    [
        ("메모리", "은/는", "메모리는"),
        ("시간", "은/는", "시간은"),
        ("값", "이/가", "값이"),
        ("모드", "이/가", "모드가"),
        ("처리량", "을/를", "처리량을"),
        ("속도", "을/를", "속도를"),
        ("시간", "과/와", "시간과"),
        ("메모리", "과/와", "메모리와"),
        ("방법", "으로/로", "방법으로"),
        ("코드", "으로/로", "코드로"),
        ("서울", "으로/로", "서울로"),  # ㄹ 받침 뒤에는 "로"
        ("활성값", "은/는", "활성값은"),
        ("메모리 증가", "은/는", "메모리 증가는"),
    ],
)
def test_josa_follows_the_final_syllable(word, pair, expected):
    assert formatting.josa(word, pair) == expected


@pytest.mark.parametrize("word", ["bf16", "GPU", "‘fp32’", "(1.5배)"])
def test_josa_refuses_words_that_do_not_end_in_hangul(word):
    with pytest.raises(ValueError, match="조사"):
        formatting.josa(word, "이/가")


def test_every_memory_label_takes_a_particle():
    # tradeoff가 조사를 붙이는 이름들: 한글로 끝나지 않으면 결론을 쓰다 멈춥니다.
    for label, _, rate in analysis.METRIC_DISPLAY.values():
        if not rate and re.search(r"[가-힣]$", label):
            formatting.josa(label, "은/는")


def test_there_is_one_writer_per_registry_conclusion_kind():
    assert tuple(conclusions.WRITERS) == registry.CONCLUSIONS


def group_of(page_id, key, *rows):
    page = registry.by_id(page_id)
    made = []
    for row in rows:
        label = page.variant_label(row["variant"], row["params"])
        made.append(analysis.Row(row, label, Interval.of(row["ratio"]),
                                 Interval.of(row.get("versus_previous"))))  # fmt: skip
    return analysis.Group(page, key, rows=made)


def sdpa_group(raw):
    return group_of(
        "sdpa", "fwd-bwd",
        entry("by-hand", "fwd-bwd", "by-hand", "baseline", 0.02, params={"kernel": "flash"}),
        entry("sdpa", "fwd-bwd", "sdpa-causal", "recommended", 0.01, params={"kernel": "flash"},
              ratio=ratio(*raw)),
    )  # fmt: skip


def test_an_interval_wholly_above_1_05_reads_faster():
    text = conclusions.conclusion(sdpa_group((1.43, 1.38, 1.49)), GPU_DEVICE)
    assert "1.43배입니다(95% 구간 1.38–1.49배, 빨라짐)" in text and "느려짐" not in text


def test_an_interval_wholly_below_0_95_reads_slower_never_faster():
    # 이슈 21: "0.83배(느려짐) 빠릅니다"
    text = conclusions.conclusion(sdpa_group((0.83, 0.80, 0.86)), GPU_DEVICE)
    assert "0.83배입니다(95% 구간 0.80–0.86배, 느려짐)" in text and "빨라짐" not in text


def test_an_interval_inside_the_band_reads_no_difference_with_its_bounds():
    text = conclusions.conclusion(sdpa_group((1.01, 0.97, 1.03)), GPU_DEVICE)
    assert "속도 차이가 5%보다 작습니다(95% 구간 0.97–1.03배, 차이 없음)" in text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # 이슈 40: 한쪽에 있지만 띠에 걸친 구간은 "차이 없음"이 아니라 판정 보류와 그 쪽입니다.
        ((0.88, 0.81, 0.96), "느린 쪽이지만 구간이 ±5% 띠의 경계에 걸쳐"),
        ((1.05, 1.03, 1.08), "빠른 쪽이지만 구간이 ±5% 띠의 경계에 걸쳐"),
        ((1.2, 0.9, 1.5), "구간이 넓어 어느 쪽이 빠른지 말할 수 없습니다"),
    ],
)
def test_an_interval_across_a_band_edge_is_held_with_its_side(raw, expected):
    text = conclusions.conclusion(sdpa_group(raw), GPU_DEVICE)
    assert expected in text and "판정 보류)" in text
    assert "차이 없음" not in text and "빨라짐" not in text and "느려짐" not in text


def test_a_low_confidence_interval_says_its_level():
    text = conclusions.conclusion(sdpa_group((1.5, 1.3, 1.7, 0.9375)), GPU_DEVICE)
    assert "94% 구간 1.30–1.70" in text


def capstone_group(device):
    doc = cpu_document(ROOT)
    [waterfall] = analysis.groups_for(doc["pages"]["capstone"], registry.by_id("capstone"))
    return waterfall, device


def test_a_waterfall_without_cuda_only_stages_names_none_on_a_cpu():
    # 페이지에는 CUDA 전용 변형이 있지만 이 폭포의 단계에는 없으면, 빈 이름 목록을 쓰지 않습니다.
    group, device = capstone_group(CPU_DEVICE)
    cuda_only = set(registry.by_id("capstone").cuda_only)
    rows = [row for row in group.rows if row.entry["variant"] not in cuda_only]
    text = conclusions.conclusion(dataclasses.replace(group, rows=rows), device)
    assert "CUDA에만" not in text and " : " not in text
    assert text.startswith("마지막 단계의 속도는 기준의 ")


def test_a_cuda_only_stage_on_a_cpu_reads_no_mechanism_and_is_never_slower():
    group, device = capstone_group(CPU_DEVICE)
    text = conclusions.conclusion(group, device)
    slower = re.search(r"앞 단계보다 느려진 단계: (.*?’)\.", text)[1]
    assert "TF32" not in slower and "scaled_dot_product_attention" in slower
    assert f"‘4. + TF32 행렬 곱’: {conclusions.CUDA_ONLY}" in text
    tf32 = group.row("tf32")
    assert tf32.previous.verdict == "slower"  # 데이터는 느려 보이지만(0.80–0.86)
    page = registry.by_id("capstone")
    assert conclusions.ratio_cell(tf32, device, page) == NO_MECHANISM
    assert conclusions.previous_cell(tf32, device, page) == NO_MECHANISM


def test_on_a_gpu_the_same_stage_is_judged_by_its_interval():
    # 위 테스트가 장치를 보고 가린다는 것을 보입니다: CUDA에서는 같은 숫자가 느려짐입니다.
    group, device = capstone_group(GPU_DEVICE)
    text = conclusions.conclusion(group, device)
    slower = re.search(r"앞 단계보다 느려진 단계: (.*?’)\.", text)[1]
    assert "TF32" in slower and NO_MECHANISM not in text
    tf32 = group.row("tf32")
    page = registry.by_id("capstone")
    assert conclusions.previous_cell(tf32, device, page) == "0.83배 (0.80–0.86, 느려짐)"


def test_the_previous_stage_column_shows_each_stages_own_step():
    group, device = capstone_group(CPU_DEVICE)
    page = registry.by_id("capstone")
    cells = {row.key: conclusions.previous_cell(row, device, page) for row in group.rows}
    assert cells["baseline"] == "—"
    assert cells["bf16"] == "1.55배 (1.50–1.61, 빨라짐)"
    assert cells["sdpa"] == "0.84배 (0.82–0.87, 느려짐)"  # 누적(기준 대비 1.10배)이 아니라 이 단계
    # 누적 칸은 판정하지 않습니다(이슈 40): 한 단계의 흔들림이 뒤의 모든 누적 판정을 옮깁니다.
    assert conclusions.ratio_cell(group.row("sdpa"), device, page) == "1.10배 (1.07–1.14)"


def checkpoint_group(before, after, speed):
    return group_of(
        "checkpointing", "step",
        entry("none", "step", "no-checkpoint", "baseline", 0.10,
              metrics={"saved_activation_mib": before}),
        entry("every", "step", "every-block", "other", 0.125,
              metrics={"saved_activation_mib": after}, ratio=ratio(*speed)),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("before", "after", "memory"),
    [(400.0, 100.0, "저장한 활성값은 400 → 100 MiB로 75% 줄었습니다"),
     (100.0, 139.0, "저장한 활성값은 100 → 139 MiB로 39% 늘었습니다"),
     (100.0, 100.0, "저장한 활성값은 100 → 100 MiB로 같습니다"),
     (0.0, 12.0, "저장한 활성값은 0 → 12 MiB로 같습니다")],
)  # fmt: skip
def test_a_memory_for_time_tradeoff_names_both_sides_with_the_right_sign(before, after, memory):
    text = conclusions.conclusion(checkpoint_group(before, after, (0.8, 0.78, 0.82)), CPU_DEVICE)
    assert memory in text and "0.80배 (0.78–0.82, 느려짐)" in text
    assert not re.search(r"-\d+% ", text)


def worker_group(rates, cores=2):
    rows = []
    for workers, (rate, raw) in enumerate(rates):
        role = "baseline" if workers == 0 else "other"
        rows.append(entry(f"workers-{workers}", "throughput", "workers", role, 1.0,
                          params={"num_workers": workers, "batch_size": 8, "cores": cores},
                          metrics={"samples_per_s": rate},
                          ratio=ratio(*raw) if raw else None))  # fmt: skip
    return group_of("tip1", "throughput", *rows)


def test_saturation_names_the_fewest_workers_that_reach_the_best_interval():
    group = worker_group([(100.0, None), (180.0, (1.8, 1.7, 1.85)), (200.0, (2.0, 1.86, 2.1)),
                          (201.0, (2.01, 1.9, 2.1))])  # fmt: skip
    text = conclusions.conclusion(group, CPU_DEVICE | {"usable_cores": 2})
    assert "처리량은 워커 2개에서 더 오르지 않습니다" in text
    assert "쓸 수 있는 코어가 2개" in text and "GPU가 없으니 규칙이 답을 주지 못합니다" in text
    on_gpus = conclusions.conclusion(group, GPU_DEVICE | {"count": 2})
    assert "워커 8개를 제안합니다." in on_gpus


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["avx512_bf16"], "이 CPU에는 AVX-512 BF16 명령이 있어"),
        (["amx_bf16", "avx512_bf16"], "이 CPU에는 AVX-512 BF16, AMX 명령이 있어"),
        ([], "이 CPU에는 AVX-512 BF16도 AMX도 없어 bf16을 fp32로 바꿔 계산합니다"),
    ],
)
def test_bf16_on_a_cpu_names_its_instructions(flags, expected):
    group = group_of(
        "tip6", "step",
        entry("step-fp32", "step", "fp32", "baseline", 0.2),
        entry("step-bf16", "step", "bf16", "recommended", 0.1, ratio=ratio(2.0, 1.9, 2.1)),
        entry("step-fp16", "step", "fp16", "other", 0.4, ratio=ratio(0.5, 0.45, 0.55)),
    )  # fmt: skip
    text = conclusions.conclusion(group, CPU_DEVICE | {"cpu_flags": flags})
    assert expected in text and "2.00배입니다(95% 구간 1.90–2.10배, 빨라짐)" in text
    assert "fp16 autocast는 이 CPU에 fp16 행렬 곱 하드웨어" in text


def profiler_group(*raws):
    variants = ["profiler-simple", "profiler-advanced", "profiler-pytorch"]
    rows = [entry("none", "overhead", "profiler-none", "baseline", 1.0)]
    rows += [
        entry(v, "overhead", v, "other", 1.0, ratio=ratio(*raw))
        for v, raw in zip(variants, raws, strict=False)
    ]
    return group_of("tip7", "overhead", *rows)


def test_profiler_cost_names_the_most_expensive_and_calls_faster_noise():
    text = conclusions.conclusion(
        profiler_group((1.0, 0.97, 1.03), (0.5, 0.45, 0.55), (0.13, 0.12, 0.14)), CPU_DEVICE
    )
    assert (
        'profiler="pytorch"’입니다' in text
        and '기준과의 차이가 5%보다 작은 것: ‘profiler="simple"’' in text
    )
    faster = conclusions.conclusion(
        profiler_group((1.36, 1.3, 1.4), (1.0, 0.97, 1.03), (1.0, 0.97, 1.03)), CPU_DEVICE
    )
    assert "흔들림" in faster and "느려진 것" not in faster


def test_a_sweep_sentence_says_where_the_interval_crosses_one():
    spec = registry.Sweep("width", "폭", "d_model", "폭(d_model)", "fp32", "bf16")
    points = [curves.Point(x, Interval(m, lo, hi, 0.961), 1.0, 1.0, {})
              for x, m, lo, hi in [(32, 0.5, 0.45, 0.55), (128, 0.99, 0.96, 1.02),
                                   (512, 1.4, 1.3, 1.5)]]  # fmt: skip
    text = curve_sentences.sweep_sentence(spec, points)
    # 교차점은 잰 두 점으로만 말합니다: 보간한 "≈ 82.5"는 잰 값이 아닙니다(이슈 41).
    assert text.startswith(
        "이 장치에서는 폭(d_model) 128–512 사이에서 판정이 바뀌어 512부터 빨라집니다"
    )
    assert "≈" not in text
    assert text.endswith("재 본 범위 32–512).")  # 바뀌는 두 점이 아니라 잰 범위 전체
    flat = [curves.Point(p.x, Interval(1.0, 0.97, 1.03, 0.961), 1.0, 1.0, {}) for p in points]
    assert "교차점이 없습니다" in curve_sentences.sweep_sentence(spec, flat)


def test_a_sweep_that_goes_up_and_down_names_each_stretch_instead_of_one_crossover():
    spec = registry.Sweep("channels", "채널", "channels", "채널 수", "nchw", "nhwc")
    points = [curves.Point(x, Interval(m, lo, hi, 0.961), 1.0, 1.0, {})
              for x, m, lo, hi in [(8, 0.7, 0.68, 0.72), (16, 1.1, 1.08, 1.12),
                                   (32, 1.1, 1.07, 1.12), (64, 1.0, 0.98, 1.02),
                                   (256, 0.96, 0.955, 0.97)]]  # fmt: skip
    text = curve_sentences.sweep_sentence(spec, points)
    assert text == (
        "이 장치에서는 판정이 크기를 따라 오르내립니다: 채널 수 8에서는 느려지고, 16–32에서는 "
        "빨라지고, 64–256에서는 차이가 없습니다(재 본 범위 8–256)."
    )
    assert "≈" not in text and "부터" not in text


def capstone_groups(workers_added, workers_removed, sdpa_added, sdpa_removed):
    """전부 합치면의 폭포(앞 단계 대비)와 빼 보기(마지막 단계 대비)를 같은 페이지의 묶음으로."""
    params = {"num_workers": 1, "batch_size": 8}
    waterfall = group_of(
        "capstone", "waterfall",
        entry("s0", "waterfall", "baseline", "baseline", 1.0, params=params),
        entry("s1", "waterfall", "workers", "other", 1.1, params=params,
              ratio=ratio(*workers_added), versus_previous=ratio(*workers_added)),
        entry("s6", "waterfall", "sdpa", "other", 0.9, params=params,
              ratio=ratio(*sdpa_added), versus_previous=ratio(*sdpa_added)),
    )  # fmt: skip
    removed = group_of(
        "capstone", "leave-one-out",
        entry("all", "leave-one-out", "all-tips", "baseline", 1.0, params=params),
        entry("w", "leave-one-out", "without-workers", "other", 1.0, params=params,
              ratio=ratio(*workers_removed)),
        entry("s", "leave-one-out", "without-sdpa", "other", 1.2, params=params,
              ratio=ratio(*sdpa_removed)),
    )  # fmt: skip
    siblings = {"waterfall": waterfall, "leave-one-out": removed}
    waterfall.siblings = removed.siblings = siblings
    return removed


def test_leave_one_out_names_a_technique_whose_share_changes_inside_the_full_recipe():
    same, faster, slower = (1.0, 0.98, 1.02), (1.3, 1.25, 1.35), (0.8, 0.78, 0.82)
    # 워커: 더할 때 느려졌지만 마지막 단계에서 빼도 차이 없음 → 상호작용. SDPA: 둘 다 빨라짐.
    text = conclusions.conclusion(capstone_groups(slower, same, faster, slower), CPU_DEVICE)
    assert "빼면 0.80배 (0.78–0.82, 느려짐)" in text  # SDPA를 빼면 느려집니다: 필요한 기법
    assert "폭포와 판정이 다른 것: ‘1. + 워커 1개, 고정 메모리(CPU에서는 없음)’" in text
    assert "(앞 단계에 더할 때 느려짐, 마지막 단계에서의 몫은 차이 없음)" in text
    assert "scaled_dot_product_attention’(앞 단계" not in text
    agreeing = conclusions.conclusion(capstone_groups(same, same, faster, slower), CPU_DEVICE)
    assert "폭포와 판정이 다른 것" not in agreeing and "상호작용" not in agreeing


def test_a_break_even_counts_in_the_registry_unit_and_never_below_one():
    spec = registry.BreakEven("워커 띄우기", cost="a", cost_metric="one_time_s", baseline="b",
                              variant="c", unit="배치")  # fmt: skip
    text = curve_sentences.break_even_sentence(analysis.BreakEvenResult(spec, 0.5, 0.01, 50.0))
    assert "배치마다 10 ms 절약 → 50배치째부터 본전입니다" in text and "스텝" not in text
    tiny = curve_sentences.break_even_sentence(analysis.BreakEvenResult(spec, 1e-9, 1.0, 1e-9))
    assert "1배치째부터" in tiny  # 1보다 작은 본전도 셀 수 있는 1배치입니다
    none = curve_sentences.break_even_sentence(analysis.BreakEvenResult(spec, 2.0, None, None))
    assert "본전을 찾지 못합니다" in none


# --- 모든 페이지, 모든 결론 종류를 채운 합성 문서 ---------------------------------------------

SCENARIOS = ["faster", "slower", "same", "extreme"]
DEVICES = {
    "gpu": GPU_DEVICE,
    "gpu-x2": GPU_DEVICE | {"count": 2},
    "cpu": CPU_DEVICE,
    "cpu-bf16": CPU_DEVICE | {"cpu_flags": ["avx512_bf16", "amx_bf16"]},
}


def every_sentence(doc) -> list[str]:
    device = doc["device"]
    found = list(summary.lines(doc))
    for view in analysis.analyze(doc).values():
        for group in view.groups:
            found.append(conclusions.conclusion(group, device))
            for row in group.rows:
                found.append(conclusions.ratio_cell(row, device, view.page))
                found.append(conclusions.previous_cell(row, device, view.page))
        found += [curve_sentences.break_even_sentence(result) for result in view.break_evens()]
        for key, points in view.sweeps().items():
            found.append(curve_sentences.sweep_sentence(view.page.sweep(key), points))
    return found


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_no_conclusion_contradicts_itself_or_prints_a_parenthesised_particle(scenario, device):
    doc = full_document(ROOT, DEVICES[device], scenario)
    sentences = every_sentence(doc)
    kinds = {g.spec.conclusion for v in analysis.analyze(doc).values() for g in v.groups}
    assert kinds == set(registry.CONCLUSIONS)  # 모든 종류의 결론을 썼습니다
    bad = [s for s in sentences if CONTRADICTIONS.search(s)]
    assert bad == []


def test_the_scan_can_fail():
    assert CONTRADICTIONS.search("‘bf16’이(가) 0.83배(느려짐) 빠릅니다")
    assert CONTRADICTIONS.search("활성값은 400 → 643 MiB로 -61% 줄었습니다")
    assert CONTRADICTIONS.search("기준의 inf배") and not CONTRADICTIONS.search(
        "torch.inference_mode()"
    )
    assert CONTRADICTIONS.search("AVX-512 BF16와 AMX")  # "비에프십육"에는 받침이 있습니다


# --- 결론 종류마다 문장 전체: 글자 하나, 조사 하나가 바뀌어도 알아챕니다 -------------------------

NO_PAIR = "이 묶음에는 기준과 권장 방식이 함께 있지 않아 배수를 계산하지 않았습니다."
SDPA = "‘SDPA is_causal=True (flash 커널)’"
BY_HAND = "‘손으로 쓴 어텐션’"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [((1.43, 1.38, 1.49), f"{SDPA}의 속도는 {BY_HAND}의 1.43배입니다(95% 구간 1.38–1.49배, "
                          "빨라짐)."),
     ((0.83, 0.80, 0.86), f"{SDPA}의 속도는 {BY_HAND}의 0.83배입니다(95% 구간 0.80–0.86배, "
                          "느려짐)."),
     ((1.01, 0.97, 1.03), f"{SDPA} 대 {BY_HAND}: 속도 차이가 5%보다 작습니다(95% 구간 0.97–1.03배, "
                          "차이 없음)."),
     ((0.88, 0.81, 0.96), f"{SDPA} 대 {BY_HAND}: 느린 쪽이지만 구간이 ±5% 띠의 경계에 걸쳐, 차이가 "
                          "5%를 넘는다고까지는 말할 수 없습니다(95% 구간 0.81–0.96배, 판정 보류)."),
     ((1.0, 0.9, 1.2), f"{SDPA} 대 {BY_HAND}: 구간이 넓어 어느 쪽이 빠른지 말할 수 없습니다(95% "
                       "구간 0.90–1.20배, 판정 보류)."),
     ((1.5, 1.3, 1.7, 0.9375), f"{SDPA}의 속도는 {BY_HAND}의 1.50배입니다(94% 구간 1.30–1.70배, "
                               "빨라짐)."),
     ((1.5, 1.3, 1.7, 0.95), f"{SDPA}의 속도는 {BY_HAND}의 1.50배입니다(95% 구간 1.30–1.70배, "
                             "빨라짐).")],
)  # fmt: skip
def test_a_speedup_sentence_is_exact(raw, expected):
    assert conclusions.conclusion(sdpa_group(raw), GPU_DEVICE) == expected


def test_a_group_without_a_baseline_and_a_recommendation_says_why_there_is_no_ratio():
    alone = group_of("sdpa", "fwd-bwd", entry("by-hand", "fwd-bwd", "by-hand", "baseline", 0.02,
                                              params={"kernel": "flash"}))  # fmt: skip
    assert conclusions.conclusion(alone, GPU_DEVICE) == NO_PAIR


def test_a_ceiling_group_explains_the_ceiling_column_only_where_a_table_has_it():
    group = group_of(
        "tip4", "ceiling", entry("device-copy", "ceiling", "device-copy", "ceiling", 0.1)
    )
    # 천장 대비 열이 있는 표가 없으면(리뷰 m2: 팁 4) 그 열을 말하지 않습니다.
    assert conclusions.conclusion(group, CPU_DEVICE) == (
        "천장은 같은 실행에서 잰(또는 계산한) 도달 가능한 최대 속도입니다."
    )
    pair = group_of(
        "tip4", "rand",
        entry("create-then-copy", "rand", "create-then-copy", "baseline", 0.2),
        entry("create-on-device", "rand", "create-on-device", "recommended", 0.1,
              ratio=ratio(2.0, 1.9, 2.1)),
    )  # fmt: skip
    pair.rows[1].ceiling_percent = 40.0
    group.siblings = {"ceiling": group, "rand": pair}
    assert conclusions.conclusion(group, GPU_DEVICE) == (
        "천장은 같은 실행에서 잰(또는 계산한) 도달 가능한 최대 속도입니다. "
        "위 표의 ‘천장 대비’ 열이 이것과 비교한 값입니다."
    )
    # 팁 4는 CPU에서 "해당 없음"이라 표가 그 열을 그리지 않습니다.
    assert "천장 대비" not in conclusions.conclusion(group, CPU_DEVICE)


SATURATED = (
    "처리량은 워커 2개에서 더 오르지 않습니다(더 많은 워커와 구간이 겹칩니다). 쓸 수 있는 코어가 "
    "{cores}개라서, 그 이상의 워커는 같은 코어를 나눠 쓸 뿐입니다.{ceiling} "
    "원문의 규칙(4 × GPU 수)은 이 장치에서 워커 {rule}"
)


def test_a_saturation_sentence_is_exact_on_a_cpu_and_on_gpus():
    group = worker_group([(100.0, None), (180.0, (1.8, 1.7, 1.85)), (200.0, (2.0, 1.86, 2.1)),
                          (201.0, (2.01, 1.9, 2.1))])  # fmt: skip
    on_cpu = conclusions.conclusion(group, CPU_DEVICE | {"usable_cores": 2})
    assert on_cpu == SATURATED.format(
        cores=2, ceiling="", rule="0개를 제안합니다: GPU가 없으니 규칙이 답을 주지 못합니다."
    )
    group.rows[2].ceiling_percent = 41.6
    on_gpus = conclusions.conclusion(group, GPU_DEVICE | {"count": 2})
    assert on_gpus == SATURATED.format(
        cores=16, ceiling=" 이때 천장의 42%입니다.", rule="8개를 제안합니다."
    )


def test_saturation_at_the_baseline_names_zero_workers():
    # 기준(비율 없음, 구간을 1.0으로 봄)이 가장 빠르면, 기준과 겹치는 가장 적은 워커 수는 0입니다.
    group = worker_group([(200.0, None), (100.0, (0.5, 0.45, 0.55))])
    text = conclusions.conclusion(group, CPU_DEVICE)
    assert text.startswith("처리량은 워커 0개에서 더 오르지 않습니다")


def test_saturation_with_one_rate_falls_back_to_the_speedup_sentence():
    group = worker_group([(100.0, None)])
    assert conclusions.conclusion(group, CPU_DEVICE) == NO_PAIR


def bf16_group(*, bf16_ratio=(2.0, 1.9, 2.1)):
    return group_of(
        "tip6", "step",
        entry("step-fp32", "step", "fp32", "baseline", 0.2),
        entry("step-bf16", "step", "bf16", "recommended", 0.1,
              ratio=ratio(*bf16_ratio) if bf16_ratio else None),
        entry("step-fp16", "step", "fp16", "other", 0.4, ratio=ratio(0.5, 0.45, 0.55)),
    )  # fmt: skip


BF16_SPEED = "‘bf16 autocast’의 속도는 ‘fp32’의 2.00배입니다(95% 구간 1.90–2.10배, 빨라짐)."
SLOW_FP16 = (
    " fp16 autocast는 이 CPU에 fp16 행렬 곱 하드웨어(AVX512-FP16·AMX-FP16)가 없어 느린 경로로 "
    "계산됩니다. GPU의 fp16과는 관계없는 숫자입니다."
)


@pytest.mark.parametrize(
    ("flags", "expected"),
    [(["avx512_bf16"], "이 CPU에는 AVX-512 BF16 명령이 있어 bf16 행렬 곱을 하드웨어로 계산합니다. "
                       f"{BF16_SPEED}{SLOW_FP16}"),
     (["avx512_bf16", "avx512_fp16"], "이 CPU에는 AVX-512 BF16 명령이 있어 bf16 행렬 곱을 "
                                      f"하드웨어로 계산합니다. {BF16_SPEED}"),
     (["amx_fp16"], "이 CPU에는 AVX-512 BF16도 AMX도 없어 bf16을 fp32로 바꿔 계산합니다. "
                    f"{BF16_SPEED}")],
)  # fmt: skip
def test_a_bf16_sentence_on_a_cpu_is_exact_and_mentions_fp16_only_without_fp16_hardware(
    flags, expected
):
    assert conclusions.conclusion(bf16_group(), CPU_DEVICE | {"cpu_flags": flags}) == expected


def test_bf16_on_a_gpu_or_without_a_bf16_ratio_is_the_plain_speedup_sentence():
    assert conclusions.conclusion(bf16_group(), GPU_DEVICE) == BF16_SPEED
    assert conclusions.conclusion(bf16_group(bf16_ratio=None), CPU_DEVICE) == NO_PAIR


PROFILER_NOTE = (
    " 이 비용에는 실행마다 한 번 드는 준비와 보고서 쓰기가 들어 있어, 학습이 길수록 비율이 "
    "작아집니다."
)


def test_an_overhead_sentence_is_exact_and_ends_with_the_registry_note():
    slower = conclusions.conclusion(
        profiler_group((1.0, 0.97, 1.03), (0.5, 0.45, 0.55), (0.13, 0.12, 0.14)), CPU_DEVICE
    )
    assert slower == (
        '켜 두기만 해도 같은 일이 느려진 것: ‘profiler="advanced"’ 0.50배 (0.45–0.55, 느려짐), '
        '‘profiler="pytorch"’ 0.13배 (0.12–0.14, 느려짐). 가장 비싼 것은 ‘profiler="pytorch"’'
        "입니다. 문제를 찾을 때만 켜고, 학습할 때는 끄세요. 기준과의 차이가 5%보다 작은 것: "
        f'‘profiler="simple"’.{PROFILER_NOTE}'
    )
    faster = conclusions.conclusion(
        profiler_group((1.36, 1.3, 1.4), (1.0, 0.97, 1.03), (1.0, 0.97, 1.03)), CPU_DEVICE
    )
    assert faster == (
        '기준과의 차이가 5%보다 작은 것: ‘profiler="advanced"’, ‘profiler="pytorch"’. 도구가 일을 '
        '덜 수는 없으므로, 기준보다 빠르게 나온 ‘profiler="simple"’의 값은 흔들림입니다.'
        f"{PROFILER_NOTE}"
    )


def test_an_overhead_group_with_only_its_baseline_falls_back_to_the_speedup_sentence():
    assert conclusions.conclusion(profiler_group(), CPU_DEVICE) == f"{NO_PAIR}{PROFILER_NOTE}"


def test_a_tradeoff_sentence_is_exact():
    text = conclusions.conclusion(checkpoint_group(400.0, 100.0, (0.8, 0.78, 0.82)), CPU_DEVICE)
    assert text == (
        "‘블록마다 체크포인팅’의 속도는 기준 대비 0.80배 (0.78–0.82, 느려짐)이고, 저장한 활성값은 "
        "400 → 100 MiB로 75% 줄었습니다."
    )


def memory_group(metric, before, after):
    params = {"values": 100, "num_workers": 2}
    return group_of(
        "dataloader-workers", "memory",
        entry("l", "memory", "python-floats", "baseline", 0.9, params=params,
              metrics={metric: before}),
        entry("n", "memory", "numpy-array", "recommended", 0.3, params=params,
              metrics={metric: after}, ratio=ratio(3.0, 2.8, 3.2)),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("metric", "memory"),
    [("peak_memory_mib", "최대 메모리 증가는 300 → 2 MiB로 99% 줄었습니다"),
     ("worker_memory_growth_mib", "워커 메모리 증가는 300 → 2 MiB로 99% 줄었습니다")],
)  # fmt: skip
def test_a_tradeoff_reads_whichever_memory_metric_both_rows_have(metric, memory):
    text = conclusions.conclusion(memory_group(metric, 300.0, 2.0), CPU_DEVICE)
    assert text == f"‘NumPy 배열’의 속도는 기준 대비 3.00배 (2.80–3.20, 빨라짐)이고, {memory}."


def test_a_tradeoff_without_a_memory_metric_or_a_ratio_is_the_speedup_sentence():
    speed = (
        "‘NumPy 배열’의 속도는 ‘파이썬 float 리스트’의 3.00배입니다(95% 구간 2.80–3.20배, 빨라짐)."
    )
    assert conclusions.conclusion(memory_group("gb_per_s", 300.0, 2.0), CPU_DEVICE) == speed
    no_ratio = memory_group("peak_memory_mib", 300.0, 2.0)
    no_ratio.rows[1].ratio = None
    assert conclusions.conclusion(no_ratio, CPU_DEVICE) == NO_PAIR


def compile_group(*seconds):
    variants = ["first-call-eager", "cold-cache", "warm-cache"]
    rows = [
        entry(variant, "first-call", variant, "baseline" if variant == variants[0] else "other",
              2.0, metrics={"compile_s": value})
        for variant, value in zip(variants, seconds, strict=False)
    ]  # fmt: skip
    return group_of("compile", "first-call", *rows)


def test_a_compile_time_sentence_lists_each_first_call_exactly():
    assert conclusions.conclusion(compile_group(0.25, 27.4, 1234.5), CPU_DEVICE) == (
        "첫 호출에 든 시간: ‘새 프로세스, 컴파일 없음(eager)’ 0.25초, ‘새 프로세스, 빈 캐시 "
        "폴더에서 컴파일’ 27.4초, ‘새 프로세스, 앞 실행이 채운 캐시 폴더에서 컴파일’ 1,234초. "
        "한 번씩 잰 값이라 구간이 없습니다. 캐시가 채워진 폴더에서도 새 프로세스는 모듈을 읽고 "
        "캐시를 찾는 데 시간이 듭니다."
    )
    assert conclusions.conclusion(compile_group(0.25), CPU_DEVICE) == NO_PAIR


WATERFALL_START = (
    "마지막 단계의 속도는 기준의 1.10배 (1.07–1.14)입니다. 앞 단계보다 빨라진 단계: ‘5. + bf16 "
    "autocast’. 앞 단계보다 느려진 단계: "
)


def test_a_waterfall_sentence_is_exact_on_a_cpu_and_on_a_gpu():
    group, device = capstone_group(CPU_DEVICE)
    assert conclusions.conclusion(group, device) == (
        f"{WATERFALL_START}‘6. + scaled_dot_product_attention’. ‘3. + 텐서를 장치에서 바로 "
        f"만들기’, ‘4. + TF32 행렬 곱’: {conclusions.CUDA_ONLY}."
    )
    group, device = capstone_group(GPU_DEVICE)
    group.rows[-1].ceiling_percent = 37.5
    assert conclusions.conclusion(group, device) == (
        f"{WATERFALL_START}‘4. + TF32 행렬 곱’, ‘6. + scaled_dot_product_attention’. 마지막 단계는 "
        "행렬 곱 천장 대비 38%입니다."
    )


def test_a_waterfall_of_one_stage_falls_back_to_the_speedup_sentence():
    group = group_of("capstone", "waterfall",
                     entry("s0", "waterfall", "baseline", "baseline", 1.0,
                           params={"num_workers": 1, "batch_size": 8}))  # fmt: skip
    assert conclusions.conclusion(group, CPU_DEVICE) == NO_PAIR


def test_a_leave_one_out_sentence_is_exact_with_harmful_free_and_idle_techniques():
    same, faster, slower = (1.0, 0.98, 1.02), (1.3, 1.25, 1.35), (0.8, 0.78, 0.82)
    removed = capstone_groups(same, faster, faster, slower)
    # 빼면 더 빨라지는 것이 둘이면 가장 많이 빨라지는 것부터 씁니다.
    removed.rows.append(analysis.Row(
        entry("b", "leave-one-out", "without-bf16", "other", 1.0, ratio=ratio(1.1, 1.06, 1.14)),
        "− bf16", Interval.of(ratio(1.1, 1.06, 1.14))))  # fmt: skip
    removed.rows.append(analysis.Row(
        entry("t", "leave-one-out", "without-tf32", "other", 1.0, ratio=ratio(*slower)),
        "− TF32", Interval.of(ratio(*slower))))  # fmt: skip
    removed.rows.append(analysis.Row(
        entry("p", "leave-one-out", "without-pad", "other", 1.0, ratio=ratio(*same)),
        "− 어휘 맞추기", Interval.of(ratio(*same))))  # fmt: skip
    text = conclusions.conclusion(removed, CPU_DEVICE)
    assert text.startswith(
        "모든 기법을 쓴 ‘컴파일을 뺀 마지막 단계(팁 모두)’에서 하나씩 뺐을 때 느려지는 것: "
        "‘− scaled_dot_product_attention’(빼면 0.80배 (0.78–0.82, 느려짐)). 빼면 오히려 빨라지는 "
        "것(이 장치에서는 손해): ‘− 워커·고정 메모리’(빼면 1.30배 (1.25–1.35, 빨라짐)), "
        "‘− bf16’(빼면 1.10배 (1.06–1.14, 빨라짐)). 빼도 차이가 5%보다 작은 것: ‘− 어휘 맞추기’. "
        "‘− TF32’: "
        f"{conclusions.CUDA_ONLY}."
    )


def test_leave_one_out_with_nothing_slower_says_so():
    same = (1.0, 0.98, 1.02)
    text = conclusions.conclusion(capstone_groups(same, same, same, same), CPU_DEVICE)
    assert text == (
        "모든 기법을 쓴 ‘컴파일을 뺀 마지막 단계(팁 모두)’에서 하나씩 뺐을 때 느려지는 것이 "
        "없습니다. 빼도 차이가 5%보다 작은 것: ‘− 워커·고정 메모리’, "
        "‘− scaled_dot_product_attention’."
    )


def test_leave_one_out_without_removals_falls_back_to_the_speedup_sentence():
    removed = capstone_groups(
        (1.0, 0.98, 1.02), (1.0, 0.98, 1.02), (1.0, 0.98, 1.02), (1.0, 0.98, 1.02)
    )
    removed.rows = removed.rows[:1]
    assert conclusions.conclusion(removed, CPU_DEVICE) == NO_PAIR


def epochs_group(epochs=3, raw=(3.0, 2.8, 3.2)):
    params = {"epochs": epochs, "length": 64, "num_workers": 2}
    return group_of(
        "dataloader-workers", "epochs",
        entry("r", "epochs", "restart-workers", "baseline", 0.9, params=params),
        entry("p", "epochs", "persistent-workers", "recommended", 0.3, params=params,
              ratio=ratio(*raw)),
    )  # fmt: skip


def test_the_saving_per_epoch_is_exact_and_comes_before_the_note():
    assert conclusions.saving_text(epochs_group()) == "에폭마다 약 200 ms"
    assert conclusions.conclusion(epochs_group(), CPU_DEVICE) == (
        "‘persistent_workers=True’의 속도는 ‘persistent_workers=False(기본값)’의 3.00배입니다(95% "
        "구간 2.80–3.20배, 빨라짐). 에폭마다 약 200 ms를 아낍니다. "
        "배수의 크기는 에폭의 길이에 달렸습니다: 아끼는 것은 에폭마다 워커를 띄우는 시간입니다."
    )


@pytest.mark.parametrize(
    "group",
    [epochs_group(epochs=0), epochs_group(epochs="3"), epochs_group(raw=(1.0, 0.97, 1.03)),
     sdpa_group((1.43, 1.38, 1.49))],
)  # fmt: skip
def test_no_saving_is_claimed_without_a_positive_count_a_faster_row_or_a_saving_param(group):
    assert conclusions.saving_text(group) == ""
    assert conclusions.saving_sentence(group) == ""


def test_the_ratio_cell_says_baseline_or_a_dash_when_there_is_no_ratio():
    group = epochs_group()
    page = registry.by_id("dataloader-workers")
    base, fast = group.rows
    assert conclusions.ratio_cell(base, CPU_DEVICE, page) == "기준"
    assert conclusions.ratio_cell(fast, CPU_DEVICE, page) == "3.00배 (2.80–3.20, 빨라짐)"
    fast.ratio = None
    assert conclusions.ratio_cell(fast, CPU_DEVICE, page) == "—"


def test_a_two_stage_waterfall_ignores_the_ceiling_row_on_a_gpu():
    params = {"num_workers": 1, "batch_size": 8, "n": 4096}
    group = group_of(
        "capstone", "waterfall",
        entry("s0", "waterfall", "baseline", "baseline", 1.0, params=params),
        entry("s5", "waterfall", "bf16", "other", 0.5, params=params, ratio=ratio(2.0, 1.9, 2.1),
              versus_previous=ratio(2.0, 1.9, 2.1)),
        entry("mm", "waterfall", "matmul-bfloat16", "ceiling", 0.1, params=params),
    )  # fmt: skip
    assert conclusions.conclusion(group, GPU_DEVICE) == (
        "마지막 단계의 속도는 기준의 2.00배 (1.90–2.10)입니다. 앞 단계보다 빨라진 단계: "
        "‘5. + bf16 autocast’."
    )


def test_a_cuda_only_stage_on_a_gpu_shows_its_ratio():
    group, device = capstone_group(GPU_DEVICE)
    page = registry.by_id("capstone")
    # 누적 배수는 판정 없이 보입니다(판정은 앞 단계 대비 칸이 합니다).
    assert conclusions.ratio_cell(group.row("tf32"), device, page) == "0.85배 (0.82–0.87)"


def test_a_memory_below_one_mib_still_gets_its_percentage():
    text = conclusions.conclusion(checkpoint_group(0.5, 0.25, (0.8, 0.78, 0.82)), CPU_DEVICE)
    assert text.endswith("저장한 활성값은 0.5 → 0.25 MiB로 50% 줄었습니다.")


def test_two_first_calls_are_enough_for_a_compile_time_sentence():
    assert conclusions.conclusion(compile_group(0.25, 27.4), CPU_DEVICE) == (
        "첫 호출에 든 시간: ‘새 프로세스, 컴파일 없음(eager)’ 0.25초, ‘새 프로세스, 빈 캐시 "
        "폴더에서 컴파일’ 27.4초. 한 번씩 잰 값이라 구간이 없습니다. 캐시가 채워진 폴더에서도 새 "
        "프로세스는 모듈을 읽고 캐시를 찾는 데 시간이 듭니다."
    )


def test_a_single_epoch_saves_the_whole_difference():
    assert conclusions.saving_text(epochs_group(epochs=1)) == "에폭마다 약 600 ms"


def test_saturation_picks_the_fewest_workers_even_when_rows_are_not_in_order():
    rows = []
    for workers, rate, raw in [
        (0, 100.0, None),
        (3, 201.0, (2.01, 1.9, 2.1)),
        (2, 200.0, (2.0, 1.86, 2.1)),
        (1, 180.0, (1.8, 1.7, 1.85)),
    ]:
        rows.append(
            entry(
                f"workers-{workers}",
                "throughput",
                "workers",
                "baseline" if workers == 0 else "other",
                1.0,
                params={"num_workers": workers, "batch_size": 8, "cores": 2},
                metrics={"samples_per_s": rate},
                ratio=ratio(*raw) if raw else None,
            )
        )
    group = group_of("tip1", "throughput", *rows)  # fmt: skip
    text = conclusions.conclusion(group, CPU_DEVICE)
    assert text.startswith("처리량은 워커 2개에서 더 오르지 않습니다")


def test_overhead_lists_every_faster_tool_as_noise():
    text = conclusions.conclusion(
        profiler_group((1.36, 1.3, 1.4), (1.2, 1.1, 1.3), (1.0, 0.97, 1.03)), CPU_DEVICE
    )
    assert text == (
        '기준과의 차이가 5%보다 작은 것: ‘profiler="pytorch"’. 도구가 일을 덜 수는 없으므로, '
        '기준보다 빠르게 나온 ‘profiler="simple"’, ‘profiler="advanced"’의 값은 흔들림입니다.'
        f"{PROFILER_NOTE}"
    )


def test_overhead_and_leave_one_out_write_a_held_verdict_with_its_interval():
    # 판정 보류의 목록은 두 결론이 한 도우미로 씁니다. 빼 보기만 괄호 안에 '빼면'을 붙입니다.
    same, held, slower = (1.0, 0.97, 1.03), (0.93, 0.90, 0.96), (0.8, 0.78, 0.82)
    text = conclusions.conclusion(profiler_group(held, same, same), CPU_DEVICE)
    assert text == (
        '비용이 있는지 판정을 보류한 것: ‘profiler="simple"’(판정 보류: 0.90–0.96배, 느린 쪽). '
        '기준과의 차이가 5%보다 작은 것: ‘profiler="advanced"’, ‘profiler="pytorch"’.'
        f"{PROFILER_NOTE}"
    )
    text = conclusions.conclusion(capstone_groups(same, held, same, slower), CPU_DEVICE)
    assert text.startswith(
        "모든 기법을 쓴 ‘컴파일을 뺀 마지막 단계(팁 모두)’에서 하나씩 뺐을 때 느려지는 것: "
        "‘− scaled_dot_product_attention’(빼면 0.80배 (0.78–0.82, 느려짐)). 판정을 보류한 것: "
        "‘− 워커·고정 메모리’(빼면 판정 보류: 0.90–0.96배, 느린 쪽)."
    )
    # 보류가 없으면 그 문장도 없습니다.
    text = conclusions.conclusion(capstone_groups(same, same, same, slower), CPU_DEVICE)
    assert "판정을 보류한 것" not in text


def test_a_memory_metric_on_only_one_side_is_not_a_tradeoff():
    group = memory_group("peak_memory_mib", 300.0, 2.0)
    del group.rows[1].entry["metrics"]["peak_memory_mib"]
    assert conclusions.conclusion(group, CPU_DEVICE) == (
        "‘NumPy 배열’의 속도는 ‘파이썬 float 리스트’의 3.00배입니다(95% 구간 2.80–3.20배, 빨라짐)."
    )


def leave_one_out_with_cuda_only_removals(device):
    same, slower = (1.0, 0.98, 1.02), (0.8, 0.78, 0.82)
    removed = capstone_groups(same, slower, same, slower)
    for key, variant, label in [
        ("t", "without-tf32", "− TF32 행렬 곱"),
        ("c", "without-create-on-device", "− 텐서를 장치에서 바로 만들기"),
    ]:
        raw = ratio(0.9, 0.88, 0.92)
        removed.rows.append(
            analysis.Row(
                entry(key, "leave-one-out", variant, "other", 1.0, ratio=raw),
                label,
                Interval.of(raw),
            )
        )
    return conclusions.conclusion(removed, device)  # fmt: skip


LEAVE_ONE_OUT_START = (
    "모든 기법을 쓴 ‘컴파일을 뺀 마지막 단계(팁 모두)’에서 하나씩 뺐을 때 느려지는 것: "
    "‘− 워커·고정 메모리’(빼면 0.80배 (0.78–0.82, 느려짐)), ‘− scaled_dot_product_attention’(빼면 "
    "0.80배 (0.78–0.82, 느려짐))"
)


def test_leave_one_out_judges_cuda_only_removals_on_a_gpu_and_idles_them_on_a_cpu():
    on_gpu = leave_one_out_with_cuda_only_removals(GPU_DEVICE)
    assert on_gpu.startswith(
        f"{LEAVE_ONE_OUT_START}, ‘− TF32 행렬 곱’(빼면 0.90배 (0.88–0.92, 느려짐)), ‘− 텐서를 "
        "장치에서 바로 만들기’(빼면 0.90배 (0.88–0.92, 느려짐)). 폭포와 판정이 다른 것:"
    )
    on_cpu = leave_one_out_with_cuda_only_removals(CPU_DEVICE)
    assert on_cpu.startswith(
        f"{LEAVE_ONE_OUT_START}. ‘− TF32 행렬 곱’, ‘− 텐서를 장치에서 바로 만들기’: "
        f"{conclusions.CUDA_ONLY}. 폭포와 판정이 다른 것:"
    )


def test_a_waterfall_names_every_stage_that_helped():
    same, faster, slower = (1.0, 0.98, 1.02), (1.3, 1.25, 1.35), (0.8, 0.78, 0.82)
    waterfall = capstone_groups(faster, same, faster, slower).siblings["waterfall"]
    assert conclusions.conclusion(waterfall, GPU_DEVICE) == (
        "마지막 단계의 속도는 기준의 1.30배 (1.25–1.35)입니다. 앞 단계보다 빨라진 단계: ‘1. + 워커 "
        "1개, 고정 메모리(CPU에서는 없음)’, ‘6. + scaled_dot_product_attention’."
    )
