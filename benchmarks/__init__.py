"""벤치마크 정의: 측정하는 페이지마다 `bench_<페이지>.py` 하나(무엇을 어떤 크기로 재는지)입니다.

재는 방법(섞인 라운드, 구간, 발행)은 measuring/, 결과 파일의 형식은 results_format/, 보여 줄
숫자와 문장은 report/, 구간 통계와 판정 규칙은 torchdoctor/stats.py에 있습니다.
"""
