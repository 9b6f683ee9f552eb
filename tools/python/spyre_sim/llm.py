"""LLM inference on the simulated chip: one prefill and greedy decode steps with a static KV cache.

    r = spyre_sim.llm.simulate("granite-3.3-8b", batch=1, prompt=128, new=8, context=2048,
                               timing_only=True)
    r.ttft_us, r.tpot_us, r.tokens_per_s, r.steps[1]["by_class_us"]

`spyre-sim llm MODEL [--batch B --prompt P --new N --context C --timing-only --json F
--jsonl F]` is the same from the command line.

A generation of `new` tokens is one prefill of the prompt (it gives the first token) and
new - 1 decode steps (Hugging Face's `max_new_tokens` convention), each one token per sequence.
The KV cache is transformers' StaticCache of `context` positions, updated in place on the
device (a dma.scatter at the position the cache holds), so one compiled decode graph serves
every step. MODEL is a bundled config name (`tiny`, `gpt2`, `llama-3.1-8b`,
`granite-3.3-8b`: llm_models/*.json, each naming its source), a config JSON file, a
transformers config object (seeded random weights) or a causal-LM module (its own weights).

timing_only=True builds a config's model on the meta device: no weight or cache byte exists on
the host (the simulator reads no values in a timing-only run), so an 8B model runs in about
1 GiB. A compiled graph's timing-only run depends on nothing but its program, so the decode
steps after the first reuse its simulated run (`reuse=False` simulates every step; the
cycles are the same, tests/python/test_llm.py). Functional runs compute every token on the
simulated chip; `compare_eager` also runs eager PyTorch in fp32 on the same weights and
reports whether the tokens are the same and every step's logits match (api.compare).

`extrapolate=(a, b)` (`--extrapolate-layers A,B`) is an estimate, for sweeps and first looks:
it simulates the model cut to its first a and b layers and extrapolates every per-step figure
linearly to all its layers (_extrapolated). Its error against the full simulation is measured
by tools/bench/llm.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import sys
import tempfile
import time
from typing import Any, Optional

from .llm_steps import (CLASSES, LlmResult, _result, _step_entry, kernel_class,  # noqa: F401
                        merge_step_traces)

MODELS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "llm_models")


class LlmError(ValueError):
    """Bad model name, config file or generation parameters (the message names which)."""


def bundled_models() -> list[str]:
    return sorted(f[:-5] for f in os.listdir(MODELS_DIR) if f.endswith(".json"))


def bundled_path(name: str) -> str:
    """The config file of a bundled model name (llm_models/NAME.json)."""
    return os.path.join(MODELS_DIR, name + ".json")


def load_config(model: Any):
    """A transformers config from a bundled name, a config JSON file or a config object."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # configs only: never download
    import transformers

    if isinstance(model, transformers.PretrainedConfig):
        return model
    if not isinstance(model, str):
        raise LlmError(f"model: expected a name ({', '.join(bundled_models())}), a config JSON "
                       f"file, a transformers config or a causal-LM module, got {type(model).__name__}")
    path = model if model.endswith(".json") else bundled_path(model)
    if not os.path.exists(path):
        raise LlmError(f"model {model!r}: " + (f"{path}: no such file" if model.endswith(".json")
                       else f"not a bundled model (known: {', '.join(bundled_models())}) "
                            "and not a .json config file"))
    try:
        with open(path) as f:
            d = json.load(f)
    except json.JSONDecodeError as e:
        raise LlmError(f"{path}: malformed JSON: {e}") from None
    d = {k: v for k, v in d.items() if not k.startswith("_")}
    if "model_type" not in d:
        raise LlmError(f"{path}: field 'model_type' missing (a Hugging Face config.json names it)")
    try:
        return transformers.AutoConfig.for_model(**d)
    except (ValueError, KeyError, TypeError) as e:
        raise LlmError(f"{path}: {e}") from None


