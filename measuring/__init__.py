"""재는 pytest 플러그인: `pytest --benchmark`, 섞인 라운드, 메모리와 천장, 결과 파일 쓰기.

torch, pytest, pytest-benchmark가 필요합니다. 사이트 빌드는 이 패키지를 가져오지 않습니다.
"""
