"""증거 → 규칙 → 고친 것 재기 → 보고서. 작업이 끝난 뒤(훅을 모두 뗀 뒤) 한 번 돕니다."""

from __future__ import annotations

from torchdoctor import fixes, report, rules


def notes_for(doctor, ev: dict) -> list[str]:
    notes = []
    if not ev["steps_seen"]:
        notes.append(
            "옵티마이저 스텝을 하나도 보지 못했습니다. torchdoctor는"
            " `optimizer.step()`(torch.optim의"
            " 옵티마이저)으로 스텝을 나눕니다. 학습 루프가 이 스크립트 안에서 도는지 확인하세요."
        )
    elif not ev["step_s"]:
        # 탐침: 호출, 연산, CUDA면 프로파일러 한 스텝(Doctor.probe_step_count와 같습니다)
        probes = doctor.probe_steps + 1 + (1 if ev.get("device") == "cuda" else 0)
        wanted = doctor.skip_steps + probes + 2
        notes.append(
            f"작업이 시간 창에 이르지 못했습니다(스텝 {ev['steps_seen']}개를 봤고, 시간 창은 워밍업"
            f" {doctor.skip_steps}개와 탐침 {probes}개 뒤에 시작합니다)."
            f" 스텝을 {wanted}개 이상 돌리거나 `--skip-steps`를 줄이세요."
        )
    elif len(ev["step_s"]) < doctor.steps:
        notes.append(f"시간 창을 스텝 {len(ev['step_s'])}개만 쟀습니다(바란 것 {doctor.steps}개).")
    if ev["closure_steps"]:
        notes.append(
            "옵티마이저에 클로저를 넘기는 작업(Lightning 등)이라 옵티마이저 시간만 떼어 재지"
            " 못했습니다."
        )
    return notes


def attach(item: dict, result: dict) -> None:
    """잰 결과는 measured({ratio, low, high, …})에, 재지 못한 이유는 fix_note에."""
    if "ratio" in result:
        item["measured"] = result
    else:
        item["fix_note"] = result["skipped"]


def diagnose(doctor) -> report.Report:
    ev = doctor.evidence()
    checks = rules.evaluate(ev)
    finished = doctor.outcome in ("finished", "exited")
    for check in checks.values():
        for item in check.findings:
            if item["fix"] == "loader" and doctor.measure_fixes and finished:
                try:
                    result = fixes.measure_loader(
                        doctor.primary_loader_recipe(), ev, doctor.fix_budget_s
                    )
                except Exception as error:  # 재기가 실패해도 보고서는 씁니다
                    result = {"skipped": f"재다가 실패했습니다: {type(error).__name__}: {error}"}
                attach(item, result)
            elif item["fix"] == "loader":
                why = "작업이 끝까지 돌지 않아" if not finished else "--no-fix를 주어"
                attach(item, {"skipped": f"{why} 재지 않았습니다"})
    doctor.release()
    return report.Report(report.build(ev, checks, notes_for(doctor, ev)))