def build_model(config, meta: bool, seed: int = 0):
    """The causal LM of `config` in fp16, eval mode: on the meta device (no memory) or with
    seeded random weights on the cpu."""
    import torch
    import transformers

    torch.manual_seed(seed)
    if meta:
        with torch.device("meta"):
            lm = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float16)
    else:
        lm = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float16)
    return lm.eval()


def _cache_shape(config):
    heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return heads, head_dim


def _static_cache(config, batch: int, context: int, dtype, device):
    from transformers import StaticCache

    cache = StaticCache(config=config, max_cache_len=context)
    heads, head_dim = _cache_shape(config)
    # Allocated now, on the model's device, rather than inside the compiled prefill.
    cache.early_initialization(batch_size=batch, num_heads=heads, head_dim=head_dim, dtype=dtype,
                               device=device)
    return cache


class _Step:
    """One forward of the LM on the cache: the last position's logits only (logits_to_keep=1,
    as a serving engine computes them)."""

    def __init__(self, lm, cache):
        self.lm, self.cache = lm, cache

    def __call__(self, input_ids):
        return self.lm(input_ids=input_ids, cache=self.cache, use_cache=True,
                       logits_to_keep=1).logits


def _prompt_ids(prompt, batch: int, vocab: int, seed: int):
    import torch

    if isinstance(prompt, torch.Tensor):
        if prompt.dim() != 2 or prompt.dtype not in (torch.int64, torch.int32):
            raise LlmError(f"prompt: expected a batch x length tensor of token ids, got "
                           f"{list(prompt.shape)} {prompt.dtype}")
        return prompt.long()
    if not isinstance(prompt, int) or prompt < 1:
        raise LlmError(f"prompt: expected a length >= 1 or a tensor of token ids, got {prompt!r}")
    return torch.randint(0, vocab, (batch, prompt), generator=torch.Generator().manual_seed(seed))


