"""먼저 할 일 페이지의 Hugging Face Trainer 표: 표의 TrainingArguments 필드가 밝힌 버전에 있는지.

transformers는 이 사이트의 의존성이 아닙니다. 그래서 필드 목록은 그 버전의 휠에서 한 번 읽어
guide/transformers_trainer.toml에 두고, 표를 그 목록과 비교합니다. transformers가 설치된 환경에서는
실제 TrainingArguments와도 비교합니다(그 환경의 버전이 다르면 그 비교는 건너뜁니다).
"""

import dataclasses
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = tomllib.loads((ROOT / "guide" / "transformers_trainer.toml").read_text(encoding="utf-8"))
PAGE = ROOT / "docs" / "checklist.md"


def table_fields(text):
    """표의 둘째 열에서 `이름` 또는 `이름=값`을 읽습니다."""
    section = text.split("{ #hf-trainer }", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("| [")]
    found = []
    for row in rows:
        cell = row.split("|")[2]
        found += re.findall(r"`([a-z0-9_]+)(?:=[^`]*)?`", cell)
    return found


def table_optim_values(text):
    return re.findall(r'`optim="([a-z0-9_]+)"`', text.split("{ #hf-trainer }", 1)[1])


def problems(text, data):
    names = table_fields(text)
    found = []
    if not names:
        found.append("표에서 필드를 찾지 못했습니다")
    found += [f"{name}: transformers {data['version']}에 없는 필드" for name in names
              if name not in data["fields"]]  # fmt: skip
    found += [f"optim={value}: 목록에 없는 값" for value in table_optim_values(text)
              if value not in data["optim_values"]]  # fmt: skip
    if f"transformers {data['version']}" not in text:
        found.append(f"페이지가 밝힌 버전이 목록의 버전({data['version']})과 다릅니다")
    return found


def test_every_field_in_the_table_exists_in_the_stated_version():
    assert problems(PAGE.read_text(encoding="utf-8"), DATA) == []
    # 이슈가 요구한 필드는 모두 표에 있습니다.
    required = {"bf16", "tf32", "optim", "torch_compile", "gradient_checkpointing",
                "dataloader_num_workers", "dataloader_pin_memory",
                "dataloader_persistent_workers", "gradient_accumulation_steps",
                "average_tokens_across_devices"}  # fmt: skip
    assert required <= set(table_fields(PAGE.read_text(encoding="utf-8")))


def test_the_check_fails_on_a_misspelt_field_or_another_version():
    text = PAGE.read_text(encoding="utf-8")
    assert problems(text.replace("`dataloader_pin_memory`", "`dataloader_pin_memroy`"), DATA)
    assert problems(text.replace('optim="adamw_torch_fused"', 'optim="adamw_fused"'), DATA)
    assert problems(text.replace(f"transformers {DATA['version']}", "transformers 4.0.0"), DATA)


def test_table_fields_exist_in_the_installed_transformers():
    transformers = pytest.importorskip(
        "transformers", reason="transformers가 설치되어 있지 않아 휠에서 읽은 목록만 확인합니다"
    )
    if transformers.__version__ != DATA["version"]:
        pytest.skip(f"설치된 transformers {transformers.__version__}는 표가 밝힌 버전이 아닙니다")
    names = {f.name for f in dataclasses.fields(transformers.TrainingArguments)}
    assert set(DATA["fields"]) <= names
