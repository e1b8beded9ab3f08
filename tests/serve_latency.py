"""`mkdocs serve`가 스니펫 수정을 페이지에 보여 주기까지의 시간을 잽니다(이슈 18 목표: 2초 이내).

    .venv/bin/python -m tests.serve_latency            # 5번 재고 중앙값을 출력합니다
    .venv/bin/python -m tests.serve_latency --dirty    # 바뀐 페이지만 다시 빌드(hooks/dirty.py)

`mkdocs serve`를 띄워 첫 빌드가 끝나기를 기다린 다음, 팁 4 스니펫의 이름 붙은 구역에 주석 한 줄을
더하고 페이지 주소를 0.05초마다 읽어 그 줄이 보일 때까지의 시간을 잽니다. 파일을 쓴 시각부터
브라우저가 받을 HTML이 바뀐 시각까지이므로, 파일 감시 지연과 다시 빌드하는 시간이 모두 들어갑니다.
끝나면 스니펫을 원래대로 돌려놓습니다. 다른 일이 돌지 않는 컴퓨터에서 재세요.
"""

from __future__ import annotations

import socket
import statistics
import subprocess
import sys
import time
from urllib.error import URLError
from urllib.request import urlopen

from tests.site_build import ROOT

SNIPPET = ROOT / "snippets" / "tip4_create_on_device.py"
PAGE = "seven-tips/tips/04-create-on-device.html"
MARKER = "# --8<-- [start:torch_import]\n"
ROUNDS = 5


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def page_text(url: str) -> str:
    try:
        with urlopen(url, timeout=5) as response:
            return response.read().decode("utf-8")
    except (URLError, ConnectionError, TimeoutError):
        return ""


def wait_for(url: str, text: str, limit_s: float) -> float:
    """url의 HTML에 text가 보일 때까지 기다린 초를 돌려줍니다."""
    start = time.perf_counter()
    while time.perf_counter() - start < limit_s:
        if text in page_text(url):
            return time.perf_counter() - start
        time.sleep(0.05)
    raise TimeoutError(f"{limit_s}초 안에 {url}에 {text!r}가 보이지 않았습니다")


def main() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/{PAGE}"
    original = SNIPPET.read_text(encoding="utf-8")
    command = [sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}", *sys.argv[1:]]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    server = subprocess.Popen(command, cwd=ROOT, **quiet)
    try:
        wait_for(url, "</html>", limit_s=120)
        seconds = []
        for round_number in range(ROUNDS):
            token = f"지연 측정 {round_number} {time.time_ns()}"
            SNIPPET.write_text(original.replace(MARKER, f"{MARKER}# {token}\n", 1), "utf-8")
            seconds.append(wait_for(url, token, limit_s=60))
            time.sleep(1)  # 다음 수정이 이번 빌드와 겹치지 않게 합니다.
        print("스니펫 수정 → 페이지:", ", ".join(f"{s:.2f}" for s in seconds), "초")
        mode = " ".join(["mkdocs serve", *sys.argv[1:]])
        print(f"{mode}: 중앙값 {statistics.median(seconds):.2f}초 ({ROUNDS}번)")
    finally:
        SNIPPET.write_text(original, encoding="utf-8")
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