def simulate(model, batch: int = 1, prompt=16, new: int = 8, context: Optional[int] = None,
             timing_only: bool = False, arch: Optional[str] = None, set=None,
             trace: Optional[str] = None, reuse: bool = True, compare_eager: bool = True,
             seed: int = 0, extrapolate: Optional[tuple[int, int]] = None) -> LlmResult:
    """Simulate a greedy generation of `new` tokens after `prompt` (a length: seeded random ids;
    or a batch x length tensor) with a StaticCache of `context` positions (default prompt +
    new). `extrapolate=(a, b)`: timing-only, simulate the model cut to a and to b layers and
    extrapolate linearly to its own layer count (an estimate; see _extrapolated). See the module
    docstring."""
    import torch
    import torch._dynamo

    from . import api
    from . import backend as _backend
    from . import session as _session
    from ._core import core

    if not isinstance(batch, int) or batch < 1:
        raise LlmError(f"batch: expected an integer >= 1, got {batch!r}")
    if not isinstance(new, int) or new < 1:
        raise LlmError(f"new: expected an integer >= 1 (tokens to generate), got {new!r}")
    if extrapolate is not None:
        return _extrapolated(model, extrapolate, dict(
            batch=batch, prompt=prompt, new=new, context=context, timing_only=timing_only,
            arch=arch, set=set, trace=trace, reuse=reuse, seed=seed))
    if isinstance(model, torch.nn.Module):
        lm, name = model.eval(), type(model).__name__
        config = lm.config  # timing-only on a cpu module: its values are simply not read
    else:
        config = load_config(model)
        name = model if isinstance(model, str) else type(model).__name__
        lm = build_model(config, meta=timing_only, seed=seed)
    ids = _prompt_ids(prompt, batch, config.vocab_size, seed + 1)
    batch, plen = ids.shape
    context = plen + new if context is None else context
    if not isinstance(context, int) or context < plen + new - 1:
        raise LlmError(f"context: {context!r} positions cannot hold a prompt of {plen} and "
                       f"{new - 1} decode steps (need >= {plen + new - 1})")
    maxpos = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    if maxpos and context > maxpos:
        raise LlmError(f"context: {context} positions exceed the model's "
                       f"max_position_embeddings {maxpos}")
    device = next(lm.parameters()).device
    dtype = next(lm.parameters()).dtype
    ids = ids.to(device)
    cache = _static_cache(config, batch, context, dtype, device)
    cache_ids = {id(t) for layer in cache.layers for t in (layer.keys, layer.values)}
    weight_bytes = sum(p.numel() * p.element_size() for p in lm.parameters()
                       if id(p) not in cache_ids)

    if trace is not None and not str(trace).endswith(".json"):
        raise LlmError(f"trace: {trace}: a generation's trace is Chrome JSON (a .json path)")
    tmp = tempfile.mkdtemp(prefix=".steps.", dir=os.path.dirname(os.path.abspath(trace))) \
        if trace else None
    step_trace = os.path.join(tmp, "step.json") if tmp else None
    sess = _session.Session(arch, set, step_trace, timing_only, None, None, reuse_timing=reuse)
    torch._dynamo.reset()
    step_fn = _Step(lm, cache)
    tokens, logits_all, walls = [], [], []
    try:
        with _session.active(sess), torch.no_grad():
            compiled = torch.compile(step_fn, backend=_backend.spyre_sim_backend, dynamic=False)
            x = ids
            for i in range(new):
                t0 = time.perf_counter()
                try:
                    logits = compiled(x)
                except torch._dynamo.exc.BackendCompilerFailed as e:
                    inner = getattr(e, "inner_exception", None)
                    if inner is None:
                        raise
                    raise inner.with_traceback(inner.__traceback__) from None
                walls.append(time.perf_counter() - t0)
                x = logits[:, -1].argmax(-1, keepdim=True)
                if not timing_only:
                    tokens.append(x.cpu())
                    logits_all.append(logits[:, -1].float().cpu())
    except BaseException:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    torch._dynamo.reset()
    if len(sess.runs) != new:
        raise core.SpyreError(f"{name}: expected one simulated graph per step ({new}), got "
                              f"{len(sess.runs)} (a graph break splits the model)")
    classes = {}
    for rep in sess.reports:
        for k in rep["kernels"]:
            classes[k["name"]] = kernel_class(k)
    peak = sess.runs[0]["dram"]["peak_gbps"]
    floor_us = weight_bytes / (peak * 1e3)
    steps = [_step_entry("prefill" if i == 0 else "decode", i, run, classes,
                         batch * (plen if i == 0 else 1), 0 if i == 0 else plen + i - 1,
                         floor_us) for i, run in enumerate(sess.runs)]
    for st, wall, sim in zip(steps, walls, sess.sim_seconds):
        # wall time of the step's call: capture and compile (a graph's first call) and the
        # simulation (0 when a timing-only run is reused)
        st["wall_s"], st["sim_wall_s"] = round(wall, 3), round(sim, 3)
    if tmp:
        paths = [r["trace"] for r in sess.runs]
        merge_step_traces(paths, steps, trace)
        shutil.rmtree(tmp, ignore_errors=True)
    res = _result(steps, model=name, arch=sess.runs[0]["arch"], batch=batch, prompt=plen,
                  new=new, context=context, timing_only=timing_only, weight_bytes=weight_bytes,
                  weight_floor_us=floor_us, peak_gbps=peak, wall_s=round(sum(walls), 3))
    if not timing_only:
        res.tokens = torch.cat(tokens, dim=1)
        if compare_eager:
            ref_tokens, ref_logits = eager_generate(lm, ids, new, context)
            res.tokens_match = bool(torch.equal(res.tokens, ref_tokens))
            oks, worst = [], 0.0
            for a, e in zip(logits_all, ref_logits):
                ok, err, _ = api.compare(a.half(), e)
                oks.append(ok)
                worst = max(worst, err)
            res.logits_match, res.max_abs_err = all(oks), worst
    return res


