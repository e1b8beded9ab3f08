"""hooks/results.py와 hooks/render.py의 테스트: 결과 파일의 숫자가 한국어 이름, 단위, 결론과 함께
빌드한 HTML에 나오는지, 바깥에서 온 결과 파일이 페이지에 마크업을 넣거나 빌드를 traceback으로
멈추게 할 수 없는지 확인합니다."""

from __future__ import annotations

import json
import re
import shutil
from html import unescape

import pytest

from benchmarks import results_file
from guide import registry
from tests.results_sample import SAMPLE_NAME, cpu_document, sample_document, write
from tests.site_build import ROOT, copy_project, mkdocs_build


def project_with(tmp_path, *docs):
    """결과 파일을 docs로 바꾼 프로젝트 복사본입니다. 파일 이름은 장치에서 정합니다."""
    project = copy_project(tmp_path / "project")
    shutil.rmtree(project / "results", ignore_errors=True)
    for doc in docs:
        write(project / "results" / f"{results_file.results_name(doc['environment'])}.json", doc)
    return project


def page_text(site, path):
    return (site / path).read_text(encoding="utf-8")


def article(html):
    return re.search(r"<article.*?</article>", html, flags=re.DOTALL).group(0)


def visible_text(html):
    without_svg = re.sub(r"<svg.*?</svg>", " ", html, flags=re.DOTALL)
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", without_svg)))


@pytest.fixture(scope="module")
def sample_site(tmp_path_factory):
    """예시 결과 파일(GPU, CPU)로 빌드한 사이트. 팁 3의 스니펫은 측정 뒤에 바뀐 것으로 만듭니다."""
    tmp_path = tmp_path_factory.mktemp("results-hook")
    project = project_with(tmp_path, sample_document(ROOT), cpu_document(ROOT))
    changed = project / "snippets" / "tip3_avoid_syncs.py"
    changed.write_text(changed.read_text(encoding="utf-8") + "\n# 측정 뒤에 바뀐 줄\n", "utf-8")
    site = tmp_path / "site"
    result = mkdocs_build(project, site)
    assert result.returncode == 0, result.stderr
    return site


def test_page_shows_the_files_numbers_with_labels_units_and_provenance(sample_site):
    text = visible_text(page_text(sample_site, "tips/04-create-on-device.html"))
    assert "‘장치에서 바로 만들기’이(가) ‘CPU에서 만든 뒤 복사’보다 2.75배 빠릅니다" in text
    for number in ("7.37 ms", "2.68 ms", "110 µs", "36.4", "98.7", "3,210"):
        assert number in text
    assert "중앙값(텐서 1개당)" in text and "대역폭(GB/s)" in text and "천장 대비(%)" in text
    assert "3%" in text  # 98.7 / 3210 GB/s
    for fact in ("Test GPU 9000", "torch 2.99.0+cu999", "CUDA 99.9", "드라이버 999.12.34",
                 "Python 3.99.1", "2031-04-05", "abcdef0123", "avx2 · avx512f"):  # fmt: skip
        assert fact in text
    assert "다시 측정되지 않았습니다" not in text.split("CPU 4코어")[0]


def results_tables(html):
    table = r'<div class="results-table"><table>.*?</table></div>'
    return re.findall(table + r'\s*<p class="results-conclusion">', html, flags=re.DOTALL)


@pytest.mark.parametrize("page", [p.doc.removesuffix(".md") + ".html" for p in registry.load()])
def test_no_table_shows_identifiers_and_every_header_has_a_unit(sample_site, page):
    html = article(page_text(sample_site, page))
    text = visible_text(html)
    assert "test_" not in text and "[baseline]" not in text
    for table in re.findall(
        r'<div class="results-table"><table>.*?</table>', html, flags=re.DOTALL
    ):
        headers = re.findall(r"<th[^>]*>(.*?)</th>", table)
        for header in headers[2:]:  # 방식, 역할 다음 열은 모두 단위가 있습니다
            assert "(" in header or header == "IQR", header
    assert len(results_tables(html)) == html.count('<div class="results-table"><table>')


def results_text(html):
    """페이지에서 결과 블록만(코드 블록과 본문은 빼고) 읽은 글자입니다."""
    blocks = re.findall(r'<div class="results-block">.*?<p class="results-provenance">', html, re.S)
    return visible_text(" ".join(blocks))


def test_functions_and_pytest_ids_never_name_a_variant(sample_site):
    text = results_text(page_text(sample_site, "tips/03-avoid-syncs.html"))
    for identifier in ("train_reading_every_step", "item-every-step", "test_"):
        assert identifier not in text
    assert "매 스텝 .item() 으로 읽기" in text or "매 스텝 .item()으로 읽기" in text


