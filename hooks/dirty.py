"""`mkdocs serve --dirty`가 스니펫을 고친 페이지도 다시 빌드하게 합니다.

`--dirty`는 Markdown 파일이 빌드된 HTML보다 새로운 페이지만 다시 만듭니다. 페이지의 코드는
snippets/에서 끼워 넣으므로, 스니펫만 고치면 페이지 파일은 그대로라 옛 코드가 남습니다. 이 훅은
페이지가 끼워 넣는 파일이나 모든 페이지가 읽는 입력(결과 파일, 레지스트리, 훅, 설정)이 빌드된
HTML보다 새로우면 그 페이지를 바뀐 것으로 칩니다. 평소 빌드(`mkdocs build`, `mkdocs serve`)는
모든 페이지를 다시 만들므로 이 표시를 보지 않습니다.
"""

from __future__ import annotations

from pathlib import Path

from hooks.snippet_check import INCLUDE

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