# A step's figures that add up over the layers; the others name the step or are ratios.
_PER_LAYER = ("device_time_us", "cycles", "kernels", "between_kernels_us", "dram_bytes",
              "dram_read_bytes", "dram_write_bytes")


def check_layers(config, layers, what: str = "extrapolate") -> tuple[int, int, int]:
    """(a, b, n): the two layer counts of an extrapolation, checked against the config's n
    layers (LlmError naming `what` otherwise)."""
    if not (isinstance(layers, (tuple, list)) and len(layers) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in layers)):
        raise LlmError(f"{what}: expected two layer counts (a, b), got {layers!r}")
    a, b = layers
    n = config.num_hidden_layers
    if not 1 <= a < b < n:
        raise LlmError(f"{what}: expected layer counts 1 <= a < b < {n} (the model's "
                       f"layers), got ({a}, {b})")
    types = getattr(config, "layer_types", None)
    if types and len(set(types)) > 1:
        raise LlmError(f"{what}: the model's layers are not all alike (layer_types "
                       f"{sorted(set(types))}): simulate it whole")
    return a, b, n


def cut_layers(config, k: int):
    """A copy of `config` with its first k layers."""
    cut = copy.deepcopy(config)
    cut.num_hidden_layers = k
    if getattr(config, "layer_types", None):
        cut.layer_types = list(config.layer_types[:k])
    return cut


def extrapolate_linear(va: float, vb: float, a: int, b: int, n: int) -> float:
    """v(n) on the line through (a, va) and (b, vb)."""
    return vb + (n - b) * (vb - va) / (b - a)


def _extrapolated(model, layers, kw: dict) -> LlmResult:
    """A timing-only generation of the whole model estimated from simulations of the model cut
    to a and to b of its n layers (its first layers, embedding and head kept): every figure
    that adds up over the layers (device time and cycles, time per kernel class, kernels, DRAM
    bytes, weight bytes) is taken as linear in the layer count,
    v(n) = v(b) + (n - b) (v(b) - v(a)) / (b - a).
    It is exact when every layer adds the same work in the same time. It is not, quite: a
    layer's time depends on the DRAM state it starts in, and Inductor's graph can differ from
    layer to layer (in Granite's decode graph it writes the residual stream to memory in every
    second layer and recomputes it inside the next RMSNorm in the others: 31 and 30 kernels,
    which is why the CLI's default is (2, 4), a whole number of such periods).
    tools/bench/llm measures the error against the full simulation."""
    import torch

    if not kw["timing_only"]:
        raise LlmError("extrapolate: the layer extrapolation estimates time only: it needs "
                       "timing_only=True (--timing-only)")
    if kw["trace"] is not None:
        raise LlmError("extrapolate: a generation that is not simulated whole has no trace "
                       "(simulate it without extrapolate for one)")
    if isinstance(model, torch.nn.Module):
        raise LlmError("extrapolate: takes a model name, config file or config object (its cut "
                       "models are built from the config, in fp16); a module of its own class, "
                       "dtype and weights is simulated whole")
    config = load_config(model)
    a, b, n = check_layers(config, layers)
    sampled = [simulate(cut_layers(config, k), **kw) for k in (a, b)]
    ra, rb = sampled

    def lin(x, y):
        return extrapolate_linear(x, y, a, b, n)

    steps = []
    for sa, sb in zip(ra.steps, rb.steps):
        st = dict(sb)
        for f in _PER_LAYER:
            v = lin(sa[f], sb[f])
            st[f] = round(v) if isinstance(sb[f], int) else v  # as a sweep row has it
        if st["device_time_us"] <= 0:
            raise LlmError(f"extrapolate: the line through {a} and {b} layers gives step "
                           f"{sb['step']} a device time of {st['device_time_us']} us: its layers "
                           "do not add time alike; simulate it whole")
        st["between_kernels_us"] = max(0.0, st["between_kernels_us"])
        st["by_class_us"] = {c: round(max(0.0, lin(sa["by_class_us"][c], sb["by_class_us"][c])),
                                      3) for c in CLASSES}
        st["achieved_gbps"] = st["dram_bytes"] / (st["device_time_us"] * 1e3)
        st["extrapolated"] = True
        st["wall_s"] = round(sa["wall_s"] + sb["wall_s"], 3)
        st["sim_wall_s"] = round(sa["sim_wall_s"] + sb["sim_wall_s"], 3)
        steps.append(st)
    weight_bytes = round(lin(ra.weight_bytes, rb.weight_bytes))
    floor_us = weight_bytes / (rb.peak_gbps * 1e3)
    for st in steps:
        st["weight_floor_us"] = floor_us
    res = _result(steps, model=model if isinstance(model, str) else type(model).__name__,
                  arch=rb.arch, batch=rb.batch, prompt=rb.prompt, new=rb.new, context=rb.context,
                  timing_only=True, weight_bytes=weight_bytes,
                  weight_floor_us=floor_us, peak_gbps=rb.peak_gbps,
                  wall_s=round(ra.wall_s + rb.wall_s, 3))
    res.extrapolated = {"layers": n, "from_layers": [a, b],
                        "sampled": {str(k): {"ttft_us": r.ttft_us, "tpot_us": r.tpot_us}
                                    for k, r in zip((a, b), sampled)}}
    return res


