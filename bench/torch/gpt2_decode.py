#!/usr/bin/env python3
"""GPT-2 greedy decoding and prompt processing with a key/value cache in
eager PyTorch (fp32, bf16 weight matrices, or fp32 weights under bf16
autocast), the peer of simdgpt's gpt.Sampler for cmd/trainbench -decode
and -prefill.

The checkpoint is read by gpt2_logits.py's reader (Hugging Face
model.safetensors or llm.c gpt2_*.bin), so this side and simdgpt load the
same file. The model is GPT-2's, written here with plain torch operations
in the style of Hugging Face's eager implementation: Conv1D layers as
torch.addmm(bias, x, W) with W in×out, the LM head F.linear(x, wte). Each
layer keeps its keys and values in preallocated [H, maxT, D] tensors; a
prompt of n tokens is one forward pass over n rows at the next positions
(causal within them), a decoded token one pass over one row. Greedy: the
next token is the first largest logit (torch.argmax).

--dtype bf16 converts the matrices a token multiplies by to torch.bfloat16
(round to nearest even): each block's four projections (attn.c_attn,
attn.c_proj, mlp.c_fc, mlp.c_proj) and the LM head (a bf16 copy of wte; the embedding
still looks its rows up in float32), the matrices of simdgpt's bf16
model (gpt.WeightsBF16). They are stored out x in and applied with
F.linear (torch's bf16 matmul on the CPU, through oneDNN when torch has
it; this layout was the faster of the two for it): the activations are
rounded to bf16 on the way in, the product (accumulated in float32 by
torch) comes out in bf16 and is converted to float32, then the float32
bias is added. Embeddings, LayerNorms, biases, the residual stream,
attention, the key/value cache and GELU stay float32, as do the logits
written and compared (the head's product is rounded to bf16 before it is
converted back). The default, --dtype fp32, is fp32 throughout.

--autocast (with --dtype fp32 only) runs every forward pass under
torch.autocast("cpu", dtype=torch.bfloat16), as a PyTorch user turns bf16
compute on for a float32 model: the weights stay float32 and autocast
converts the operands of each matrix product (the projections, attention's
Q·Kᵀ and P·V, the LM head) to bf16 on every call, its outputs bf16; the ops
autocast keeps in float32 (LayerNorm) and the residual sums (float32 +
bf16 promotes to float32) stay float32. The logits written are the head's
bf16 product converted to float32.

Modes:
  --serve   a line protocol on stdin/stdout (see bench/torch/README.md):
            "threads K" (answers "ok K"); "decode N T1,T2,..." prefills the
            prompt T1,T2,... (untimed), then decodes N tokens one at a time,
            each timed from feeding the previous token to having the next
            (answers "ms M1 ... MN tokens K0 ... KN": K0 is the token after
            the prompt, Ki the one decoded in the i-th timed step);
            "prefill N T1,T2,..." processes the prompt T1,T2,... from an
            empty context N times, each timed (answers "ms M1 ... MN cpu
            C1 ... CN": wall and process CPU milliseconds of each);
            "logits T1,T2,... FILE" writes the logits of the token after
            the prompt to FILE (the rest of the line) as little-endian
            float32 (answers "ok V");
            "quit".

Exit status 2 on a bad file or argument, 3 when torch cannot be imported.
"""

import argparse
import array
import math
import signal
import sys
import time

from gpt2_logits import BadFile, load
from train_gpt import blas_thread_setter, set_threads