def test_changed_code_gets_the_stale_label(sample_site):
    text = visible_text(page_text(sample_site, "tips/03-avoid-syncs.html"))
    assert "코드가 바뀐 뒤 다시 측정되지 않았습니다" in text
    assert "snippets/tip3_avoid_syncs.py (바뀜)" in text
    assert "1.60배" in text  # 예전 숫자도 숨기지 않고, 표시와 함께 보여 줍니다


def test_a_mechanism_missing_on_a_device_reads_not_applicable(sample_site):
    text = visible_text(page_text(sample_site, "tips/04-create-on-device.html"))
    cpu_part = text[text.index("CPU 4코어 (Test CPU)") :]
    assert "이 장치에서는 해당 없음" in cpu_part
    assert "차이 없음" in cpu_part  # CPU의 두 방식은 측정 오차 범위 안


def test_home_overview_reads_not_applicable_and_shows_tip7_twice(sample_site):
    home = page_text(sample_site, "index.html")
    table = re.search(r'<div class="results-table overview-table"><table>.*?</table>', home, re.S)[
        0
    ]
    rows = re.findall(r"<tr>(.*?)</tr>", table, flags=re.DOTALL)[1:]
    cpu_cells = {
        visible_text(r).split("  ")[0]: re.findall(r"<td>(.*?)</td>", r, re.S)[-1] for r in rows
    }
    for tip in ("팁 2", "팁 3", "팁 4", "팁 5"):
        cell = next(v for k, v in cpu_cells.items() if tip in k)
        assert cell.startswith("해당 없음"), (tip, cell)
    tip7 = [visible_text(r) for r in rows if "팁 7" in r]
    assert len(tip7) == 2
    assert any("고친 효과" in r for r in tip7) and any("프로파일러를 켠 비용" in r for r in tip7)
    assert "<svg" in home and "2.75배" in visible_text(home)


def test_results_page_lists_every_device_and_environment(sample_site):
    everything = visible_text(page_text(sample_site, "results.html"))
    for fact in ("Test GPU 9000", "999.12.34", "2.99.0+cu999", "Test CPU", "2031-04-05T06:07:08Z"):
        assert fact in everything
    assert "코드가 바뀐 뒤 다시 재지 않음" in everything  # 팁 3


def test_raw_results_file_is_published_and_linked(sample_site):
    html = page_text(sample_site, "tips/04-create-on-device.html")
    assert f'href="../results/{SAMPLE_NAME}"' in html
    assert json.loads(page_text(sample_site, f"results/{SAMPLE_NAME}")) == sample_document(ROOT)


def test_charts_keep_korean_as_text_and_follow_the_color_scheme(sample_site):
    html = page_text(sample_site, "tips/04-create-on-device.html")
    svg = re.search(r'<figure class="result-chart">.*?</figure>', html, flags=re.DOTALL).group(0)
    assert re.search(r"<text[^>]*>[^<]*[가-힣]", svg), "한글이 글자로 남아 있지 않습니다"
    assert "currentColor" in svg and 'role="img"' in svg and 'aria-label="팁 4' in svg
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids))


def test_gpu_only_code_is_marked_until_a_cuda_file_covers_it(sample_site, tmp_path):
    # 예시 GPU 문서의 팁 4 지문은 지금 코드와 같으므로 팁 4의 표시는 없습니다.
    tip4 = page_text(sample_site, "tips/04-create-on-device.html")
    assert "GPU에서 아직 실행해 보지 않은 코드" not in tip4
    # 팁 3은 측정 뒤 스니펫이 바뀌었으므로 표시가 남습니다(코드 블록과 결과 둘 다).
    tip3 = page_text(sample_site, "tips/03-avoid-syncs.html")
    assert tip3.count('class="gpu-unverified-mark"') >= 2
    assert "gpu-unverified" in tip3
    # CPU 결과만 있으면 모든 GPU 페이지에 표시가 붙습니다.
    cpu_only = sample_document(ROOT)
    cpu_only["environment"].update(cpu_document(ROOT)["environment"])
    site = tmp_path / "site"
    result = mkdocs_build(project_with(tmp_path, cpu_only), site)
    assert result.returncode == 0, result.stderr[-2000:]
    assert 'class="gpu-unverified-mark"' in page_text(site, "tips/04-create-on-device.html")
    home = visible_text(page_text(site, "index.html"))
    assert "GPU에서 검증한 코드: 아직 없습니다" in home


# --- 바깥에서 온 결과 파일 --------------------------------------------------------------------

PAYLOAD = (
    '<script>alert("x1")</script><img src=x onerror=alert(2)> `code` $x^2$ '
    '[link](javascript:alert(3)) --8<-- "mkdocs.yml" {: onclick=alert(4) } </table></div>'
)


