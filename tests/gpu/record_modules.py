"""tests/gpu/record_modules.py — real model code under torch.profiler with the Python tree on
(with_stack=True, with_modules=True, record_shapes=True), for kprof analyze -g module / -g source
(issue 24).  Models come from HuggingFace transformers' own modeling code with small configs and
random weights (no network): a BERT masked-LM and a llama causal-LM, bf16, forward + backward +
AdamW step, 2 profiled steps after warm-up.

    python3 record_modules.py OUTDIR [CASE...]

CASES (default all):
    bert_eager      BertForMaskedLM, 2 layers, eager
    llama_eager     LlamaForCausalLM, 2 layers, eager
    llama_wide      the same with layer 1's MLP 2x wider (intermediate 1536 -> 3072): the diff pair
    llama_compiled  llama_eager's model under torch.compile (default mode)
    <case>_mem      any case above with profile_memory=True as well ([memory] events; issue 25);
                    the .txt then holds torch.cuda.max_memory_allocated()/max_memory_reserved()
                    over the profiled window (reset_peak_memory_stats() just before it)
    <case>_b8[_mem] the case with the batch doubled (B=8): the diff pair of issue 25's gate
Writes OUTDIR/<case>.json.gz and OUTDIR/<case>.txt (the model printed, step times).
"""
import gzip
import os
import shutil
import sys
import time

import torch

torch.manual_seed(0)
dev, dt = "cuda", torch.bfloat16
B, S = 4, 128


def bert():
    from transformers import BertConfig, BertForMaskedLM
    cfg = BertConfig(vocab_size=8192, hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=1024, max_position_embeddings=512,
                     attn_implementation="sdpa")
    return BertForMaskedLM(cfg), cfg.vocab_size


def llama(wide=False):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=8192, hidden_size=384, num_hidden_layers=2, num_attention_heads=6,
                      num_key_value_heads=2, intermediate_size=1536, max_position_embeddings=512,
                      attn_implementation="sdpa")
    m = LlamaForCausalLM(cfg)
    if wide:
        from transformers.models.llama.modeling_llama import LlamaMLP
        import copy
        c2 = copy.deepcopy(cfg)
        c2.intermediate_size = 2 * cfg.intermediate_size
        m.model.layers[1].mlp = LlamaMLP(c2)
    return m, cfg.vocab_size


def run(case, outdir):
    global B
    name = case
    memory = case.endswith("_mem")
    if memory:
        case = case[:-len("_mem")]
    B = 4
    if case.endswith("_b8"):
        case, B = case[:-len("_b8")], 8
    if case == "bert_eager":
        model, vocab = bert()
    elif case in ("llama_eager", "llama_compiled"):
        model, vocab = llama()
    elif case == "llama_wide":
        model, vocab = llama(wide=True)
    else:
        sys.exit("unknown case " + case)
    model = model.to(dev, dt).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    fwd = torch.compile(model) if case.endswith("compiled") else model
    ids = torch.randint(0, vocab, (B, S), device=dev)
    labels = torch.randint(0, vocab, (B, S), device=dev)

    def step():
        out = fwd(input_ids=ids, labels=labels)
        out.loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    plain_ms = (time.perf_counter() - t0) / 5 * 1e3
    torch.cuda.reset_peak_memory_stats()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, record_shapes=True, with_stack=True,
                                with_modules=True, profile_memory=memory) as prof:
        for _ in range(2):
            step()
            prof.step()
    torch.cuda.synchronize()
    peak_alloc, peak_res = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
    raw = os.path.join(outdir, name + ".json")
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(raw)
    with open(os.path.join(outdir, name + ".txt"), "w") as f:
        f.write("torch %s, %s, %s, B=%d\nplain step %.3f ms\n"
                "max_memory_allocated %d\nmax_memory_reserved %d\n%s\n" % (
                    torch.__version__, torch.cuda.get_device_name(), name, B, plain_ms,
                    peak_alloc, peak_res, model))
    print("%-20s plain %.3f ms/step, %d bytes gz, max_memory_allocated %d reserved %d" % (
        name, plain_ms, os.path.getsize(raw + ".gz"), peak_alloc, peak_res))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    cases = sys.argv[2:] or ["bert_eager", "llama_eager", "llama_wide", "llama_compiled"]
    for c in cases:
        run(c, outdir)


if __name__ == "__main__":
    main()