class Decoder:
    """GPT-2 with a key/value cache; weights are views of the arrays read
    (with bf16, the matrices are converted copies)."""

    def __init__(self, torch, cfg, w, dtype="fp32", autocast=False):
        self.torch, self.F = torch, torch.nn.functional
        self.autocast = autocast
        self.V, self.T, self.L, self.H, self.C = cfg["V"], cfg["T"], cfg["L"], cfg["H"], cfg["C"]
        self.eps, self.D = cfg["eps"], self.C // self.H
        self.bf16 = dtype == "bf16"
        V, T, C = self.V, self.T, self.C

        def t(name, *shape):
            return torch.frombuffer(w[name], dtype=torch.float32).view(*shape)

        def mat(name, k, n):  # a Conv1D's weight, in x out; out x in in bf16
            m = t(name, k, n)
            return m.t().to(torch.bfloat16).contiguous() if self.bf16 else m

        self.wte, self.wpe = t("wte.weight", V, C), t("wpe.weight", T, C)
        self.lnf = (t("ln_f.weight", C), t("ln_f.bias", C))
        self.blocks = []
        for l in range(self.L):
            p = "h.%d." % l
            self.blocks.append({
                "ln1": (t(p + "ln_1.weight", C), t(p + "ln_1.bias", C)),
                "attn": (t(p + "attn.c_attn.bias", 3 * C), mat(p + "attn.c_attn.weight", C, 3 * C)),
                "proj": (t(p + "attn.c_proj.bias", C), mat(p + "attn.c_proj.weight", C, C)),
                "ln2": (t(p + "ln_2.weight", C), t(p + "ln_2.bias", C)),
                "fc": (t(p + "mlp.c_fc.bias", 4 * C), mat(p + "mlp.c_fc.weight", C, 4 * C)),
                "out": (t(p + "mlp.c_proj.bias", C), mat(p + "mlp.c_proj.weight", 4 * C, C)),
            })
        self.head = self.wte.to(torch.bfloat16) if self.bf16 else self.wte  # [V, C]
        self.params = sum(a.numel() for a in [self.wte, self.wpe, *self.lnf]) + \
            sum(x.numel() for b in self.blocks for pair in b.values() for x in pair)
        self.k = torch.zeros(self.L, self.H, T, self.D)
        self.v = torch.zeros(self.L, self.H, T, self.D)
        self.mask = torch.ones(T, T, dtype=torch.bool).triu(1)  # key after query: masked
        self.scale = 1.0 / math.sqrt(self.D)
        self.pos = 0

    def forward(self, tokens):
        """Feeds tokens at the next positions; returns the logits [V] of the
        token after the last (float32), under bf16 autocast with
        --autocast."""
        if self.autocast:
            with self.torch.autocast("cpu", dtype=self.torch.bfloat16):
                return self.forward_(tokens).float()
        return self.forward_(tokens)

    def forward_(self, tokens):
        torch, F, H, D, C = self.torch, self.F, self.H, self.D, self.C

        if self.bf16:
            def linear(bw, a):  # bias + a·W, W out×in in bf16
                return F.linear(a.to(torch.bfloat16), bw[1]).float().add_(bw[0])
        else:
            def linear(bw, a):  # a Conv1D: bias + a·W, W in×out
                return torch.addmm(bw[0], a, bw[1])

        n, pos = len(tokens), self.pos
        if pos + n > self.T:
            raise BadFile("context of %d tokens beyond the model's %d" % (pos + n, self.T))
        end = pos + n
        x = self.wte[torch.tensor(tokens)] + self.wpe[pos:end]
        for l, b in enumerate(self.blocks):
            a = F.layer_norm(x, (C,), *b["ln1"], self.eps)
            q, k, v = linear(b["attn"], a).view(n, 3, H, D).permute(1, 2, 0, 3)
            self.k[l, :, pos:end] = k
            self.v[l, :, pos:end] = v
            s = (q @ self.k[l, :, :end].transpose(1, 2)) * self.scale  # [H, n, end]
            if n > 1:
                s = s.masked_fill(self.mask[pos:end, :end], float("-inf"))
            y = (s.softmax(-1) @ self.v[l, :, :end]).transpose(0, 1).reshape(n, C)
            x = x + linear(b["proj"], y)
            a = F.layer_norm(x, (C,), *b["ln2"], self.eps)
            x = x + linear(b["out"], F.gelu(linear(b["fc"], a), approximate="tanh"))
        self.pos = end
        h = F.layer_norm(x[-1], (C,), *self.lnf, self.eps)
        return F.linear(h.to(self.head.dtype), self.head).float()

    def prefill(self, tokens):
        """Starts a new context with tokens; returns the next token's logits."""
        self.pos = 0
        return self.forward(tokens)

    def time_prefill(self, prompt, n):
        """Processes prompt from an empty context n times; returns the wall
        and process CPU milliseconds of each."""
        ms, cpu = [], []
        for _ in range(n):
            t0, c0 = time.perf_counter(), time.process_time()
            self.prefill(prompt)
            cpu.append(1000 * (time.process_time() - c0))
            ms.append(1000 * (time.perf_counter() - t0))
        return ms, cpu

    def decode(self, prompt, n):
        """Greedy: the token after prompt, then n more, each timed."""
        tok = int(self.prefill(prompt).argmax())
        toks, ms = [tok], []
        for _ in range(n):
            t0 = time.perf_counter()
            tok = int(self.forward([tok]).argmax())
            ms.append(1000 * (time.perf_counter() - t0))
            toks.append(tok)
        return ms, toks


