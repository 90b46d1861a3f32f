"""The local model server process: llama.cpp's own OpenAI-compatible server via xllamacpp.

    python -m app.localmodel.serve --model FILE.gguf --port N [--ctx 8192] [--parallel 2]
                                  [--kv-unified] [--draft-model FILE | --ngram]

Binds 127.0.0.1 only. Exits on SIGTERM/SIGINT, or when the process that started it is gone.
"""

from __future__ import annotations

import argparse
import os
import signal
import threading

import xllamacpp as xlc


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app.localmodel.serve")
    p.add_argument("--model", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--ctx", type=int, default=8192, help="context tokens per slot")
    p.add_argument("--parallel", type=int, default=2, help="slots (requests served at once)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    p.add_argument("--slot-save-path", help="the folder slots are saved to and restored from")
    p.add_argument("--kv-unified", action="store_true",
                   help="one KV cache shared by the slots (not split between them)")
    p.add_argument("--draft-model", help="speculative decoding: a small model of the same"
                   " family proposes tokens, the model checks them in one batch")
    p.add_argument("--ngram", action="store_true",
                   help="speculative decoding from n-grams already in the context")
    p.add_argument("--draft-max", type=int, default=8,
                   help="tokens the draft model proposes at a time")
    args = p.parse_args(argv)

    params = xlc.CommonParams()
    params.model.path = args.model
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_parallel = args.parallel
    params.n_ctx = args.ctx * args.parallel  # llama.cpp splits n_ctx across the slots
    params.kv_unified = args.kv_unified
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.cache_prompt = True  # each slot keeps its prompt: the shared prefix is reused
    params.warmup = False
    params.endpoint_metrics = True  # /metrics: prefill and generation time, every request
    spec = params.speculative
    if args.draft_model:
        spec.types = [xlc.common_speculative_type.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE]
        spec.draft.mparams.path = args.draft_model
        spec.draft.n_max = args.draft_max
        spec.draft.cpuparams.n_threads = args.threads
        spec.draft.cpuparams_batch.n_threads = args.threads
    elif args.ngram:
        spec.types = [xlc.common_speculative_type.COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE]
    if args.slot_save_path:  # llama.cpp joins it to a file name as it is: end it with /
        params.slot_save_path = os.path.join(args.slot_save_path, "")
        params.endpoint_slots = True
    server = xlc.Server(params)
    print(f"serving on {server.listening_address}", flush=True)

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    parent = os.getppid()
    while not stop.wait(1.0):
        if os.getppid() != parent:  # the parent died without stopping us
            break
    del server
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
