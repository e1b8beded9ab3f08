"""snippets/beyond_compile.py의 테스트.

그래프 추적과 개수 세기는 코드를 만들지 않는 backend("eager", "aot_eager")로 확인합니다. Inductor로
실제로 컴파일하는 것은 main("cpu")를 차가운 캐시와 따뜻한 캐시로 한 번씩 돌리는 테스트 하나뿐입니다
(2코어에서 차가운 컴파일이 수십 초 걸립니다).
"""

import lightning as L
import pytest
import torch
from torch._dynamo.utils import counters
from torch._dynamo.variables.tensor import TensorVariable
from torch.utils.data import DataLoader

from snippets import beyond_compile as bc
from tests.site_build import page_quotes

# (batch_size, d_model, num_layers)
SHAPES = [(8, 16, 1), (5, 32, 2), (12, 24, 3)]


def grads(model):
    return [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("shape", SHAPES)
def test_compiled_step_matches_eager_step(shape):
    batch_size, d_model, num_layers = shape
    eager, x, y = bc.make_inputs("cpu", batch_size, d_model, num_layers, seed=1)
    base, _, _ = bc.make_inputs("cpu", batch_size, d_model, num_layers, seed=1)
    torch._dynamo.reset()
    # aot_eager: Dynamo가 잡은 그래프와 AOTAutograd의 역전파 그래프를 그대로 실행합니다.
    compiled = bc.compile_model(base, backend="aot_eager")
    loss_eager = bc.train_step(eager, x, y)
    loss_compiled = bc.train_step(compiled, x, y)
    torch.testing.assert_close(loss_compiled, loss_eager, rtol=1e-5, atol=1e-6)
    for g_compiled, g_eager in zip(grads(base), grads(eager), strict=True):
        torch.testing.assert_close(g_compiled, g_eager, rtol=1e-5, atol=1e-6)
    # 컴파일한 모델은 원래 모델의 가중치를 함께 쓰므로 변화도가 원래 모델에 남습니다.
    assert all(p.grad is not None for p in base.parameters())


@pytest.mark.parametrize("shape", SHAPES)
def test_item_breaks_the_graph_and_a_tensor_does_not(shape):
    batch_size, d_model, num_layers = shape
    _, x, _ = bc.make_inputs("cpu", batch_size, d_model, num_layers)
    broken = bc.LoggingMLP(d_model, num_layers)
    graphs, breaks, reasons = bc.count_graph_breaks(broken, x)
    assert (graphs, breaks) == (2, 1)
    assert "Tensor.item()" in reasons[0]
    fixed = bc.TensorLoggingMLP(d_model, num_layers)
    fixed.load_state_dict(broken.state_dict())
    assert bc.count_graph_breaks(fixed, x) == (1, 0, [])
    # 두 모델은 같은 값을 계산하고 같은 노름을 남깁니다(하나는 float, 하나는 텐서).
    torch.testing.assert_close(fixed(x), broken(x))
    assert fixed.last_norm.item() == pytest.approx(broken.last_norm, rel=1e-6)


@pytest.mark.parametrize(
    ("sizes", "dynamic", "expected"),
    [
        ([16, 16, 16], None, 1),  # drop_last=True: 모양이 한 번도 안 바뀝니다.
        ([16, 16, 9], None, 2),  # 마지막 배치가 작으면 다시 컴파일합니다(그다음부터는 동적 모양).
        ([16, 9, 5], None, 2),  # 동적 모양으로 다시 컴파일한 그래프는 다른 크기도 받습니다.
        ([16, 9, 5], False, 3),  # dynamic=False면 새 크기마다 다시 컴파일합니다.
    ],
)
def test_count_compiles_counts_recompiles_on_shape_changes(sizes, dynamic, expected):
    model, _, _ = bc.make_inputs("cpu", d_model=16, num_layers=1)
    batches = bc.make_batches(sizes, d_model=16)
    assert bc.count_compiles(model, batches, backend="eager", dynamic=dynamic) == expected


def test_make_batches_and_inputs_are_reproducible():
    a = bc.make_batches([4, 3], d_model=8, seed=2)
    b = bc.make_batches([4, 3], d_model=8, seed=2)
    assert [x.shape[0] for x, _ in a] == [4, 3]
    for (xa, ya), (xb, yb) in zip(a, b, strict=True):
        assert torch.equal(xa, xb) and torch.equal(ya, yb)
    m1, x1, y1 = bc.make_inputs("cpu", 4, 8, 1, seed=3)
    m2, x2, y2 = bc.make_inputs("cpu", 4, 8, 1, seed=3)
    assert torch.equal(x1, x2) and torch.equal(y1, y2)
    assert all(torch.equal(p, q) for p, q in zip(m1.parameters(), m2.parameters(), strict=True))


def test_missing_for_inductor_reports_a_missing_compiler(monkeypatch):
    monkeypatch.setenv("CXX", "no-such-cxx-compiler")
    assert bc.missing_for_inductor_on_cpu()[0].startswith("C++ 컴파일러(no-such-cxx-compiler)")


def test_without_a_compiler_inductor_stops_with_invalid_cxx_compiler():
    # g++가 없는 컴퓨터를 흉내 냅니다. 첫 호출에서 코드를 만들려다 멈춥니다.
    # 페이지가 이 메시지를 인용합니다.
    import torch._inductor.config as inductor_config

    torch._dynamo.reset()
    model, x, y = bc.make_inputs("cpu", 4, 8, 1)
    # config.patch는 끝나면 설정을 되돌립니다(monkeypatch로는 이 설정을 되돌리지 못합니다).
    with inductor_config.patch({"cpp.cxx": (None, "g++-not-installed")}):
        with pytest.raises(Exception, match="InvalidCxxCompiler") as raised:
            bc.train_step(bc.compile_model(model), x, y)
    first_line = str(raised.value).strip().splitlines()[0]
    assert first_line.startswith("InvalidCxxCompiler: No working C++ compiler found")
    assert page_quotes("beyond/01-torch-compile.md", first_line.replace("g++-not-installed", "g++"))
    torch._dynamo.reset()


def test_compiler_warnings_are_collected_not_printed(capfd):
    # Tensor.item()의 그래프 끊김 안내는 프로세스에서 한 번만 나옵니다(functools.cache).
    # 다른 테스트가 이미 냈을 수 있으니 다시 나오게 합니다.
    TensorVariable._warn_capture_scalar_outputs.cache_clear()
    _, x, _ = bc.make_inputs("cpu", 4, 8, 1)
    with bc.compiler_warnings() as records:
        bc.count_graph_breaks(bc.LoggingMLP(8, 1), x)
    assert "Graph break from `Tensor.item()`" in records[0].getMessage()
    # torch의 핸들러는 stderr(파일 디스크립터 2)에 바로 씁니다. 그 자리에 아무것도 나오지 않습니다.
    assert "Graph break" not in capfd.readouterr().err
    bc.summarize(records)
    assert "컴파일러 경고(모아 둔 것): Graph break from `Tensor.item()`" in capfd.readouterr().out


class TinyLightning(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = bc.TinyMLP(d_model=8, num_layers=1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def test_lightning_compiles_the_step_methods_of_a_compiled_module():
    # trainer.fit(torch.compile(module))이면 Lightning이 forward와 *_step을
    # 같은 설정으로 컴파일합니다.
    torch._dynamo.reset()
    counters.clear()
    module = TinyLightning()
    batches = bc.make_batches([4, 4], d_model=8)
    trainer = L.Trainer(
        accelerator="cpu",
        max_steps=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(torch.compile(module, backend="eager"), DataLoader(batches, batch_size=None))
    assert module._compiler_ctx["compiler"] == "dynamo"
    assert counters["stats"]["unique_graphs"] >= 1  # training_step을 추적했습니다.
    torch._dynamo.reset()


@pytest.mark.slow
def test_main_compiles_cold_then_reads_the_cache(monkeypatch, tmp_path, capsys):
    # 이 파일에서 유일하게 Inductor로 실제 컴파일하는 테스트입니다. 빈 캐시 폴더에서 시작합니다.
    # g++와 Python 헤더는 README가 요구하는 것이라, 없으면 건너뛰지 않고 실패합니다.
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    missing = bc.missing_for_inductor_on_cpu()
    assert not missing, (
        f"Inductor로 컴파일하는 데 필요한 것이 없습니다: {', '.join(missing)}. "
        "README의 안내대로 설치하세요(Debian/Ubuntu: apt-get install -y g++ python3-dev). "
        "없으면 torch.compile이 첫 호출에서 InvalidCxxCompiler로 멈춥니다."
    )
    bc.main("cpu")
    cold = capsys.readouterr().out
    bc.main("cpu")  # 같은 프로세스에서 다시: torch._dynamo.reset() 뒤 디스크 캐시를 읽습니다.
    warm = capsys.readouterr().out
    assert "장치: cpu" in cold
    assert "LoggingMLP: 그래프 2개, 끊김 1번" in cold
    assert "TensorLoggingMLP: 그래프 1개, 끊김 0번" in cold
    assert "[64, 64, 40] (drop_last=False): 그래프를 2번" in cold
    assert "[64, 64, 64] (drop_last=True): 그래프를 1번" in cold
    assert f"Inductor 캐시 폴더: {tmp_path}" in cold
    assert "새로 컴파일(차가운 캐시): 캐시 hit 0" in cold
    assert "캐시에서 읽음(따뜻한 캐시)" in warm and "miss 0" in warm
    assert any(tmp_path.iterdir())
    # Inductor가 만든 코드도 eager와 같은 변화도를 냅니다(fp32의 연산 순서 차이만큼).
    diff = float(cold.split("변화도 차이(최대): ")[1].split()[0])
    assert diff < 1e-4
