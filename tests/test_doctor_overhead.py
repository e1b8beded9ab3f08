"""snippets/doctor_overhead.py: 진단기의 시간 창 안에서 돈 학습 스텝이 진단기 없이 돈 것과 같은 값을
내는지, 그리고 그 창이 정말로 스텝을 쟀는지(재지 않는 창의 비용은 뜻이 없습니다)."""

from __future__ import annotations

import torch

from snippets import doctor_overhead as overhead
from torchdoctor import doctor as doctor_module


def test_the_step_inside_the_timed_window_computes_the_same_losses_and_weights():
    plain = overhead.make_setup("cpu", layers=2, width=16, batch=4, steps=5)
    windowed = overhead.make_setup("cpu", layers=2, width=16, batch=4, steps=5)
    expected = overhead.train_steps(*plain)
    got = overhead.train_steps_in_timed_window(*windowed)
    assert torch.equal(expected, got)
    for a, b in zip(plain[0].parameters(), windowed[0].parameters(), strict=True):
        assert torch.equal(a, b)


def test_the_window_times_every_step_after_the_first_and_waits_for_batches(monkeypatch):
    opened = []
    original = overhead.open_timed_window

    def remember():
        opened.append(original())
        return opened[-1]

    monkeypatch.setattr(overhead, "open_timed_window", remember)
    overhead.train_steps_in_timed_window(*overhead.make_setup("cpu", width=8, batch=2, steps=6))
    (doctor,) = opened
    assert len(doctor.step_s) == 5 and len(doctor.data_s) == 5  # 첫 스텝 앞에는 경계가 없습니다
    assert doctor.calls is None and doctor.ops is None  # 탐침은 창 안에서 돌지 않습니다
    assert doctor.phase == "stopped"


def test_the_window_leaves_no_hook_behind():
    doctor = doctor_module.Doctor(measure_fixes=False).start_timed()
    doctor.stop()
    model, optimizer, loader = overhead.make_setup("cpu", width=8, batch=2, steps=3)
    overhead.train_steps(model, optimizer, loader)
    assert doctor.step_s == []
