import pytest

from benchmarks.tiny_model import build_tiny_model


@pytest.fixture(scope="session")
def tiny_cache(tmp_path_factory):
    """A GRPOKIT_CACHE whose bundled model is the tiny random one (ChatML, like SmolLM2)."""
    root = tmp_path_factory.mktemp("cache")
    model, tokenizer = build_tiny_model(hidden_size=64, num_attention_heads=4)
    # Prompts with documents run to a few hundred of its byte-pair tokens; rotary positions stretch.
    model.config.max_position_embeddings = 2048
    target = root / "models" / "smollm2-135m-instruct"
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return root


@pytest.fixture
def journey_dir(tmp_path, monkeypatch, tiny_cache):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRPOKIT_CACHE", str(tiny_cache))
    monkeypatch.setenv("GRPOKIT_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    return tmp_path