def capture_graphs(model, batch: int = 1, context: int = 2048, prompt: Optional[int] = None,
                   seed: int = 0) -> list[dict]:
    """The IR of a generation's graphs without simulating them: [prefill of `prompt` tokens,
    decode step] (only the decode step when prompt is None: the cache is then taken as filled
    to context - 1), from a meta-device model (no weights on the host). What `spyre-sim sweep`
    simulates for an `llm` model entry."""
    import torch
    import torch._dynamo
    import spyre_capture

    from ._core import core  # noqa: F401 (its import installs the frame-stack chunk cache)

    config = load_config(model) if not isinstance(model, torch.nn.Module) else model.config
    lm = model.eval() if isinstance(model, torch.nn.Module) else build_model(config, meta=True,
                                                                               seed=seed)
    device, dtype = next(lm.parameters()).device, next(lm.parameters()).dtype
    if prompt is not None and (not isinstance(prompt, int) or not 1 <= prompt < context):
        raise LlmError(f"prompt: expected a length in [1, context={context}), got {prompt!r}")
    cache = _static_cache(config, batch, context, dtype, device)
    graphs = []

    def make_runner(ir):
        graphs.append(ir)
        outs = [(o["size"], o["stride"], getattr(torch, o["dtype"])) for o in ir["outputs"]]

        def runner(inputs):  # no values: empty outputs of the captured shapes
            d = inputs[0].device if inputs else device
            return [torch.empty_strided(sz, st, dtype=dt, device=d) for sz, st, dt in outs]

        return runner

    def backend(gm, example_inputs):
        return spyre_capture.compile_graph(gm, example_inputs, make_runner)

    torch._dynamo.reset()
    step = torch.compile(_Step(lm, cache), backend=backend, dynamic=False)
    with torch.no_grad():
        if prompt is not None:
            step(torch.zeros(batch, prompt, dtype=torch.long, device=device))
        step(torch.zeros(batch, 1, dtype=torch.long, device=device))
    torch._dynamo.reset()
    want = 2 if prompt is not None else 1
    if len(graphs) != want:
        raise LlmError(f"expected {want} graph(s) (prefill, decode), captured {len(graphs)}: "
                       "a graph break splits the model")
    for ir, name in zip(graphs, ["prefill", "decode"][2 - want:]):
        ir["graph"] = name
    return graphs


