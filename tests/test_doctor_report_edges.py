"""torchdoctor/report.py: 찾은 것의 순서, 보고서 JSON의 값, 터미널 글의 줄 하나하나. 작업을 돌리지
않고 손으로 만든 규칙 결과로 봅니다(torch를 가져오지 않습니다).
"""

from __future__ import annotations

import json
import os

import pytest

from torchdoctor import catalog, pages, report, rules

FASTER = {"ratio": 2.0, "verdict": "faster"}


# ----- 잰 이득과 순서 -----
def test_payoff_is_the_share_times_the_part_of_the_time_a_faster_fix_saves():
    assert report.payoff({"share": 0.4, "measured": FASTER}) == pytest.approx(0.2)
    assert report.payoff({"share": 0.4, "measured": {"ratio": 4.0, "verdict": "faster"}}) == (
        pytest.approx(0.3)
    )


@pytest.mark.parametrize(
    "item",
    [
        {"share": 0.4, "measured": None},
        {"share": 0.4},
        {"share": None, "measured": FASTER},
        {"measured": FASTER},
        {"share": 0.4, "measured": {"ratio": 0.19, "verdict": "slower"}},
        {"share": 0.4, "measured": {"ratio": 1.2, "verdict": "inconclusive"}},
    ],
)
def test_there_is_no_payoff_without_a_faster_measurement_and_a_share(item):
    assert report.payoff(item) is None


@pytest.mark.parametrize(
    ("measured", "without_gain"),
    [
        (None, False),
        ({}, False),
        (FASTER, False),
        ({"ratio": 0.19, "verdict": "slower"}, True),
        ({"ratio": 1.0, "verdict": "same"}, True),
        ({"ratio": 1.2, "verdict": "inconclusive"}, True),
        ({"ratio": 1.2}, True),  # 판정이 없는 측정도 "빨라짐"이 아닙니다
    ],
)
def test_a_measurement_without_gain_is_any_measured_verdict_but_faster(measured, without_gain):
    assert report.measured_without_gain({"share": 0.4, "measured": measured}) is without_gain


def test_measured_gains_come_first_largest_first_then_shares_then_the_rest_then_no_gain():
    slower = {"name": "slower", "share": 0.9, "measured": {"ratio": 0.5, "verdict": "slower"}}
    items = [
        slower,
        {"name": "no share", "share": None, "measured": None},
        {"name": "zero share", "share": 0.0, "measured": None},
        {"name": "share", "share": 0.5, "measured": None},
        {"name": "small gain", "share": 0.3, "measured": FASTER},  # 0.15
        {"name": "big gain", "share": 0.8, "measured": FASTER},  # 0.4
    ]
    names = [item["name"] for item in report.rank(items)]
    assert names == ["big gain", "small gain", "share", "zero share", "no share", "slower"]


def test_ranking_keeps_the_rule_order_among_equals():
    items = [{"n": 1, "share": None}, {"n": 2, "share": None}, {"n": 3, "share": None}]
    assert [item["n"] for item in report.rank(items)] == [1, 2, 3]
    assert report.rank([]) == []


# ----- 보고서 데이터 -----
EV = {
    "script": "train.py",
    "device": "cpu",
    "gpu": None,
    "torch": "2.5.0",
    "rank": None,
    "outcome": "finished",
    "steps_seen": 12,
    "skip_steps": 5,
    "call_steps": 2,
    "window_steps": 4,
    "step_s": [0.5, 1.0, 1.5, 1.0],
    "data_s": [0.1, 0.2, 0.1, 0.1],
    "errors": ["probe: boom"],
}


def checks() -> dict:
    here = os.path.join(os.getcwd(), "train.py")
    sync = rules.finding("host-sync", "sync", file=here, line=7)
    fp32 = rules.finding("fp32-matmul", "fp32", file="/elsewhere/model.py", line=3, share=0.5)
    fp32["measured"] = FASTER
    return {
        # 맨 앞 규칙(data-wait)의 결과는 없습니다: 없는 규칙은 건너뛰고 다음 규칙을 봅니다.
        "host-sync": rules.Check([sync], fine="찾은 것이 있으면 쓰지 않는 말"),
        "fp32-matmul": rules.Check([fp32]),
        "attention": rules.Check(fine="어텐션 없음"),
        "host-tensor-move": rules.Check(skipped="호출 탐침 스텝에 이르지 못했습니다"),
        "launch-bound": rules.Check(skipped="CUDA에서만 봅니다"),
    }


