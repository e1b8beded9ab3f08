"""torchdoctor: 내 학습 스크립트를 그대로 돌려, 어느 팁이 내 작업에서 값을 하는지 재어 알려 줍니다.

    python -m torchdoctor train.py --epochs 1

    with torchdoctor.watch() as doctor:   # 노트북, trainer.fit 둘레
        trainer.fit(model, loader)
    print(doctor.report())

이 파일은 torch를 가져오지 않습니다: 사이트 빌드가 torchdoctor.stats와 torchdoctor.words를
쓰기 때문입니다. watch, Doctor, measure_input_bound는 처음 쓸 때 가져옵니다. 설명은 사이트의
"내 학습 진단하기" 페이지에 있습니다.
"""

__all__ = ["Doctor", "measure_input_bound", "watch"]

_LAZY = {
    "watch": "torchdoctor.doctor",
    "Doctor": "torchdoctor.doctor",
    "measure_input_bound": "torchdoctor.fixes",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'torchdoctor' has no attribute {name!r}")