def parse_tokens(s, V):
    try:
        toks = [int(x) for x in s.split(",")]
    except ValueError:
        raise BadFile("tokens %r: a comma-separated list of integers" % s)
    if not toks or any(not 0 <= x < V for x in toks):
        raise BadFile("tokens %r: at least one, each in [0, %d)" % (s, V))
    return toks


def serve(torch, dec):
    blas = "openblas" if blas_thread_setter() else "other"
    print("ready %d blas=%s dtype=%s compute=%s" % (dec.params, blas, "bf16" if dec.bf16 else "fp32",
                                                  "autocast-bf16" if dec.autocast else "dtype"), flush=True)
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        if f[0] == "logits":
            f = line.rstrip("\r\n").split(" ", 2)
        try:
            if f[0] == "quit":
                return
            if f[0] == "threads" and len(f) == 2 and f[1].isdigit() and int(f[1]) >= 1:
                set_threads(torch, int(f[1]))
                print("ok %d" % torch.get_num_threads(), flush=True)
            elif f[0] == "decode" and len(f) == 3 and f[1].isdigit():
                ms, toks = dec.decode(parse_tokens(f[2], dec.V), int(f[1]))
                print("ms " + " ".join("%.4f" % t for t in ms) + " tokens " + " ".join(map(str, toks)), flush=True)
            elif f[0] == "prefill" and len(f) == 3 and f[1].isdigit() and int(f[1]) >= 1:
                ms, cpu = dec.time_prefill(parse_tokens(f[2], dec.V), int(f[1]))
                print("ms " + " ".join("%.4f" % t for t in ms) + " cpu " + " ".join("%.4f" % t for t in cpu), flush=True)
            elif f[0] == "logits" and len(f) == 3:
                lg = dec.prefill(parse_tokens(f[1], dec.V))
                a = array.array("f", lg.tolist())
                if sys.byteorder == "big":
                    a.byteswap()
                with open(f[2], "wb") as out:
                    out.write(a.tobytes())
                print("ok %d" % len(a), flush=True)
            else:
                print("error unknown command %r" % line.strip(), flush=True)
        except (BadFile, OSError, RuntimeError) as e:
            print("error %s" % e, flush=True)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="model.safetensors (or its directory) or llm.c gpt2_*.bin")
    ap.add_argument("--heads", type=int, help="the number of heads (else config.json or GPT-2's table)")
    ap.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32",
                    help="the weight matrices and their products: fp32, or bf16 (the four projections and the LM head)")
    ap.add_argument("--autocast", action="store_true",
                    help="with --dtype fp32: every forward pass under torch.autocast(\"cpu\", torch.bfloat16)")
    ap.add_argument("--serve", action="store_true", required=True, help="line protocol on stdin/stdout")
    a = ap.parse_args(argv)
    if a.autocast and a.dtype != "fp32":
        ap.error("--autocast runs float32 weights in bf16 compute: it takes --dtype fp32")
    # cmd/trainbench stops this process itself: Ctrl-C at a terminal
    # reaches the whole process group and must not end it with a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        cfg, w = load(a.model, a.heads)
    except (BadFile, OSError, ValueError, KeyError, TypeError) as e:
        print("gpt2_decode.py: %s: %s" % (a.model, e), file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError as e:
        print("gpt2_decode.py: cannot import torch (%s): apt-get install python3-torch" % e, file=sys.stderr)
        return 3
    set_threads(torch, 1)
    with torch.inference_mode():
        dec = Decoder(torch, cfg, w, a.dtype, a.autocast)
        del w  # with bf16, the float32 matrices are no longer needed
        serve(torch, dec)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
