"""저장소 루트의 pytest 설정: 측정 옵션(`--benchmark`, `--gpu`, `--publish`, `--dry-run`)."""

import os

# torch를 가져오기 전에 정해야 합니다: libgomp(리눅스 torch의 OpenMP)는 불러올 때 한 번만 읽습니다.
# 기본값(30만 번 돌며 기다리기)은 다른 프로그램이 코어 하나를 쓰면 스레드끼리 그 코어를 빼앗아
# 스텝 시간이 몇 배씩 흔들립니다. libgomp는 스레드가 코어보다 많을 때만 스스로 100–1000번으로
# 줄입니다.
# 직접 정한 값이 있으면 그 값을 씁니다. 설명: docs/method.md#shared-cores
os.environ.setdefault("GOMP_SPINCOUNT", "1000")

pytest_plugins = ["measuring.plugin"]
