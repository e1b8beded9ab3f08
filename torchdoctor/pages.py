"""규칙이 가리키는 사이트 페이지의 제목과 주소. torch를 가져오지 않습니다.

설치한 torchdoctor에는 사이트의 레지스트리(guide/pages.toml)가 없으므로 작은 표를 여기 둡니다.
tests/test_doctor_pages.py가 이 표를 guide/registry.py의 id, 제목(heading), 문서 경로와 견주어
레지스트리가 바뀌면 실패합니다(표가 낡지 않게).
"""

from __future__ import annotations

SITE = "https://pytorch-kr.github.io/seven-tips/"  # mkdocs.yml의 site_url

# 페이지 id → (메뉴와 H1의 제목, 사이트 안의 주소)
PAGES: dict[str, tuple[str, str]] = {
    "tip1": ("팁 1: DataLoader의 워커(num_workers)", "tips/01-num-workers/"),
    "tip2": ("팁 2: 고정 메모리(pin_memory)", "tips/02-pin-memory/"),
    "tip3": ("팁 3: CPU↔GPU 동기화 피하기", "tips/03-avoid-syncs/"),
    "tip4": ("팁 4: 텐서를 장치에서 바로 만들기", "tips/04-create-on-device/"),
    "tip5": ("팁 5: DP 대신 DDP", "tips/05-ddp/"),
    "tip6": ("팁 6: 16비트 정밀도", "tips/06-16bit/"),
    "compile": ("torch.compile로 컴파일하기", "beyond/01-torch-compile/"),
    "fused-optimizers": ("융합(fused) 옵티마이저", "beyond/03-fused-optimizers/"),
    "tf32": ("TF32와 fp32_precision", "beyond/04-tf32/"),
    "sdpa": ("scaled_dot_product_attention", "beyond/05-sdpa/"),
    "channels-last": ("channels_last 메모리 형식", "beyond/06-channels-last/"),
    "cudnn-benchmark": ("cudnn.benchmark", "beyond/07-cudnn-benchmark/"),
    "no-autograd-eval": ("autograd 없이 평가하기", "beyond/10-eval-without-autograd/"),
    "dataloader-workers": (
        "persistent_workers와 prefetch_factor",
        "beyond/11-dataloader-beyond-workers/",
    ),
}


def url_path(doc: str) -> str:
    """문서 경로(tips/03-avoid-syncs.md) → 사이트 안의 주소(tips/03-avoid-syncs/)."""
    return doc.removesuffix(".md") + "/"


def title(page: str) -> str:
    return PAGES[page][0] if page in PAGES else page


def url(page: str) -> str | None:
    return SITE + PAGES[page][1] if page in PAGES else None


def label(page: str) -> str:
    """보고서에 쓰는 페이지 이름: 제목과 주소."""
    address = url(page)
    return f"{title(page)} ({address})" if address else page
