"""hooks/results.py의 테스트: 결과 파일의 숫자가 빌드한 HTML에 그대로 나오는지, 오래된 결과와 깨진
파일과 알 수 없는 팁이 약속대로 처리되는지 확인합니다."""

from __future__ import annotations

import json
import logging
import re
import shutil

import pytest
from mkdocs.exceptions import PluginError

from hooks import results as hook
from tests.results_sample import sample_document, write
from tests.site_build import ROOT, copy_project, mkdocs_build

SAMPLE_NAME = "test-gpu-9000.json"


def project_with(tmp_path, doc):
    """결과 파일을 doc 하나로 바꾼 프로젝트 복사본입니다."""
    project = copy_project(tmp_path / "project")
    shutil.rmtree(project / "results")
    write(project / "results" / SAMPLE_NAME, doc)
    return project


def page_text(site, path):
    return (site / path).read_text(encoding="utf-8")


def visible_text(html):
    without_svg = re.sub(r"<svg.*?</svg>", " ", html, flags=re.DOTALL)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", without_svg))


def cpu_document():
    """두 번째 장치: 팁 4만 잰 4코어 CPU입니다(두 방식이 같아 잡음 범위인 결과)."""
    doc = sample_document(ROOT)
    doc["environment"].update(device_kind="cpu", device_name="Test CPU", device_count=0,
                              usable_cores=4, driver=None, cuda=None, cudnn=None)  # fmt: skip
    doc["benchmarks"] = doc["benchmarks"][:3]
    doc["benchmarks"][0].update(median_s=0.0421, iqr_s=0.0009)
    doc["benchmarks"][1].update(median_s=0.0417, iqr_s=0.0008)
    doc["not_measured"] = [{"tip": "tip3", "key": "test_x", "reason": "테스트용 CPU 문서입니다."}]
    return doc


@pytest.fixture(scope="module")
def sample_site(tmp_path_factory):
    """예시 결과 파일로 빌드한 사이트. 팁 3의 스니펫은 측정 뒤에 바뀐 것으로 만듭니다."""
    tmp_path = tmp_path_factory.mktemp("results-hook")
    project = project_with(tmp_path, sample_document(ROOT))
    write(project / "results" / "cpu-test-4cores.json", cpu_document())
    changed = project / "snippets" / "tip3_avoid_syncs.py"
    changed.write_text(changed.read_text(encoding="utf-8") + "\n# 측정 뒤에 바뀐 줄\n", "utf-8")
    site = tmp_path / "site"
    result = mkdocs_build(project, site)
    assert result.returncode == 0, result.stderr
    return site


def test_tip_page_shows_the_files_numbers_with_provenance(sample_site):
    text = visible_text(page_text(sample_site, "tips/04-create-on-device.html"))
    # 헤드라인 = 7.37 ms / 2.68 ms
    assert "속도 향상 2.75배" in text
    for number in ("7.37 ms", "2.68 ms", "110 µs", "36.4 GB/s", "98.7 GB/s", "3,210 GB/s"):
        assert number in text
    assert "3%" in text  # 98.7 / 3210 GB/s: 천장 대비
    for fact in ("Test GPU 9000", "torch 2.99.0+cu999", "CUDA 99.9", "드라이버 999.12.34",
                 "Python 3.99.1", "2031-04-05", "abcdef0123"):  # fmt: skip
        assert fact in text
    assert "다시 측정되지 않았습니다" not in text


def test_raw_results_file_is_published_and_linked(sample_site):
    html = page_text(sample_site, "tips/04-create-on-device.html")
    assert f'href="../results/{SAMPLE_NAME}"' in html
    copied = json.loads(page_text(sample_site, f"results/{SAMPLE_NAME}"))
    assert copied == sample_document(ROOT)


def test_changed_snippet_gets_the_stale_label(sample_site):
    text = visible_text(page_text(sample_site, "tips/03-avoid-syncs.html"))
    assert "코드가 바뀐 뒤 다시 측정되지 않았습니다" in text
    assert "snippets/tip3_avoid_syncs.py" in text
    assert "속도 향상 1.60배" in text  # 예전 숫자도 숨기지 않고, 표시와 함께 보여 줍니다


def test_not_measured_reason_is_shown(sample_site):
    text = visible_text(page_text(sample_site, "tips/05-ddp.html"))
    assert "GPU가 1개뿐이라 재지 않았습니다(테스트용 이유)." in text


def test_home_and_results_page_show_every_device(sample_site):
    home = page_text(sample_site, "index.html")
    assert "2.75배" in visible_text(home) and "<svg" in home
    everything = visible_text(page_text(sample_site, "results.html"))
    for fact in ("Test GPU 9000", "999.12.34", "2.99.0+cu999", "Test CPU", "2031-04-05T06:07:08Z"):
        assert fact in everything
    assert "코드가 바뀐 뒤 다시 재지 않음" in everything  # 팁 3


