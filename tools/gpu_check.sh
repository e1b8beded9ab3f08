#!/usr/bin/env bash
# torchdoctor의 CUDA 경로(이벤트로 잰 연산 시간, CUDA 텐서의 동기화 호출, TF32·cudnn·channels_last
# 규칙)를 작은 작업 하나로 GPU에서 돌리고 보고서를 JSON으로 씁니다. 이어서 tools/doctor_gpu_paths.py가
# torchdoctor/gpu.py의 경로(이벤트로 잰 스텝·데이터 시간, set_sync_debug_mode 경고, 고정되지 않은
# 복사, GPU가 쉰 몫, 커널 크기)를 따로 돌리고, 진단기 전체(torchdoctor.watch)를 DataLoader 루프에
# 돌려 증거에 gpu_step_s, 심어 둔 `.item()` 줄의 cuda_syncs, 고정되지 않은 복사가 있는 profile이
# 있는지 확인해 gpu-paths.json에 씁니다.
#   tools/gpu_check.sh [결과 폴더]    (기본 results/doctor)
# GPU가 없으면 한국어로 그렇게 말하고 0이 아닌 코드로 끝납니다(GPU 러너에서 GPU가 없으면 오류입니다).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python}
out=${1:-results/doctor}
if ! "$python" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "torchdoctor GPU 점검: 이 기계에서는 CUDA GPU를 찾지 못했습니다. CUDA 경로는 GPU가 있는 기계에서만 돌립니다." >&2
  exit 1
fi
mkdir -p "$out"
"$python" -m torchdoctor --skip-steps 3 --steps 10 --json "$out/gpu-check.json" tools/doctor_gpu_job.py
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" "$python" tools/doctor_gpu_paths.py "$out/gpu-paths.json"
echo "torchdoctor GPU 점검: $out/gpu-check.json, $out/gpu-paths.json 에 썼습니다." >&2
