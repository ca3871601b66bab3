import pytest

from grpokit.models.tiny import build_tiny_model


def _ends_early(model, tokenizer) -> None:
    """Point the EOS row of the (tied) output embedding along the mean final hidden state, so a
    sampled answer ends after ~3-25 tokens instead of running to max_completion_length (256 in the
    configs `init` writes): the journeys then spend seconds, not minutes, per sampling command."""
    import torch

    prompts = [tokenizer.apply_chat_template([{"role": "user", "content": f"Question {i}: Documents: [1] text."}],
                                             add_generation_prompt=True, tokenize=False) for i in range(8)]
    with torch.no_grad():
        states = torch.cat([model(**tokenizer(p, return_tensors="pt", add_special_tokens=False),
                                  output_hidden_states=True).hidden_states[-1][0] for p in prompts])
        direction = states.mean(0)
        scale = states.norm(dim=1).mean() / 8
        model.lm_head.weight[tokenizer.eos_token_id] = direction / direction.norm() * scale


@pytest.fixture(scope="session")
def tiny_cache(tmp_path_factory):
    """A GRPOKIT_CACHE whose bundled model is the tiny random one (ChatML, like SmolLM2)."""
    root = tmp_path_factory.mktemp("cache")
    model, tokenizer = build_tiny_model(hidden_size=64, num_attention_heads=4)
    _ends_early(model, tokenizer)
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