def test_the_report_data_holds_every_field_with_its_value():
    data = report.build(EV, checks(), ["알림 하나"])
    findings = data.pop("findings")
    assert data == {
        "tool": "torchdoctor",
        "version": 1,
        "script": "train.py",
        "device": "cpu",
        "gpu": None,
        "torch": "2.5.0",
        "rank": None,
        "outcome": "finished",
        "steps": {
            "seen": 12,
            "skipped": 5,
            "probe": 2,
            "window": 4,
            "window_wanted": 4,
            "median_step_s": 1.0,
            "data_share": 0.125,
        },
        "fine": [
            {
                "rule": "attention",
                "page": "sdpa",
                "title": catalog.BY_KEY["attention"].title,
                "note": "어텐션 없음",
            }
        ],
        "not_checked": [
            {
                "rule": "host-tensor-move",
                "page": "tip4",
                "title": catalog.BY_KEY["host-tensor-move"].title,
                "why": "호출 탐침 스텝에 이르지 못했습니다",
                "cuda_only": False,
            },
            {
                "rule": "launch-bound",
                "page": "compile",
                "title": catalog.BY_KEY["launch-bound"].title,
                "why": "CUDA에서만 봅니다",
                "cuda_only": True,
            },
        ],
        "notes": ["알림 하나"],
        "errors": ["probe: boom"],
    }
    # 잰 이득이 있는 fp32 행렬 곱이 먼저, 파일은 지금 폴더 아래면 상대 경로로 씁니다.
    assert [(item["rule"], item["file"]) for item in findings] == [
        ("fp32-matmul", "/elsewhere/model.py"),
        ("host-sync", "train.py"),
    ]
    sync = findings[1]
    assert (sync["page_title"], sync["url"]) == (pages.title("tip3"), pages.url("tip3"))
    assert sync["url"].endswith("tips/03-avoid-syncs.html")
    assert (sync["line"], sync["message"]) == (7, "sync")


def test_the_warm_up_count_is_the_steps_actually_skipped():
    # 워밍업 5개로 두었어도 스텝 2개에서 멈춘 작업은 2개만 건너뛰었습니다.
    assert report.build({"skip_steps": 5, "steps_seen": 2}, {}, [])["steps"]["skipped"] == 2
    assert report.build({"skip_steps": 5, "steps_seen": 30}, {}, [])["steps"]["skipped"] == 5


def test_a_job_that_saw_nothing_has_zero_counts_and_no_window_values():
    data = report.build({}, {}, [])
    assert data["steps"] == {
        "seen": 0,
        "skipped": 0,
        "probe": 0,
        "window": 0,
        "window_wanted": None,
        "median_step_s": None,
        "data_share": None,
    }
    assert (data["findings"], data["fine"], data["not_checked"], data["errors"]) == ([], [], [], [])


def test_a_window_of_zero_length_steps_has_a_median_but_no_data_share():
    data = report.build({"step_s": [0.0, 0.0], "data_s": [0.0, 0.0]}, {}, [])
    assert (data["steps"]["median_step_s"], data["steps"]["data_share"]) == (0.0, None)
    assert data["steps"]["window"] == 2


def test_the_data_share_is_rounded_to_four_places():
    data = report.build({"step_s": [3.0], "data_s": [1.0]}, {}, [])
    assert data["steps"]["data_share"] == 0.3333


# ----- JSON 파일 -----
def small_report(rank=None) -> report.Report:
    return report.Report(report.build(dict(EV, rank=rank), checks(), []))


def test_the_json_file_is_readable_utf8_with_two_space_indent_and_a_final_newline(tmp_path):
    target = tmp_path / "report.json"
    data = small_report()
    assert data.json(str(target)) == str(target)
    raw = target.read_text(encoding="utf-8")
    assert json.loads(raw) == data
    assert "어텐션 없음" in raw  # 한국어를 \uXXXX로 바꾸지 않습니다
    assert raw.splitlines()[1] == '  "tool": "torchdoctor",'
    assert raw.endswith("}\n") and not raw.endswith("\n\n")
    assert os.listdir(tmp_path) == ["report.json"]  # 임시 파일이 남지 않습니다


@pytest.mark.parametrize(
    ("rank", "name", "written"),
    [
        (None, "report.json", "report.json"),
        ({"rank": 0, "world_size": 2}, "report.json", "report.json"),
        ({"rank": 1, "world_size": 2}, "report.json", "report.rank1.json"),
        ({"rank": 3, "world_size": 4}, "report", "report.rank3.json"),
        ({"rank": 1, "world_size": 2}, "report.out", "report.rank1.out"),
    ],
)
def test_each_torchrun_rank_but_the_first_writes_its_own_file(tmp_path, rank, name, written):
    path = report.write_json(small_report(rank), str(tmp_path / name))
    assert path == str(tmp_path / written)
    assert os.listdir(tmp_path) == [written]
    assert json.loads((tmp_path / written).read_text(encoding="utf-8"))["rank"] == rank


