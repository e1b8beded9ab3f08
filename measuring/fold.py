"""실행 파일 여러 개를 한 파일로 접기: `python -m measuring.fold 출력.json 실행.json…`

`pytest benchmarks --benchmark`는 실행마다 test-output/results/<장치>.json을 씁니다. 그런 실행들을
오래된 것부터 차례로 발행한 것과 같은 파일을 만듭니다: 페이지마다 가장 새 실행의 부분에, 같은 코드로
잰 예전 실행의 중앙값 비율을 이어 둡니다(measuring/history.py). 두 묶음의 실행을 따로 접어
`python -m report.compare`로 견주면, 실행 사이의 구간으로 낸 판정이 다시 재도 같은지 봅니다.
실패나 시간 한도로 덜 잰 실행은 발행이 거절했을 것이므로 넣지 마십시오(파일만으로는 알 수 없습니다).
"""

from __future__ import annotations

import sys
from pathlib import Path

from guide import registry
from measuring import session
from results_format import results_file
from results_format.validation import ResultsError


def _newest_date(doc: dict) -> str:
    return max(section["measured"]["date"] for section in doc["pages"].values())


def fold(docs: list[dict]) -> dict:
    """실행 문서들(순서는 상관없음, 날짜순으로 접습니다)을 한 문서로 접습니다."""
    if not docs:
        raise ValueError("접을 실행이 없습니다")
    ordered = sorted(docs, key=_newest_date)
    order = [page.id for page in registry.load()]
    folded = ordered[0]
    for doc in ordered[1:]:
        if doc["device"] != folded["device"] or doc["dry_run"] or folded["dry_run"]:
            raise ValueError(
                "장치나 torch 판이 다르거나 드라이 런인 실행은 한 파일에 접지 않습니다"
            )
        pages = dict(folded["pages"])
        for page_id, section in doc["pages"].items():
            # 실행 파일만으로는 --sweep이었는지 모르므로, 이번에 재지 않은 스윕은 예전 것을 둡니다.
            pages[page_id] = session.replace_section(
                pages.get(page_id), section, keep_old_sweeps=True
            )
        folded = doc | {"pages": {key: pages[key] for key in sorted(pages, key=order.index)}}
    return folded


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("쓰는 법: python -m measuring.fold 출력.json 실행.json…", file=sys.stderr)
        return 2
    out, *inputs = (Path(arg) for arg in argv)
    try:
        doc = fold([results_file.load(path, check_name=False) for path in inputs])
        results_file.write_atomically(out, doc)
    except (ResultsError, ValueError, OSError) as error:
        print(f"접지 못했습니다: {error}", file=sys.stderr)
        return 1
    print(f"{len(inputs)}개 실행을 접어 {out}에 썼습니다.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
