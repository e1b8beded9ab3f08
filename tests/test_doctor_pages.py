"""torchdoctor/pages.py의 표가 사이트의 레지스트리와 같은지: 페이지의 제목이나 주소가 바뀌면
여기서 실패합니다(설치한 진단기는 레지스트리를 읽지 못하므로 표를 따로 둡니다)."""

from __future__ import annotations

import re
from pathlib import Path

from guide import registry
from torchdoctor import catalog, pages, report

ROOT = Path(__file__).resolve().parents[1]


def test_every_rule_points_to_a_page_in_the_table():
    assert {rule.page for rule in catalog.RULES} <= set(pages.table())


def test_the_table_matches_the_registry_id_title_and_doc_path():
    by_id = {page.id: page for page in registry.load()}
    for page_id, (title, path) in pages.table().items():
        assert page_id in by_id, page_id
        assert title == by_id[page_id].heading, page_id
        assert path == pages.url_path(by_id[page_id].doc), page_id
    wanted = {rule.page for rule in catalog.RULES}
    assert set(pages.table()) == wanted  # 규칙이 가리키지 않는 페이지는 담지 않습니다


def test_the_site_address_is_where_the_repository_deploys_and_pages_are_html_files():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    owner, name = re.search(r'repository: !ENV \[REPOSITORY_URL, "https://github.com/(.+)/(.+)"\]',
                            config).groups()  # fmt: skip
    assert pages.SITE == f"https://{owner}.github.io/{name}/"
    assert "  - offline\n" in config  # 그래서 주소가 .html 파일입니다
    assert pages.url("tip3") == pages.SITE + "tips/03-avoid-syncs.html"


def test_the_text_report_names_each_finding_by_title_and_address():
    item = {
        "rule": "host-sync",
        "page": "tip3",
        "title": "스텝마다 호스트 동기화",
        "file": "train.py",
        "line": 7,
        "share": None,
        "measured": None,
        "message": "…",
    }
    data = {
        "steps": {"seen": 3, "skipped": 1, "probe": 1, "window": 1, "window_wanted": 1},
        "findings": [item],
        "fine": [{"rule": "attention", "page": "sdpa", "title": "t", "note": "n"}],
        "not_checked": [],
    }
    text = report.text(data)
    assert (
        "팁 3: CPU↔GPU 동기화 피하기 (https://pytorch-kr.github.io/seven-tips/tips/03-avoid-syncs.html)"
        in text
    )
    assert "scaled_dot_product_attention" in text


def test_an_unknown_page_falls_back_to_its_id():
    assert pages.label("no-such-page") == "no-such-page"
    assert pages.url("no-such-page") is None


def test_a_measured_loader_fix_says_its_one_time_start_cost_and_payback():
    measured = {"what": "워커", "text": "1.5배", "start_s": 0.2, "payback_batches": 12}
    assert "배치 12개면 되찾습니다" in report.start_cost_text(measured)
    assert "되찾지 못합니다" in report.start_cost_text(dict(measured, payback_batches=None))