def test_charts_keep_korean_as_text_and_follow_the_color_scheme(sample_site):
    html = page_text(sample_site, "tips/04-create-on-device.html")
    svg = re.search(r'<figure class="result-chart".*?</figure>', html, flags=re.DOTALL).group(0)
    assert re.search(r"<text[^>]*>[^<]*[가-힣]", svg), "한글이 글자로 남아 있지 않습니다"
    assert "currentColor" in svg and hook.charts.INK not in svg
    assert 'role="img"' in svg and 'aria-label="팁 4' in svg
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids))


def test_broken_results_file_fails_the_build_naming_file_and_field(tmp_path):
    doc = sample_document(ROOT)
    del doc["benchmarks"][1]["median_s"]
    project = project_with(tmp_path, doc)
    result = mkdocs_build(project, tmp_path / "site")
    assert result.returncode != 0
    assert SAMPLE_NAME in result.stderr and "benchmarks[1].median_s" in result.stderr


def test_results_for_an_unknown_tip_fail_the_strict_build(tmp_path):
    doc = sample_document(ROOT)
    doc["not_measured"].append({"tip": "tip9", "key": "test_x", "reason": "없는 팁"})
    result = mkdocs_build(project_with(tmp_path, doc), tmp_path / "site")
    assert result.returncode != 0
    assert "tip9의 결과가 있지만" in result.stderr


# --- 빌드 없이 훅 함수만 부르는 경우 -----------------------------------------------------------


@pytest.fixture
def loaded(tmp_path, monkeypatch):
    """hooks.results의 상태를 예시 문서로 채웁니다(팁 페이지 7개가 있다고 칩니다)."""
    doc = sample_document(ROOT)
    path = write(tmp_path / "results" / SAMPLE_NAME, doc)
    monkeypatch.setattr(hook, "devices", [hook.Device(path, doc, {})])
    pages = {f"tip{n}": f"tips/0{n}-x.md" for n in range(1, 8)}
    monkeypatch.setattr(hook, "tip_pages", pages)
    monkeypatch.setattr(hook, "unmeasurable", set())
    return doc


def test_tip_page_without_results_is_a_warning(loaded, caplog):
    loaded["not_measured"] = [x for x in loaded["not_measured"] if x["tip"] != "tip7"]
    with caplog.at_level(logging.WARNING, logger="mkdocs.hooks.results"):
        hook.render_tip("tip7", "tips/07-profiler.md")
    assert "tips/07-profiler.md: tip7의 측정 결과가 results/에 없습니다" in caplog.text


def test_page_marked_not_measurable_needs_no_results(loaded, caplog):
    loaded["not_measured"] = [x for x in loaded["not_measured"] if x["tip"] != "tip5"]
    hook.unmeasurable.add("tip5")
    with caplog.at_level(logging.WARNING, logger="mkdocs.hooks.results"):
        hook.render_tip("tip5", "tips/05-ddp.md")
    assert caplog.text == ""


def test_dry_run_results_cannot_be_published(tmp_path):
    doc = sample_document(ROOT) | {"dry_run": True}
    write(tmp_path / "results" / "dry-run-gpu.json", doc)
    with pytest.raises(PluginError, match=r"dry-run-gpu.json의 dry_run: 드라이 런 결과는"):
        hook.load_devices(tmp_path)


def test_results_within_noise_are_not_called_a_speed_up(loaded):
    fast = loaded["benchmarks"][1]
    fast["median_s"] = loaded["benchmarks"][0]["median_s"] - fast["iqr_s"] / 2
    text = hook.render_tip("tip4", "tips/04-create-on-device.md")
    assert "차이 없음" in text and "속도 향상" not in text


def test_a_slower_fast_variant_is_shown_as_a_warning_not_a_success(loaded):
    loaded["benchmarks"][1]["median_s"] = 0.0191  # 기준(7.37 ms)보다 훨씬 느림
    text = hook.render_tip("tip4", "tips/04-create-on-device.md")
    assert '!!! warning "오히려 느려짐 0.39배"' in text and "!!! success" not in text


def test_every_device_gets_its_own_section_gpu_first(sample_site):
    text = visible_text(page_text(sample_site, "tips/04-create-on-device.html"))
    assert text.index("Test GPU 9000") < text.index("CPU 4코어 (Test CPU)")
    assert "42.1 ms" in text and "41.7 ms" in text
    assert "차이 없음: 1.01배" in text  # CPU 장치의 헤드라인은 잡음 범위
    home = visible_text(page_text(sample_site, "index.html"))
    assert "Test GPU 9000 CPU 4코어 (Test CPU)" in home  # 표 머리: 장치마다 한 열
    assert "1.01배 (잡음 범위)" in home