def eager_generate(lm, ids, new: int, context: int):
    """Greedy tokens and each step's last logits of eager PyTorch in fp32 (a float copy of the
    weights, its own StaticCache): the reference of a functional run."""
    import torch

    ref = copy.deepcopy(lm).float()
    cache = _static_cache(ref.config, ids.shape[0], context, torch.float32, ids.device)
    step = _Step(ref, cache)
    tokens, logits_all, x = [], [], ids
    with torch.no_grad():
        for _ in range(new):
            logits = step(x)[:, -1]
            x = logits.argmax(-1, keepdim=True)
            tokens.append(x)
            logits_all.append(logits)
    return torch.cat(tokens, dim=1), logits_all


def main(argv=None) -> int:
    from . import files
    from ._cli import parse_args

    ap = argparse.ArgumentParser(
        prog="spyre-sim llm",
        description="Simulate LLM inference: one prefill and greedy decode steps with a static "
                    "KV cache; prints TTFT, TPOT, tokens/s and per-step device time and DRAM "
                    "bandwidth against the weight-streaming floor.")
    ap.add_argument("model", help=f"bundled config ({', '.join(bundled_models())}) or a "
                                  "Hugging Face config.json file")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--prompt", type=int, default=16, help="prompt length (seeded random ids)")
    ap.add_argument("--new", type=int, default=8, help="tokens to generate (prefill + new-1 "
                                                       "decode steps)")
    ap.add_argument("--context", type=int, default=None, help="KV cache positions (default "
                                                              "prompt + new)")
    ap.add_argument("--arch", default=None, help="preset or YAML file (default spyre)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--timing-only", action="store_true",
                    help="no values: weights on the meta device (real sizes, little memory)")
    ap.add_argument("--no-reuse", action="store_true",
                    help="timing-only: simulate every decode step (default: the first one's "
                         "run is reused, exactly)")
    ap.add_argument("--extrapolate-layers", nargs="?", const="2,4", default=None, metavar="A,B",
                    help="timing-only ESTIMATE: simulate the model cut to A and to B layers "
                         "(default 2,4) and extrapolate linearly to all its layers (its error "
                         "against the full simulation: tools/bench/llm)")
    ap.add_argument("--trace", default=None, help="Chrome JSON trace of the whole generation "
                                                  "(a span per step over the kernel spans)")
    ap.add_argument("--json", default=None, help="write the result (summary and steps) as JSON")
    ap.add_argument("--jsonl", default=None, help="write one JSON line per step")
    ap.add_argument("--force", action="store_true",
                    help="overwrite existing --json/--jsonl/--trace files")
    args, code = parse_args(ap, argv)
    if args is None:
        return code
    for path in (args.json, args.jsonl, args.trace):
        if path and os.path.exists(path) and not args.force:
            print(f"spyre-sim llm: {path} exists (use --force to overwrite)", file=sys.stderr)
            return 2
    layers = None
    if args.extrapolate_layers is not None:
        try:
            layers = tuple(int(x) for x in args.extrapolate_layers.split(","))
        except ValueError:
            layers = ()
        if len(layers) != 2:
            print(f"spyre-sim llm: --extrapolate-layers: expected A,B (two layer counts), got "
                  f"{args.extrapolate_layers!r}", file=sys.stderr)
            return 2
    try:
        res = simulate(args.model, batch=args.batch, prompt=args.prompt, new=args.new,
                       context=args.context, timing_only=args.timing_only, arch=args.arch,
                       set=args.set, trace=args.trace, reuse=not args.no_reuse,
                       extrapolate=layers)
    except LlmError as e:
        msg = str(e)
        if msg.startswith("extrapolate:"):  # the option as this command spells it
            msg = "--extrapolate-layers:" + msg[len("extrapolate:"):]
        print(f"spyre-sim llm: {msg}", file=sys.stderr)
        return 2
    sys.stdout.write(res.text())
    if args.json:
        files.write_atomic(args.json, json.dumps(res.summary(), indent=1, sort_keys=True) + "\n")
    if args.jsonl:
        files.write_atomic(args.jsonl, res.jsonl())
    return 0 if res.tokens_match in (None, True) and res.logits_match in (None, True) else 1