def hostile_document():
    doc = sample_document(ROOT)
    for name, spec in results_file.ENVIRONMENT_FIELDS.items():
        if spec.get("pattern") == results_file._PRINTABLE and doc["environment"][name]:
            doc["environment"][name] = (PAYLOAD + name)[: spec["maxLength"]]
    for item in doc["not_measured"]:
        item["reason"] = PAYLOAD
    doc["benchmarks"][1]["extra"] = {"report_excerpt": "```\n" + PAYLOAD + "\n```\n</code></pre>"}
    return doc


def test_markup_in_every_string_field_is_shown_literally(tmp_path):
    doc = hostile_document()
    results_file.validate(doc, "hostile")
    project = project_with(tmp_path, doc)
    site = tmp_path / "site"
    result = mkdocs_build(project, site)
    assert result.returncode == 0, result.stderr[-3000:]
    for page in ("tips/04-create-on-device.html", "tips/05-ddp.html", "index.html", "results.html"):
        html = page_text(site, page)
        assert 'alert("x1")</script>' not in html and "<img src=x" not in html, page
        assert "onclick=alert" not in html.replace("onclick=alert(4) }", "") or "&lt;" in html
        assert "&lt;script&gt;" in html, page
    assert "&lt;/table&gt;&lt;/div&gt;" in page_text(site, "tips/05-ddp.html")
    assert "site_name" not in page_text(
        site, "results.html"
    )  # --8<--가 파일을 끼워 넣지 않았습니다


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda text: text.replace('"median_s": 0.00737', '"median_s": NaN'),
         "benchmarks[0].median_s: 유한한 숫자가 아닙니다"),
        (lambda text: text.replace('"median_s": 0.00737', '"median_s": Infinity'),
         "benchmarks[0].median_s: 유한한 숫자가 아닙니다"),
        (lambda text: text.replace('"median_s": 0.00737', '"median_s": 1e308'),
         "benchmarks[0].median_s: 값이 너무 큽니다"),
        (lambda text: text.replace('"variant": "create-then-copy"', '"variant": "no-such-variant"'),
         "benchmarks[0]: tip4: 변형 'no-such-variant'"),
    ],
)  # fmt: skip
def test_a_broken_results_file_is_one_korean_error_without_traceback(tmp_path, change, expected):
    project = project_with(tmp_path)
    text = json.dumps(sample_document(ROOT), ensure_ascii=False)
    (project / "results").mkdir()
    (project / "results" / SAMPLE_NAME).write_text(change(text), encoding="utf-8")
    result = mkdocs_build(project, tmp_path / "site")
    assert result.returncode != 0
    assert SAMPLE_NAME in result.stderr and expected in result.stderr
    assert "Traceback" not in result.stderr


def test_a_misnamed_or_non_utf8_file_fails_without_traceback(tmp_path):
    project = project_with(tmp_path)
    write(project / "results" / "nvidia-h200.json", cpu_document(ROOT))  # write가 폴더를 만듭니다
    result = mkdocs_build(project, tmp_path / "site-a")
    assert "nvidia-h200.json의 (파일 이름)" in result.stderr and "Traceback" not in result.stderr
    (project / "results" / "nvidia-h200.json").unlink()
    (project / "results" / SAMPLE_NAME).write_bytes(b'{"schema_version": 2, "x": "\xff"}')
    result = mkdocs_build(project, tmp_path / "site-b")
    assert "UTF-8로 읽을 수 없습니다" in result.stderr and "Traceback" not in result.stderr


def test_two_files_for_the_same_device_are_an_error(tmp_path, monkeypatch):
    from hooks import results_data

    # 파일 이름 검사가 막지 못하는 경우(예: 다른 이름 규칙으로 쓴 옛 파일)를 흉내 냅니다.
    monkeypatch.setattr(results_file, "check_identity", lambda doc, path: None)
    project = project_with(tmp_path, sample_document(ROOT))
    write(project / "results" / "old-name.json", sample_document(ROOT))
    with pytest.raises(results_file.ResultsError, match="같은 장치 이름"):
        results_data.load_devices(project)


def test_no_results_folder_builds_and_says_no_results(tmp_path):
    project = project_with(tmp_path)
    shutil.rmtree(project / "results", ignore_errors=True)
    site = tmp_path / "site"
    result = mkdocs_build(project, site)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "측정 결과 없음" in visible_text(page_text(site, "index.html"))
    assert "측정 결과 없음" in visible_text(page_text(site, "tips/01-num-workers.html"))


def test_dry_run_results_cannot_be_published(tmp_path):
    project = project_with(tmp_path)
    doc = sample_document(ROOT) | {"dry_run": True}
    write(project / "results" / "dry-run-test-gpu-9000.json", doc)
    result = mkdocs_build(project, tmp_path / "site")
    assert "dry-run-test-gpu-9000.json의 dry_run: 드라이 런 결과는" in result.stderr
