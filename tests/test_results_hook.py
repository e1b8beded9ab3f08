"""hooks/results.py와 hooks/render.py의 테스트: 결과 파일(스키마 3)의 숫자가 한국어 이름, 단위,
구간, 결론과 함께 빌드한 HTML에 나오는지, 바깥에서 온 결과 파일이 페이지에 마크업을 넣거나 빌드를
traceback으로 멈추게 할 수 없는지(P9, 이슈 21) 확인합니다.

빌드는 느리므로 한 번에 모읍니다: GPU, CPU, 마크업을 심은 GPU 세 장치의 결과로 한 번(쓸 수 없는
캐시 폴더로), 거절해야 하는 파일로 한 번. 나머지는 훅의 함수를 같은 프로세스에서 부릅니다.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
from html import unescape
from html.parser import HTMLParser

import pytest
from mkdocs.exceptions import PluginError

from guide import registry
from hooks import cache, chart_svg, overview, render
from hooks import chart_images as chart_images_hook
from hooks import results as results_hook
from hooks.results_data import gpu_verified, load_devices
from tests.results_sample import (
    CONTRADICTIONS,
    CPU_NAME,
    GPU_DEVICE,
    SAMPLE_NAME,
    cpu_document,
    full_document,
    sample_document,
    tip4_section,
    write_named,
)
from tests.site_build import ROOT, copy_project, mkdocs_build

# 이름(120자, 인쇄 가능한 ASCII)에 들어갈 수 있는 마크업과, 한국어 이유(500자)에 넣을 긴 것.
SHORT_PAYLOAD = '<script>alert("x1")</script><img src=x onerror=alert(2)>{: onmouseover=alert(4) }'
PAYLOAD = (
    SHORT_PAYLOAD + ' `code` $x^2$ [링크](javascript:alert(3)) --8<-- "mkdocs.yml" '
    "<b onmouseover=alert(5)>굵게</b> </table></div>"
)


def hostile_document():
    """검증을 통과하는 모든 글자 자리에 마크업을 넣은 세 번째 장치(GPU)."""
    doc = sample_document(ROOT)
    doc["device"].update(name=SHORT_PAYLOAD, cpu_model=SHORT_PAYLOAD, power_limit_w=None)
    for section in doc["pages"].values():
        section["measured"].update(platform=PAYLOAD[:200].encode("ascii", "ignore").decode(),
                                   driver="<b onmouseover=alert(6)>")  # fmt: skip
    doc["pages"]["tip5"]["not_measured"][0]["reason"] = PAYLOAD
    excerpt = "```\n" + PAYLOAD + "\n```\n</code></pre>"
    doc["pages"]["tip4"]["benchmarks"][1]["extra"] = {"report_excerpt": excerpt}
    return doc


def project_with(tmp_path, *docs):
    """결과 파일을 docs로 바꾼 프로젝트 복사본입니다. 파일 이름은 장치에서 정합니다."""
    project = copy_project(tmp_path / "project")
    shutil.rmtree(project / "results", ignore_errors=True)
    # 진단기 페이지의 예시 보고서는 측정 결과가 아니라 그대로 둡니다(없으면 빌드가 멈춥니다).
    shutil.copytree(ROOT / "results" / "doctor", project / "results" / "doctor")
    for doc in docs:
        write_named(project / "results", doc)
    return project


def page_text(site, path):
    return (site / path).read_text(encoding="utf-8")


def article(html):
    return re.search(r"<article.*?</article>", html, flags=re.DOTALL).group(0)


def chart_images(site, page_path):
    """페이지의 차트마다 (대체 글, 밝은 화면 SVG, 어두운 화면 SVG)."""
    html = page_text(site, page_path)
    found = []
    for figure in re.findall(r'<figure class="result-chart">.*?</figure>', html, flags=re.S):
        light, dark = re.findall(r'<img src="([^"#]+)#only-(?:light|dark)"', figure)
        alt = unescape(re.search(r'alt="([^"]*)"', figure)[1])
        folder = (site / page_path).parent
        found.append((alt, page_text(folder, light), page_text(folder, dark)))
    return found


def visible_text(html):
    without_svg = re.sub(r"<svg.*?</svg>", " ", html, flags=re.DOTALL)
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", without_svg)))


@pytest.fixture(scope="module")
def sample_site(tmp_path_factory):
    """예시 결과(GPU, CPU, 마크업을 심은 GPU)로 빌드한 사이트. 팁 3의 스니펫은 측정 뒤에 바뀐
    것으로 만들고, 차트 캐시 폴더는 쓸 수 없는 자리(파일 아래)로 둡니다."""
    tmp_path = tmp_path_factory.mktemp("results-hook")
    project = project_with(tmp_path, sample_document(ROOT), cpu_document(ROOT), hostile_document())
    changed = project / "snippets" / "tip3_avoid_syncs.py"
    changed.write_text(changed.read_text(encoding="utf-8") + "\n# 측정 뒤에 바뀐 줄\n", "utf-8")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("캐시 폴더 자리에 파일이 있습니다", encoding="utf-8")
    site = tmp_path / "site"
    result = mkdocs_build(project, site, XDG_CACHE_HOME=str(blocker / "cache"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    return site


def test_an_unwritable_cache_folder_does_not_stop_the_build(sample_site):
    # 빌드는 위 준비물에서 통과했고, 차트는 캐시 없이 그렸습니다.
    assert chart_images(sample_site, "tips/04-create-on-device.html")
    assert (sample_site.parent / "not-a-folder").is_file()


def test_page_shows_the_files_numbers_with_labels_units_intervals_and_provenance(sample_site):
    text = visible_text(page_text(sample_site, "tips/04-create-on-device.html"))
    gpu = text[text.index("Test GPU 9000 (700 W)") : text.index("CPU 4코어 (Test CPU)")]
    assert (
        "‘장치에서 바로 만들기’의 속도는 ‘CPU에서 만든 뒤 복사’의 2.75배입니다(95% 구간 "
        "2.70–2.81배, 빨라짐)" in gpu
    )
    numbers = ("7.37 ms", "2.68 ms", "1.61 ms", "36.4", "98.7", "3,210",
               "2.75배 (2.70–2.81, 빨라짐)")  # fmt: skip
    for number in numbers:
        assert number in gpu, number
    for header in (
        "중앙값(텐서 1개당)",
        "기준 대비 속도(95% 구간)",
        "대역폭(GB/s)",
        "천장 대비(%)",
    ):
        assert header in gpu, header
    assert "3%" in gpu and "라운드 17번" in gpu  # 98.7 / 3210 GB/s
    for fact in ("torch 2.99.0+cu999", "CUDA 99.9", "cuDNN 99901", "드라이버 999.12.34",
                 "Python 3.99.1", "2031-04-05", "커밋 abcdef0123", "avx2 · avx512f",
                 "GOMP_SPINCOUNT=1000"):  # fmt: skip
        assert fact in gpu, fact
    assert "다시 측정되지 않았습니다" not in gpu


def results_tables(html):
    table = r'<div class="results-table"><table>.*?</table></div>'
    return re.findall(table + r'\s*<p class="results-conclusion">', html, flags=re.DOTALL)


@pytest.mark.parametrize("page", [p.doc.removesuffix(".md") + ".html" for p in registry.load()])
def test_no_table_shows_identifiers_and_every_header_has_a_unit(sample_site, page):
    html = article(page_text(sample_site, page))
    text = results_text(html)  # 본문의 "(✓ 테스트: test_…)" 표시는 빼고 결과 블록만 봅니다
    assert "test_" not in text and "[baseline]" not in text
    for table in re.findall(r'<div class="results-table"><table>.*?</table>', html, re.DOTALL):
        headers = [unescape(h) for h in re.findall(r"<th[^>]*>(.*?)</th>", table)]
        if headers[:2] != ["방식", "역할"]:
            continue
        for header in headers[2:]:  # 방식, 역할 다음 열은 모두 단위나 구간을 밝힙니다
            assert "(" in header or header == "마지막 손실", header
    # 결과 표(제목이 있는 표)마다 결론 문장이 붙습니다. 진단 페이지의 예시 보고서는 빼고 셉니다.
    assert len(results_tables(html)) == html.count('<div class="results-table"><table>\n<caption>')


def results_text(html):
    """페이지에서 결과 블록만(코드 블록과 본문은 빼고) 읽은 글자입니다."""
    end = '<details class="results-provenance'
    blocks = re.findall(r'<div class="results-block">.*?' + end, html, re.S)
    return visible_text(" ".join(blocks))


def test_functions_and_pytest_ids_never_name_a_variant(sample_site):
    text = results_text(page_text(sample_site, "tips/03-avoid-syncs.html"))
    for identifier in ("train_reading_every_step", "item-every-step", "test_"):
        assert identifier not in text
    assert re.search(r"매 스텝 \.item\(\) ?으로 읽기", text)


def test_changed_code_gets_the_stale_label_and_keeps_the_old_numbers(sample_site):
    text = visible_text(page_text(sample_site, "tips/03-avoid-syncs.html"))
    assert "코드가 바뀐 뒤 다시 측정되지 않았습니다" in text
    assert "snippets/tip3_avoid_syncs.py (바뀜)" in text
    assert "1.60배 (1.55–1.66, 빨라짐)" in text  # 예전 숫자도 숨기지 않고, 표시와 함께 보여 줍니다


def test_a_mechanism_missing_on_a_device_reads_not_applicable(sample_site):
    text = visible_text(page_text(sample_site, "tips/04-create-on-device.html"))
    cpu = text[text.index("CPU 4코어 (Test CPU)") :]
    assert "이 장치에서는 해당 없음" in cpu
    assert "차이 없음 (0.98–1.03배)" in cpu and "빨라짐" not in cpu.split("측정:")[0]


def test_the_capstone_shows_the_previous_stage_column_and_no_slowdown_without_a_mechanism(
    sample_site,
):
    html = page_text(sample_site, "capstone/01-all-together.html")
    text = visible_text(html)
    assert "앞 단계 대비(95% 구간)" in text
    [tf32_row] = re.findall(r"<tr[^>]*>(?:(?!</tr>).)*4\. \+ TF32 행렬 곱.*?</tr>", html, re.S)
    cells = visible_text(tf32_row)
    assert cells.count("이 장치에서는 바뀌는 것 없음") == 2 and "느려짐" not in cells
    [sdpa_row] = re.findall(
        r"<tr[^>]*>(?:(?!</tr>).)*scaled_dot_product_attention.*?</tr>", html, re.S
    )
    assert "0.84배 (0.82–0.87, 느려짐)" in visible_text(sdpa_row)  # 이 단계만의 비율
    slower = re.search(r"앞 단계보다 느려진 단계: (.*?’)\.", text)[1]
    assert "TF32" not in slower
    [(_, chart, _)] = [
        c
        for c in chart_images(sample_site, "capstone/01-all-together.html")
        if c[0].startswith("단계별 학습 처리량")
    ]
    assert "4. + TF32 행렬 곱" in chart and "이 장치에서는 바뀌는 것 없음" in chart


def test_home_overview_reads_not_applicable_and_shows_tip7_twice(sample_site):
    home = page_text(sample_site, "index.html")
    table = re.search(r'<div class="results-table overview-table"><table>.*?</table>', home, re.S)
    rows = re.findall(r"<tr>(.*?)</tr>", table[0], flags=re.DOTALL)[1:]
    cpu_cells = {
        visible_text(r).split("  ")[0]: re.findall(r"<td>(.*?)</td>", r, re.S)[-1] for r in rows
    }
    for tip in ("팁 2", "팁 3", "팁 4", "팁 5"):
        cell = next(v for k, v in cpu_cells.items() if tip in k)
        assert cell.startswith("해당 없음"), (tip, cell)
    tip7 = [visible_text(r) for r in rows if "팁 7" in r]
    assert len(tip7) == 2
    assert any("고친 효과" in r for r in tip7) and any("프로파일러를 켠 비용" in r for r in tip7)
    assert chart_images(sample_site, "index.html")
    assert "2.75배 (2.70–2.81, 빨라짐)" in visible_text(home)


def test_results_page_lists_every_device_and_its_state(sample_site):
    everything = visible_text(page_text(sample_site, "results.html"))
    for fact in ("Test GPU 9000 (700 W)", "2.99.0+cu999", "CPU 4코어 (Test CPU)", "700",
                 "코드가 바뀐 뒤 다시 재지 않음 (2031-04-05)", "측정한 코드 그대로 (2031-04-05)",
                 "아직 재지 않음"):  # fmt: skip
        assert fact in everything, fact
    # 홈의 표를 되풀이하지 않습니다: 홈에 있는 배수가 여기에는 없습니다.
    assert "2.75배 (2.70–2.81, 빨라짐)" not in everything
    assert "묶음 " in everything


def test_raw_results_file_is_published_and_linked(sample_site):
    html = page_text(sample_site, "tips/04-create-on-device.html")
    assert f'href="../results/{SAMPLE_NAME}"' in html and f'href="../results/{CPU_NAME}"' in html
    assert json.loads(page_text(sample_site, f"results/{SAMPLE_NAME}")) == sample_document(ROOT)


def test_charts_are_small_images_with_korean_text_for_each_color_scheme(sample_site):
    html = page_text(sample_site, "tips/04-create-on-device.html")
    (alt, light, dark), *others = chart_images(sample_site, "tips/04-create-on-device.html")
    assert alt.startswith("팁 4") and "배" in alt and len(others) == 2  # 장치 세 개
    for svg, ink in (
        (light, chart_images_hook.INKS["light"]),
        (dark, chart_images_hook.INKS["dark"]),
    ):
        assert re.search(r"<text[^>]*>[^<]*[가-힣]", svg), "한글이 글자로 남아 있지 않습니다"
        assert ink in svg and "currentColor" not in svg
    # 차트 하나가 페이지에서는 요소 두 개입니다(SVG의 요소는 파일 안에 있습니다).
    figure = re.search(r'<figure class="result-chart">.*?</figure>', html, flags=re.S)[0]
    assert "<svg" not in figure and figure.count("<img ") == 2
    assert re.search(r'<img [^>]*width="\d+" height="\d+" loading="lazy"', figure)


def test_a_sweep_shows_its_filled_title_crossover_interval_table_and_chart(sample_site):
    html = page_text(sample_site, "tips/06-16bit.html")
    text = visible_text(html)
    assert "모델 폭에 따라: bf16 autocast 대 fp32 (2층, 배치 8×64 토큰)" in text
    assert (
        "크기에 따라: 이 장치에서는 폭(d_model) 256–1,024 사이에서 판정이 바뀌어 1,024부터 "
        "빨라집니다(재 본 범위 16–4,096)" in text
    )
    assert "1.50배 (1.46–1.54, 빨라짐)" in text and "0.60배 (0.58–0.62, 느려짐)" in text
    alts = [alt for alt, _, _ in chart_images(sample_site, "tips/06-16bit.html")]
    assert any(alt.startswith("모델 폭에 따라: bf16 autocast 대 fp32 (2층") for alt in alts)


def test_a_sweep_not_yet_measured_is_named_without_placeholders(sample_site):
    text = results_text(page_text(sample_site, "beyond/03-fused-optimizers.html"))
    assert re.search(r"텐서 크기에 따라: 아직 재지 않음\( ?--sweep ?으로 잽니다\)", text)
    assert "텐서 수에 따라: 아직 재지 않음" in text


@pytest.mark.parametrize("page", [p.doc.removesuffix(".md") + ".html" for p in registry.load()])
def test_no_placeholder_reaches_a_reader(sample_site, page):
    html = page_text(sample_site, page)
    text = visible_text(
        " ".join(re.findall(r'<div class="results-block">.*?</article>', html, re.S))
    )
    assert not re.search(r"\{\w+\}", text), re.search(r".{40}\{\w+\}.{20}", text)


RENDERED = ["index.html", "results.html", "tips/04-create-on-device.html",
            "tips/03-avoid-syncs.html", "capstone/01-all-together.html"]  # fmt: skip


@pytest.mark.parametrize("page", RENDERED)
def test_no_rendered_result_contradicts_itself(sample_site, page):
    text = visible_text(article(page_text(sample_site, page)))
    assert "배" in text and not CONTRADICTIONS.search(text), CONTRADICTIONS.search(text)


def test_gpu_only_code_is_marked_until_a_cuda_file_covers_it(sample_site):
    # 예시 GPU 문서의 팁 4 지문은 지금 코드와 같으므로 팁 4의 표시는 없습니다.
    tip4 = page_text(sample_site, "tips/04-create-on-device.html")
    assert "GPU 경로는 아직 GPU에서 돌려 보지 않았습니다(CPU에서는 테스트가 실행합니다)" not in tip4
    # 팁 3은 측정 뒤 스니펫이 바뀌었으므로 표시가 남습니다(코드 블록과 결과 둘 다).
    tip3 = page_text(sample_site, "tips/03-avoid-syncs.html")
    assert tip3.count('class="gpu-unverified-mark"') >= 2 and "gpu-unverified" in tip3


# --- 바깥에서 온 결과 파일(P9) ------------------------------------------------------------------


class EventAttributes(HTMLParser):
    """HTML의 태그를 읽어 on…으로 시작하는 속성(이벤트 처리기)을 모읍니다. 따옴표 안의 글자는
    속성 값이라 세지 않습니다(이스케이프한 페이로드는 값 안에 글자로 남아도 됩니다)."""

    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        self.found += [f"<{tag} {name}=…>" for name, _ in attrs if name.startswith("on")]


def event_attributes(html: str) -> list[str]:
    parser = EventAttributes()
    parser.feed(html)
    return parser.found


def test_markup_in_every_string_field_is_shown_literally(sample_site):
    pages = [p.doc.removesuffix(".md") + ".html" for p in registry.load()]
    for page in [*pages, "index.html", "results.html"]:
        html = page_text(sample_site, page)
        # onclick는 결과 파일 어디에도 없습니다: 나오면 템플릿이 넣은 것입니다(P9의 변형).
        assert "onclick=" not in html, page
        assert event_attributes(html) == [], page
        assert 'alert("x1")</script>' not in html and "<img src=x" not in html, page
        assert 'href="javascript:' not in html and "<b onmouseover" not in html, page
    for page in ("tips/04-create-on-device.html", "tips/05-ddp.html", "index.html", "results.html"):
        assert "&lt;script&gt;" in page_text(sample_site, page), page
    assert "&lt;/table&gt;&lt;/div&gt;" in page_text(sample_site, "tips/05-ddp.html")
    assert "site_name" not in page_text(sample_site, "tips/05-ddp.html")  # --8<--가 끼우지 않음


def test_the_markup_check_can_fail():
    assert event_attributes('<p><span class="meta-line" onclick=alert(9)>측정</span></p>')
    assert event_attributes("<svg\nonload = x></svg>")
    assert not event_attributes(
        '<div aria-label="&lt;img src=x onerror=alert(2)&gt;">&lt;b&gt;</div>'
    )


def test_a_file_that_crashed_the_old_build_stops_it_with_one_korean_error(tmp_path):
    # 이슈 21: 계산한 기준(median_s null)은 예전 빌드를 NoneType 오류로 멈췄습니다. 훅이 한국어
    # PluginError 하나로 멈추면 MkDocs는 traceback 없이 그 글만 보여 줍니다.
    doc = sample_document(ROOT)
    doc["pages"]["tip4"]["benchmarks"][0].update(computed=True, median_s=None, iqr_s=None,
                                                 rounds=0, iterations=0)  # fmt: skip
    write_named(tmp_path / "results", doc)
    config = {"config_file_path": str(tmp_path / "mkdocs.yml")}  # 훅은 설정을 이렇게 읽습니다
    with pytest.raises(PluginError) as caught:
        results_hook._devices(config)
    assert f"{SAMPLE_NAME}의 pages.tip4.benchmarks[0].computed: 계산한 값은" in str(caught.value)


# --- 같은 프로세스에서: 결과가 없을 때, CPU 결과만 있을 때, 캐시 ----------------------------


def url(doc: str) -> str:
    return doc


def no_chart(svg: str):
    raise AssertionError("결과가 없으면 차트도 없습니다")


def chart_into(site_dir):
    return lambda svg: chart_images_hook.embed(svg, site_dir, url)


def test_no_results_say_so_on_the_home_page_and_on_each_page():
    assert "측정 결과 없음" in visible_text(overview.overview([], [], url, no_chart))
    text = visible_text(render.page_results(registry.by_id("tip1"), [], False, url, no_chart))
    assert "아직 재지 않음" in text and "bench_tip1_num_workers.py --benchmark --publish" in text


def test_a_registry_page_missing_from_a_device_file_reads_not_yet_measured(tmp_path):
    write_named(tmp_path / "results", cpu_document(ROOT))
    text = visible_text(
        render.page_results(
            registry.by_id("sdpa"), load_devices(tmp_path), True, url, chart_into(tmp_path)
        )
    )
    assert "아직 재지 않음" in text
    assert (
        ".venv/bin/python -m pytest benchmarks/bench_beyond_sdpa.py --benchmark --publish" in text
    )


def test_with_only_cpu_results_every_gpu_page_is_marked(tmp_path):
    write_named(tmp_path / "results", cpu_document(ROOT))
    devices = load_devices(tmp_path)
    page = registry.by_id("tip4")
    assert not gpu_verified(devices, page)
    markdown = '```python\n--8<-- "snippets/tip4_create_on_device.py:fast"\n```\n'
    assert results_hook.GPU_MARK in results_hook.mark_gpu_blocks(markdown, page)
    other = '```python\n--8<-- "snippets/tip4_create_on_device.py:article"\n```\n'
    assert results_hook.GPU_MARK not in results_hook.mark_gpu_blocks(other, page)
    home = visible_text(overview.overview(devices, [], url, chart_into(tmp_path)))
    assert "GPU에서 검증한 코드: 아직 없습니다" in home and "아직 GPU 결과가 없습니다" in home


def test_a_gpu_file_with_the_current_code_verifies_the_page(tmp_path):
    write_named(tmp_path / "results", sample_document(ROOT))
    devices = load_devices(tmp_path)
    assert gpu_verified(devices, registry.by_id("tip4"))
    old = copy.deepcopy(sample_document(ROOT))
    old["pages"]["tip4"] = tip4_section(ROOT)
    old["pages"]["tip4"]["measured"]["snippet_sha256"] = "0" * 64
    write_named(tmp_path / "other" / "results", old)
    assert not gpu_verified(load_devices(tmp_path / "other"), registry.by_id("tip4"))


def test_the_peaks_table_highlights_the_measured_gpu(tmp_path):
    h200 = sample_document(ROOT)
    h200["device"] = GPU_DEVICE | {"name": "NVIDIA H200", "power_limit_w": 600.0}
    write_named(tmp_path / "results", h200)
    html = overview.peaks_table(load_devices(tmp_path))
    [highlighted] = re.findall(r'<tr class="role-recommended"><td>(.*?)</td>', html)
    assert unescape(highlighted) == "H200 NVL (≤ 600 W)"


def test_values_at_the_validators_bounds_render_every_page(tmp_path, monkeypatch):
    """이슈 21: 검증기가 받은 값(가장 짧은 1 ns, 10⁶배, 크기 10¹⁵)으로 빌드가 멈추면 안 됩니다.
    빌드의 그리기 함수를 모든 페이지에 부르고, 나온 글에 모순과 `{자리}`가 없는지 봅니다."""
    monkeypatch.setattr(chart_svg, "CACHE", tmp_path / "cache")
    doc = full_document(ROOT, GPU_DEVICE, "extreme")
    write_named(tmp_path / "results", doc)
    devices = load_devices(tmp_path)
    chart = chart_into(tmp_path / "site")
    html = [render.page_results(page, devices, True, url, chart) for page in registry.load()]
    html += [overview.overview(devices, [], url, chart), overview.all_results(devices, url)]
    text = visible_text(" ".join(html))
    assert "1,000,000" in text and "느려짐" in text and "#only-dark" in "".join(html)
    assert list((tmp_path / "site" / "assets" / "charts").glob("*-dark.svg"))
    assert not CONTRADICTIONS.search(text) and not re.search(r"\{\w+\}", text)


def test_the_chart_cache_lives_outside_the_repository():
    # git이 나르는 파일(.cache/charts/*.svg)이 캐시로 읽혀 페이지에 들어가면 안 됩니다(이슈 21).
    assert not cache.ROOT.resolve().is_relative_to(ROOT.resolve())
    assert chart_svg.CACHE.is_relative_to(cache.ROOT)


def test_a_read_only_or_full_cache_is_skipped_quietly(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    cache.write(blocker / "charts" / "a.svg", "<svg/>")  # 폴더를 만들 수 없음: 조용히 넘어갑니다
    assert cache.read(blocker / "charts" / "a.svg") is None

    def full(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(type(tmp_path), "write_text", full)
    cache.write(tmp_path / "charts" / "b.svg", "<svg/>")
    assert cache.read(tmp_path / "charts" / "b.svg") is None
    monkeypatch.undo()
    (tmp_path / "bad.svg").write_bytes(b"\xff\xfe")
    assert cache.read(tmp_path / "bad.svg") is None  # 읽을 수 없는 캐시는 없는 것으로 봅니다
    assert cache.read(tmp_path) is None
