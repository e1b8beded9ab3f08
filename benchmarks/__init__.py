"""팁마다 느린 방식과 빠른 방식을 재는 벤치마크와, 그 결과 파일을 다루는 도구입니다.

- `bench_tipN_*.py`: pytest-benchmark로 `snippets/`의 함수를 그대로 잽니다(복사본을 재지 않습니다).
- `plugin.py`: `pytest --benchmark`, `--gpu`, `--publish`, `--dry-run` 옵션과 한국어 요약.
- `results_file.py`: `results/*.json`의 형식, 검증, 원자적 쓰기, 오래된 결과 찾기.
- `analysis.py`: 결과에서 속도 향상과 천장 대비 비율을 계산합니다(요약과 MkDocs 훅이 함께 씁니다).

이 패키지는 GPU 장비의 Python(프로젝트 핀과 다른 torch)에서도 돌아야 하므로 torch, pytest,
pytest-benchmark 말고는 필요로 하지 않습니다. jsonschema는 있으면 씁니다.
"""