# ----- 터미널 글 -----
def test_the_start_cost_says_how_many_batches_pay_it_back_or_that_none_do():
    measured = {"start_s": 0.2, "payback_batches": 12}
    assert report.start_cost_text(measured) == (
        "워커를 띄우는 한 번의 비용 200 ms(배치 12개면 되찾습니다)"
    )
    assert report.start_cost_text(dict(measured, payback_batches=None)) == (
        "워커를 띄우는 한 번의 비용 200 ms(정상 상태에서 빨라지지 않아 되찾지 못합니다)"
    )


def full_report() -> dict:
    loader = {
        "rule": "data-wait",
        "page": "tip1",
        "title": "데이터 기다림(워커 0개)",
        "file": "train.py",
        "line": 7,
        "share": 0.4,
        "message": "배치를 기다립니다.",
        "measured": {
            "what": "워커 0개 → 4개",
            "text": "1.50배 (1.40–1.60, 빨라짐)",
            "verdict": "faster",
            "ratio": 1.5,
            "start_s": 0.2,
            "payback_batches": 12,
        },
    }
    slower = {
        "rule": "data-wait-workers",
        "page": "dataloader-workers",
        "title": "데이터 기다림(워커가 있어도)",
        "file": "train.py",
        "line": 9,
        "share": 0.3,
        "message": "워커가 있어도 기다립니다.",
        "fix_note": "재 본 것이 있으면 쓰지 않는 말",
        "measured": {
            "what": "워커 2개 → 4개",
            "text": "0.19배 (0.18–0.20, 느려짐)",
            "verdict": "slower",
            "ratio": 0.19,
        },
    }
    launch = {
        "rule": "launch-bound",
        "page": "compile",
        "title": "짧은 커널이 많은 스텝",
        "file": None,
        "line": None,
        "share": None,
        "message": "커널이 짧습니다.",
        "measured": None,
        "fix_note": "CUDA에서만 잽니다",
        "unverified": "GPU에서 아직 실행해 보지 않음",
    }
    return {
        "script": "train.py",
        "device": "cuda",
        "gpu": {"name": "H100"},
        "torch": "2.5.0",
        "rank": {"rank": 1, "world_size": 2},
        "outcome": "raised",
        "steps": {
            "seen": 30,
            "skipped": 5,
            "probe": 2,
            "window": 20,
            "window_wanted": 20,
            "median_step_s": 0.0123,
            "data_share": 0.25,
        },
        "findings": [loader, slower, launch],
        "fine": [
            {"rule": "attention", "page": "sdpa", "title": "손으로 쓴 어텐션", "note": "없음"}
        ],
        "not_checked": [
            {
                "rule": "unpinned-batches",
                "page": "tip2",
                "title": "고정되지 않은 배치 메모리",
                "why": "CUDA에서만 봅니다",
            }
        ],
        "notes": ["알림 하나"],
        "errors": ["probe: boom"],
    }


def test_the_text_report_reads_line_by_line():
    lines = [
        "== torchdoctor 진단: train.py (H100, torch 2.5.0) ==",
        "torchrun 프로세스 2개 가운데 순위(rank) 1 프로세스가 본 것입니다. 다른 순위는 각자의"
        " 보고서를 씁니다.",
        "작업이 예외로 멈췄습니다. 멈추기 전까지 잰 것입니다.",
        "스텝: 본 것 30개, 건너뛴 워밍업 5개, 탐침 2개, 시간 창 20/20개, 스텝 중앙값 12.3 ms,"
        " 배치를 기다린 몫 25%",
        "알림: 알림 하나",
        "",
        "찾은 것 3개 (잰 이득, 그다음 몫이 큰 순서)",
        "1. 데이터 기다림(워커 0개) — train.py:7",
        "   배치를 기다립니다.",
        f"   · 페이지: {pages.label('tip1')}",
        "   · 스텝에서 이길 수 있는 몫 최대 40%",
        "   · 고친 것을 이 작업의 데이터로 잰 결과(워커 0개 → 4개): 1.50배 (1.40–1.60, 빨라짐)",
        "   · 워커를 띄우는 한 번의 비용 200 ms(배치 12개면 되찾습니다)",
        "2. 데이터 기다림(워커가 있어도) — train.py:9",
        "   워커가 있어도 기다립니다.",
        f"   · 페이지: {pages.label('dataloader-workers')}",
        "   · 스텝에서 이길 수 있는 몫 최대 30%",
        "   · 고친 것을 이 작업의 데이터로 잰 결과(워커 2개 → 4개): 0.19배 (0.18–0.20, 느려짐)",
        "   · 이 작업에서 재 보니 고친 쪽이 느렸습니다. 지금 설정을 그대로 두세요.",
        "3. 짧은 커널이 많은 스텝 — 작업 전체",
        "   커널이 짧습니다.",
        f"   · 페이지: {pages.label('compile')}",
        "   · 고친 것을 재지 않은 이유: CUDA에서만 잽니다",
        "   · GPU에서 아직 실행해 보지 않음",
        "",
        "확인했고 괜찮은 것",
        f" - 손으로 쓴 어텐션: 없음 [{pages.title('sdpa')}]",
        "",
        "이 작업에서 보지 못한 것",
        f" - 고정되지 않은 배치 메모리: CUDA에서만 봅니다 [{pages.title('tip2')}]",
        "진단기 오류(작업에는 영향 없음): probe: boom",
    ]
    data = full_report()
    assert report.text(data) == "\n".join(lines) + "\n"
    assert str(report.Report(data)) == report.text(data)


