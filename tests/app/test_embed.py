"""Embedders: the test stand-in, and the real model ranking by meaning."""

from app.embed import HashEmbedder, MiniLMEmbedder
from app.manuals import ManualLibrary
from app.manuals.demo import seed_manuals


def test_hash_embedder_is_deterministic_and_normalised():
    a, b = HashEmbedder().embed(["resin tank", "resin tank"])
    assert (a == b).all() and abs(float((a * a).sum()) - 1) < 1e-6


async def test_the_real_embedder_ranks_by_meaning(db, blob_server):
    lib = ManualLibrary(db, blob_server[0], MiniLMEmbedder())
    await seed_manuals(lib)
    for question, title, page in [
        ("what should I wear to protect my hands and eyes from resin", "Form 4 Manual", 1),
        ("Which materials are forbidden in the laser cutter?", "Trotec Speedy 400 SOP", 2),
        ("what do I do if something catches fire in the laser", "Trotec Speedy 400 SOP", 4),
    ]:
        [best, *_] = await lib.search(question)
        assert (best["title"], best["page"]) == (title, page), question
