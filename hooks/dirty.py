"""`mkdocs serve`가 스니펫 수정을 빨리 보여 주게 합니다.

첫째, 스니펫 폴더를 더 자주 살핍니다. mkdocs는 파일 변경을 0.5초마다 폴더를 훑어 찾으므로, 저장한
뒤 다시 빌드를 시작하기까지 평균 0.25초를 그냥 기다립니다. `on_serve`는 mkdocs.yml의 `watch`
폴더(snippets, hooks, guide, benchmarks)와 results/를 0.1초마다 살피게 합니다. mkdocs가 이 간격을
설정으로 내주지 않아 watchdog 관찰자의 `_timeout`을 바꿉니다(tests/test_site.py가 지켜봅니다).

둘째, `mkdocs serve --dirty`가 스니펫을 고친 페이지도 다시 빌드하게 합니다.

`--dirty`는 Markdown 파일이 빌드된 HTML보다 새로운 페이지만 다시 만듭니다. 페이지의 코드는
snippets/에서 끼워 넣으므로, 스니펫만 고치면 페이지 파일은 그대로라 옛 코드가 남습니다. 이 훅은
페이지가 끼워 넣는 파일이나 모든 페이지가 읽는 입력(결과 파일, 레지스트리, 훅, 설정)이 빌드된
HTML보다 새로우면 그 페이지를 바뀐 것으로 칩니다. 평소 빌드(`mkdocs build`, `mkdocs serve`)는
모든 페이지를 다시 만들므로 이 표시를 보지 않습니다.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.plugins import event_priority

# 사이트의 패키지는 설치하지 않으므로(pyproject.toml) 저장소 루트에서 찾습니다. MkDocs는 훅을
# 읽는 동안 hooks/만 경로에 넣었다가 되돌리므로, 아래 import가 모두 여기서 풀립니다.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hooks.snippet_check import INCLUDE

# 스니펫을 저장한 뒤 mkdocs가 알아차리기까지의 최대 시간(초). mkdocs의 기본값은 0.5초입니다.
POLL_S = 0.1

# 모든 페이지가 읽는 입력: 이것이 바뀌면 모든 페이지를 다시 만듭니다.
SHARED_INPUTS = ("results", "guide", "hooks", "overrides", "mkdocs.yml")


def newest_change(paths: list[Path]) -> float:
    """paths(폴더는 그 안의 파일 모두) 가운데 가장 최근에 고친 시각. 없으면 0."""
    times = []
    for path in paths:
        if path.is_dir():
            found = [p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
            times += [p.stat().st_mtime for p in found]
        elif path.is_file():
            times.append(path.stat().st_mtime)
    return max(times, default=0.0)


def on_files(files, config):
    root = Path(config.config_file_path).parent
    shared = newest_change([root / name for name in SHARED_INPUTS])
    for file in files.documentation_pages():
        built = Path(file.abs_dest_path)
        if not file.src_uri.endswith(".md") or not built.is_file():
            # 노트북은 내용이 바뀔 때만 다시 쓰이고, 빌드된 적 없는 페이지는 이미 바뀐 것입니다.
            continue
        targets = INCLUDE.findall(file.content_string)
        included = [root / target.partition(":")[0] for target in targets]
        if max(shared, newest_change(included)) > built.stat().st_mtime:
            file.is_modified = lambda: True
    return files


# mkdocs.yml의 watch 폴더는 on_serve 다음에 등록되므로, 그 폴더들이 이 간격으로 살펴집니다.
# results/ 훅(hooks/results.py)보다 먼저 실행되어 그 폴더도 같은 간격이 되게 합니다.
@event_priority(100)
def on_serve(server, config, builder):
    server.observer._timeout = POLL_S
    return server
