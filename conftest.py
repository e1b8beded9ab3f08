"""저장소 루트의 pytest 설정: 측정 옵션(`--benchmark`, `--gpu`, `--publish`, `--dry-run`)."""

pytest_plugins = ["benchmarks.plugin"]
