"""어느 장치가 어디에 보이는지(hooks/results_data.py): 홈은 GPU와 기준 CPU 하나, 페이지는 그
페이지를 잰 장치, 기준 CPU가 보이는 페이지의 다른 CPU는 접어 둡니다(이슈 40, 41)."""

from __future__ import annotations

import copy
from html.parser import HTMLParser

from guide import registry
from hooks import render, results_data
from hooks.results_data import folded_devices, home_devices, load_devices, page_devices
from tests.results_sample import (
    CPU_DEVICE,
    cpu_document,
    document,
    sample_document,
    tip4_section,
    write_named,
)
from tests.site_build import ROOT

OTHER_CPU = CPU_DEVICE | {"name": "Other CPU", "cpu_model": "Other CPU"}


def other_cpu_document(pages: dict) -> dict:
    return document(OTHER_CPU, pages)


def devices_in(tmp_path, *docs, reference: str, monkeypatch):
    """docs를 결과 파일로 쓰고 이름이 reference인 CPU를 기준 CPU로 둔 장치들(이름 → 장치)."""
    for doc in docs:
        write_named(tmp_path / "results", copy.deepcopy(doc))
    devices = load_devices(tmp_path)
    slug = next(d.slug for d in devices if d.doc["device"]["name"] == reference)
    monkeypatch.setattr(results_data, "REFERENCE_CPU", slug)
    return {d.doc["device"]["name"]: d for d in devices}


def test_home_shows_every_gpu_and_only_the_reference_cpu(tmp_path, monkeypatch):
    other = other_cpu_document({"tip4": tip4_section(ROOT)})
    found = devices_in(
        tmp_path, sample_document(ROOT), cpu_document(ROOT), other,
        reference="Test CPU", monkeypatch=monkeypatch,
    )  # fmt: skip
    home = home_devices(list(found.values()))
    assert [d.doc["device"]["name"] for d in home] == ["Test GPU 9000", "Test CPU"]


def test_without_the_reference_file_the_home_takes_the_cpu_that_measured_most_pages(tmp_path):
    other = other_cpu_document({"tip4": tip4_section(ROOT)})
    for doc in (cpu_document(ROOT), other):
        write_named(tmp_path / "results", doc)
    home = home_devices(load_devices(tmp_path))
    assert [d.doc["device"]["name"] for d in home] == ["Test CPU"]  # 4페이지 대 1페이지


def test_a_page_shows_only_the_devices_that_measured_it(tmp_path, monkeypatch):
    other = other_cpu_document({"tip4": tip4_section(ROOT)})
    found = devices_in(
        tmp_path, cpu_document(ROOT), other, reference="Test CPU", monkeypatch=monkeypatch
    )
    tip6 = page_devices(list(found.values()), registry.by_id("tip6"))
    assert [d.doc["device"]["name"] for d in tip6] == ["Test CPU"]


def test_other_cpus_are_folded_only_where_the_reference_cpu_is_shown(tmp_path, monkeypatch):
    other = other_cpu_document({"tip4": tip4_section(ROOT)})
    found = devices_in(
        tmp_path, sample_document(ROOT), cpu_document(ROOT), other,
        reference="Test CPU", monkeypatch=monkeypatch,
    )  # fmt: skip
    devices = list(found.values())
    shown = page_devices(devices, registry.by_id("tip4"))
    assert folded_devices(shown, devices) == {found["Other CPU"].slug}  # GPU는 접지 않습니다
    # 기준 CPU가 재지 않은 페이지라면 다른 CPU가 그 페이지의 유일한 CPU라 펼쳐 둡니다.
    assert folded_devices([found["Other CPU"]], devices) == set()


class Details(HTMLParser):
    """<details class="... other-cpu"> 안에 있는 h3의 id들."""

    def __init__(self):
        super().__init__()
        self.depth, self.inside, self.outside = 0, [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "details" and "other-cpu" in (attrs.get("class") or ""):
            self.depth += 1
        elif tag == "h3":
            (self.inside if self.depth else self.outside).append(attrs.get("id"))

    def handle_endtag(self, tag):
        if tag == "details" and self.depth:
            self.depth -= 1


def test_the_folded_cpu_renders_inside_a_details_block(tmp_path, monkeypatch):
    other = other_cpu_document({"tip4": tip4_section(ROOT)})
    found = devices_in(
        tmp_path, cpu_document(ROOT), other, reference="Test CPU", monkeypatch=monkeypatch
    )
    devices = list(found.values())
    page = registry.by_id("tip4")
    shown = page_devices(devices, page)
    html = render.page_results(
        page, shown, False, lambda doc: doc, lambda svg: svg, folded_devices(shown, devices)
    )
    parsed = Details()
    parsed.feed(html)
    assert parsed.inside == [f"results-{found['Other CPU'].slug}"]
    assert parsed.outside == [f"results-{found['Test CPU'].slug}"]
    assert "다른 CPU에서 잰 결과: " in html
