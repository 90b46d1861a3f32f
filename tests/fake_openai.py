"""The fake OpenAI-compatible model server the tests script: evals/bench/fake_model.py, which
the benches run too (see there for the handler contract)."""

from evals.bench.fake_model import Handler, completion, fake_openai_server

__all__ = ["Handler", "completion", "fake_openai_server"]
