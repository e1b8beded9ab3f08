"""결과를 보여 줄 숫자와 말: 분석, 교차점, 결론 문장, 서식, 요약, 두 결과 파일의 비교.

torch도 pytest도 필요 없습니다. 구간 통계와 판정 규칙은 torchdoctor/stats.py 한 곳에 있고,
사이트와 torchdoctor가 함께 씁니다.
"""