def test_a_report_with_nothing_found_on_an_unnamed_cpu_job_is_short():
    data = {
        "device": "cpu",
        "torch": "2.5.0",
        "steps": {"seen": 3, "skipped": 1, "probe": 1, "window": 0, "window_wanted": 20},
        "findings": [],
        "fine": [],
        "not_checked": [],
    }
    assert report.text(data) == (
        "== torchdoctor 진단: 이 작업 (CPU, torch 2.5.0) ==\n"
        "\n"  # 끝난 모양(outcome)을 모르면 빈 줄
        "스텝: 본 것 3개, 건너뛴 워밍업 1개, 탐침 1개, 시간 창 0/20개\n"
        "\n"
        "찾은 것 0개\n"
    )


def test_the_header_names_an_unknown_device_and_a_zero_data_share():
    steps = {"seen": 3, "skipped": 1, "probe": 1, "window": 2, "window_wanted": 2}
    data = {
        "gpu": {},
        "outcome": "interrupted",
        "steps": dict(steps, median_step_s=0.0, data_share=0.0),
        "findings": [],
        "fine": [],
        "not_checked": [],
    }
    first, outcome, summary, *_ = report.text(data).splitlines()
    assert first == "== torchdoctor 진단: 이 작업 (?, torch None) =="
    assert outcome == "Ctrl-C로 멈췄습니다. 그때까지 잰 것입니다."
    assert (
        summary
        == "스텝: 본 것 3개, 건너뛴 워밍업 1개, 탐침 1개, 시간 창 2/2개, 배치를 기다린 몫 0%"
    )


@pytest.mark.parametrize(
    ("measured", "last"),
    [
        (
            {"verdict": "same"},
            "이 작업에서 재 보니 차이가 5%보다 작았습니다. 바꿀 까닭이 없습니다.",
        ),
        (
            {"verdict": "inconclusive"},
            "이 작업에서 재 본 결과로는 판정을 보류합니다. 더 긴 작업에서 다시 재 보세요.",
        ),
        ({}, "이 작업에서 재 본 결과로는 판정을 보류합니다. 더 긴 작업에서 다시 재 보세요."),
        (
            {"verdict": "odd"},
            "이 작업에서 재 본 결과로는 판정을 보류합니다. 더 긴 작업에서 다시 재 보세요.",
        ),
    ],
)
def test_a_fix_measured_without_gain_says_what_to_do(measured, last):
    item = {"share": None, "measured": dict(measured, what="w", text="t")}
    assert report._details(item) == ["고친 것을 이 작업의 데이터로 잰 결과(w): t", last]


def test_a_faster_fix_without_a_start_cost_has_only_its_result():
    item = {"share": 0.5, "measured": dict(FASTER, what="w", text="t", start_s=None)}
    assert report._details(item) == [
        "스텝에서 이길 수 있는 몫 최대 50%",
        "고친 것을 이 작업의 데이터로 잰 결과(w): t",
    ]


# ----- Report -----
def test_a_report_lists_the_pages_and_rules_it_found():
    data = report.Report(full_report())
    assert data.findings is data["findings"]
    assert data.pages() == {"tip1", "dataloader-workers", "compile"}
    assert data.rule_keys() == {"data-wait", "data-wait-workers", "launch-bound"}
    assert report.rule_title("host-sync") == "스텝마다 호스트 동기화"
