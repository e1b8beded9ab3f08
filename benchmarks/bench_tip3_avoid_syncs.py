"""팁 3 벤치마크: 매 스텝 `.item()`으로 손실 읽기 vs 장치에 모아 두었다가 끝에 한 번 읽기.

호출 한 번이 스니펫의 학습 루프 하나(배치 `steps`개)를 돌고, 스텝/초로 비교합니다. 천장은 손실을
전혀 읽지 않는 같은 루프(`train_without_reading`)입니다. CUDA에서는 스니펫의 `count_syncs`로 센
스텝당 동기화 횟수도 함께 적습니다. 세는 일은 `set_sync_debug_mode`가 경고를 모으느라 느려지므로
시간을 재는 구간 밖에서, 새로 만든 같은 크기의 설정으로 한 번만 합니다.

CPU에는 기다릴 장치가 없으므로 `.item()`이 거의 공짜입니다. 그래도 재서 "차이가 없다"는 결과를
그대로 보여 줍니다. 스텝당 동기화 횟수는 CUDA에서만 적습니다(CPU에서 지어내지 않습니다).

호출마다 모델이 학습되어 가중치가 바뀌지만, 스텝마다 하는 계산의 양은 같으므로 시간 비교에는
문제가 없습니다.
"""

import pytest

from snippets import tip3_avoid_syncs as tip3

PAGE = "tip3"

# GPU에서는 스텝 하나의 GPU 일(대략 4 GFLOP)이 커널을 넣는 CPU 시간과 비슷한 크기가 되게 잡습니다.
# 그래야 CPU가 GPU보다 앞서 달리는 효과와, 동기화가 그것을 끊는 비용이 함께 드러납니다.
SIZES = {
    "cuda": {"steps": 50, "batch_size": 4096, "features": 1024},
    "cpu": {"steps": 20, "batch_size": 128, "features": 128},
    "quick": {"steps": 3, "batch_size": 4, "features": 8},
}
# 변형 → (역할, 학습 루프). 천장도 같은 묶음에 둡니다: 호출 한 번의 일이 같은 루프입니다.
VARIANTS = {
    "item-every-step": ("baseline", tip3.train_reading_every_step),
    "read-once": ("recommended", tip3.train_reading_rarely),
    "never-read": ("ceiling", tip3.train_without_reading),
}


@pytest.mark.measures("loop")
def test_training_loop(compare, bench_device, size_key):
    size = SIZES[size_key]
    group = compare("loop", params={"steps": size["steps"], "batch_size": size["batch_size"]},
                    per_call={"steps": size["steps"]})  # fmt: skip
    for variant, (role, train_fn) in VARIANTS.items():
        metrics = {}
        if bench_device.type == "cuda":
            # 시간을 재기 전에, 같은 크기의 새 설정으로 동기화 횟수를 셉니다.
            syncs = tip3.count_syncs(train_fn, *tip3.make_training_setup(bench_device, **size))
            metrics = {"syncs_per_step": syncs / size["steps"]}
        setup = tip3.make_training_setup(bench_device, **size)
        group.add(variant, train_fn, *setup, role=role, metrics=metrics,
                  ceiling=None if role == "ceiling" else "never-read")  # fmt: skip
    losses = group.run()
    assert losses["never-read"] is None
    for variant in ("item-every-step", "read-once"):
        assert len(losses[variant]) == size["steps"] and isinstance(losses[variant][0], float)
