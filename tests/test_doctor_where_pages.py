"""torchdoctor의 작은 표와 경로: 독자의 줄 찾기(where.py), 페이지마다의 규칙(catalog.py),
페이지 표를 레지스트리에서 다시 쓰기(pages.py)."""

from __future__ import annotations

import inspect
import os
import threading

from torchdoctor import catalog, pages, where


def test_the_readers_frame_is_the_innermost_call_in_a_readers_file():
    line = inspect.currentframe().f_lineno + 1
    found = where.reader_frame()
    assert found is not None
    assert (os.path.realpath(found[0]), found[1]) == (os.path.realpath(__file__), line)


def test_a_stack_with_no_readers_file_has_no_readers_frame():
    # 스레드의 스택: threading(표준 라이브러리) → 이름이 `<`로 시작하는 코드 → reader_frame.
    found = []
    code = compile("found.append(reader_frame())", "<frozen job>", "exec")
    names = {"found": found, "reader_frame": where.reader_frame}
    thread = threading.Thread(target=exec, args=(code, names))
    thread.start()
    thread.join()
    assert found == [None]


def test_a_report_path_is_relative_under_the_current_folder_and_absolute_outside_it():
    here = os.getcwd()
    assert where.short(os.path.join(here, "sub", "train.py")) == os.path.join("sub", "train.py")
    outside = os.path.join(os.path.dirname(here), "elsewhere", "train.py")
    assert where.short(outside) == outside
    assert where.short(None) is None
    assert where.short("") == ""  # relpath가 받지 않는 빈 이름은 그대로 둡니다


def test_rules_for_a_page_are_the_rules_pointing_at_it_in_table_order():
    keys = [rule.key for rule in catalog.rules_for_page("no-autograd-eval")]
    assert keys == ["debug-tools", "eval-autograd"]
    assert [rule.key for rule in catalog.rules_for_page("tip1")] == ["data-wait"]
    assert catalog.rules_for_page("no-such-page") == []


def test_a_page_title_falls_back_to_its_id_and_a_known_page_has_title_and_address():
    assert pages.title("no-such-page") == "no-such-page"
    assert pages.title("tip3") == "팁 3: CPU↔GPU 동기화 피하기"
    assert (
        pages.label("tip3") == f"팁 3: CPU↔GPU 동기화 피하기 ({pages.SITE}tips/03-avoid-syncs.html)"
    )
    assert pages.url_path("beyond/01-torch-compile.md") == "beyond/01-torch-compile.html"


def test_rebuilding_the_page_table_from_the_registry_writes_the_committed_file(
    tmp_path, monkeypatch
):
    committed = pages.TABLE.read_bytes()
    target = tmp_path / "pages.json"
    monkeypatch.setattr(pages, "TABLE", target)
    pages.rebuild()
    assert target.read_bytes() == committed  # 표가 레지스트리보다 낡지 않았고 쓰는 모양도 같습니다
