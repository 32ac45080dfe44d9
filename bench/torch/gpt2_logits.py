#!/usr/bin/env python3
"""GPT-2's logits computed by PyTorch from a checkpoint file: an oracle for
gpt.LoadGPT2 that shares no code with simdgpt.

Written from GPT-2's definition: the sum of the token and position
embeddings; per block a pre-LayerNorm (eps from config.json, else 1e-5),
causal self-attention (x·W_attn + b_attn read as Q, K, V side by side, each
split into H heads of D = C/H; scores scaled by 1/sqrt(D), positions after
the query masked, softmax; heads concatenated; ·W_proj + b_proj) added to
the residual, a second LayerNorm and an MLP (·W_fc + b_fc, GELU in its tanh
form, ·W_proj + b_proj) added to the residual; a final LayerNorm and the LM
head tied to the token embedding (logits = x·wteᵀ). Everything in float32.

Checkpoints (the format is recognised from the first bytes):
  - Hugging Face model.safetensors (or a directory holding one): tensors
    wte.weight, wpe.weight, h.N.{ln_1,attn.c_attn,attn.c_proj,ln_2,mlp.c_fc,
    mlp.c_proj}.{weight,bias}, ln_f.{weight,bias}, optionally prefixed
    "transformer."; Conv1D weights in×out; dtypes F32, F16 or BF16. The
    attention mask buffers attn.bias and attn.masked_bias are ignored; an
    lm_head.weight must equal wte.weight. The heads come from --heads, else
    from n_head in a config.json beside the file, else from GPT-2's family
    table (width 768→12, 1024→16, 1280→20, 1600→25).
  - llm.c gpt2_*.bin: 256 little-endian int32 (magic 20240326, version 3
    for float32 or 5 for bfloat16, maxT, V, L, NH, C, Vp), then wte [Vp,C],
    wpe [maxT,C] and per kind of tensor all layers at once (ln1w, ln1b,
    qkvw [3C,C], qkvb, attprojw [C,C], attprojb, ln2w, ln2b, fcw [4C,C],
    fcb, fcprojw [C,4C], fcprojb), then lnfw, lnfb; matrices out×in. The
    padding rows of wte past V are dropped: logits are over the V tokens.

Usage:
  gpt2_logits.py MODEL [MODEL ...] --tokens 3,14,15 [--tokens ...]
                 [--heads H] [--out FILE]

For every MODEL and every --tokens sequence (in that order, models outer)
the logits [len(tokens), V] are printed as text (a "# MODEL sequence i:
T×V logits" line, then one line per position, 9 significant digits, which
round-trip float32), or with --out written to FILE as little-endian
float32, all of them concatenated. Exit status 2 on a bad file or
argument, 3 when torch cannot be imported (the message says so).

Only the Python standard library reads the files (json, struct, array);
torch computes the model (tested with Debian's torch 1.13).
"""

import argparse
import array
import json
import math
import os
import struct
import sys

HF_FILE = "model.safetensors"
HF_CONFIG = "config.json"
LLMC_MAGIC = 20240326
LLMC_TOKENS_MAGIC = 20240520

# The names of a block's tensors in GPT-2's safetensors (after "h.N.").
BLOCK_NAMES = [
    "ln_1.weight", "ln_1.bias",
    "attn.c_attn.weight", "attn.c_attn.bias",
    "attn.c_proj.weight", "attn.c_proj.bias",
    "ln_2.weight", "ln_2.bias",
    "mlp.c_fc.weight", "mlp.c_fc.bias",
    "mlp.c_proj.weight", "mlp.c_proj.bias",
]
TOP_NAMES = ["wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias"]
FAMILY_HEADS = {768: 12, 1024: 16, 1280: 20, 1600: 25}


class BadFile(Exception):
    """A checkpoint this script does not read, with the reason."""


# ---------------------------------------------------------------- decoding

def decode(data, dtype):
    """Returns the little-endian values of dtype in data as array('f')."""
    if dtype == "F32":
        a = array.array("f")
        a.frombytes(data)
    elif dtype == "F16":
        a = array.array("f", struct.unpack("<%de" % (len(data) // 2), data))
    elif dtype == "BF16":
        h = array.array("H")
        h.frombytes(data)
        if sys.byteorder == "big":
            h.byteswap()
        # A bfloat16 is the high half of a float32.
        a = array.array("f")
        a.frombytes(array.array("I", (x << 16 for x in h)).tobytes())
        return a
    else:
        raise BadFile("dtype %s (F32, F16 and BF16 are read)" % dtype)
    if dtype == "F32" and sys.byteorder == "big":
        a.byteswap()
    return a


# ---------------------------------------------------------------- safetensors

def read_safetensors(path):
    """Returns {name: (shape, array('f'))} of every tensor in the file."""
    with open(path, "rb") as f:
        b = f.read()
    if len(b) < 8:
        raise BadFile("too short for a safetensors header")
    (n,) = struct.unpack("<Q", b[:8])
    if 8 + n > len(b):
        raise BadFile("safetensors header of %d bytes in a file of %d" % (n, len(b)))
    header = json.loads(b[8:8 + n].decode("utf-8"))
    if not isinstance(header, dict):
        raise BadFile("safetensors header is not a JSON object")
    data = b[8 + n:]
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        dtype, shape, (start, end) = e["dtype"], list(e["shape"]), e["data_offsets"]
        size = {"F32": 4, "F16": 2, "BF16": 2}.get(dtype)
        if size is None:
            raise BadFile("tensor %s: dtype %s (F32, F16 and BF16 are read)" % (name, dtype))
        count = math.prod(shape)
        if not 0 <= start <= end <= len(data) or end - start != count * size:
            raise BadFile("tensor %s: bytes [%d, %d) of a data section of %d for %d %s elements"
                          % (name, start, end, len(data), count, dtype))
        out[name] = (shape, decode(data[start:end], dtype))
    return out


def load_hf(path, heads):
    """Returns (config, weights) of a Hugging Face GPT-2 safetensors file:
    weights by GPT-2's names (no prefix), Conv1D matrices in×out."""
    raw = read_safetensors(path)
    w = {}
    lm_head = None
    for name, t in raw.items():
        short = name[len("transformer."):] if name.startswith("transformer.") else name
        if short == "lm_head.weight":
            lm_head = t
            continue
        parts = short.split(".", 2)
        if parts[0] == "h" and len(parts) == 3 and parts[1].isdigit():
            if parts[2] in ("attn.bias", "attn.masked_bias"):
                continue  # the causal mask buffers, not parameters
            if parts[2] not in BLOCK_NAMES:
                raise BadFile("tensor %s is not part of GPT-2's layout" % name)
        elif short not in TOP_NAMES:
            raise BadFile("tensor %s is not part of GPT-2's layout" % name)
        if short in w:
            raise BadFile("tensor %s is there twice (with and without the prefix)" % short)
        w[short] = t
    for n in TOP_NAMES:
        if n not in w:
            raise BadFile("tensor %s is missing" % n)
    (V, C), (T, _) = w["wte.weight"][0], w["wpe.weight"][0]
    L = 0
    while "h.%d.ln_1.weight" % L in w:
        L += 1
    want = {"wte.weight": [V, C], "wpe.weight": [T, C], "ln_f.weight": [C], "ln_f.bias": [C]}
    for l in range(L):
        for n, s in zip(BLOCK_NAMES, [[C], [C], [C, 3 * C], [3 * C], [C, C], [C],
                                      [C], [C], [C, 4 * C], [4 * C], [4 * C, C], [C]]):
            want["h.%d.%s" % (l, n)] = s
    for n, s in want.items():
        if n not in w:
            raise BadFile("tensor %s is missing" % n)
        if w[n][0] != s:
            raise BadFile("tensor %s has shape %s, want %s" % (n, w[n][0], s))
    if len(w) != len(want):
        raise BadFile("blocks are missing: %d tensors past the %d layers found" % (len(w) - len(want), L))
    if lm_head is not None and (lm_head[0] != [V, C] or lm_head[1] != w["wte.weight"][1]):
        raise BadFile("lm_head.weight differs from wte.weight: GPT-2's head is tied")
    cfg_path = os.path.join(os.path.dirname(path), HF_CONFIG)
    hf = {}
    if os.path.exists(cfg_path):
        with open(cfg_path) as f:
            hf = json.load(f)
    if heads is None:
        heads = hf.get("n_head") or FAMILY_HEADS.get(C)
    if not heads:
        raise BadFile("no --heads, no config.json with n_head, and width %d is not GPT-2's family's" % C)
    eps = hf.get("layer_norm_epsilon", 1e-5)
    cfg = {"V": V, "T": T, "L": L, "H": heads, "C": C, "eps": eps}
    return cfg, {n: t[1] for n, t in w.items()}


# ---------------------------------------------------------------- llm.c

def load_llmc(path, heads):
    """Returns (config, weights) of an llm.c gpt2_*.bin, the weights by
    GPT-2's Hugging Face names with the matrices transposed to in×out."""
    with open(path, "rb") as f:
        b = f.read()
    if len(b) < 1024:
        raise BadFile("llm.c checkpoint of %d bytes: shorter than its 1024-byte header" % len(b))
    magic, version, T, V, L, NH, C, Vp = struct.unpack("<8i", b[:32])
    if magic != LLMC_MAGIC:
        raise BadFile("magic %d, not llm.c's %d" % (magic, LLMC_MAGIC))
    dtype = {3: "F32", 5: "BF16"}.get(version)
    if dtype is None:
        raise BadFile("llm.c version %d (3, float32, and 5, bfloat16, are read)" % version)
    if min(T, V, L, NH, C) < 1 or Vp < V or C % NH:
        raise BadFile("llm.c header maxT %d V %d L %d NH %d C %d Vp %d" % (T, V, L, NH, C, Vp))
    if heads is not None and heads != NH:
        raise BadFile("--heads %d, the file's header says %d" % (heads, NH))
    size = 4 if dtype == "F32" else 2
    params = Vp * C + T * C + L * (12 * C * C + 13 * C) + 2 * C
    if len(b) != 1024 + params * size:
        raise BadFile("llm.c checkpoint of %d bytes; its header needs %d" % (len(b), 1024 + params * size))
    vals = decode(b[1024:], dtype)
    pos = 0

    def take(n):
        nonlocal pos
        pos += n
        return vals[pos - n:pos]

    def transposed(a, rows, cols):
        """a [rows,cols] (out×in) as [cols,rows] (in×out)."""
        t = array.array("f", bytes(4 * rows * cols))
        for o in range(rows):
            t[o::rows] = a[o * cols:(o + 1) * cols]
        return t

    w = {"wte.weight": take(Vp * C)[:V * C], "wpe.weight": take(T * C)}
    for name, rows, cols in [
        ("ln_1.weight", 0, C), ("ln_1.bias", 0, C),
        ("attn.c_attn.weight", 3 * C, C), ("attn.c_attn.bias", 0, 3 * C),
        ("attn.c_proj.weight", C, C), ("attn.c_proj.bias", 0, C),
        ("ln_2.weight", 0, C), ("ln_2.bias", 0, C),
        ("mlp.c_fc.weight", 4 * C, C), ("mlp.c_fc.bias", 0, 4 * C),
        ("mlp.c_proj.weight", C, 4 * C), ("mlp.c_proj.bias", 0, C),
    ]:
        for l in range(L):
            if rows:
                w["h.%d.%s" % (l, name)] = transposed(take(rows * cols), rows, cols)
            else:
                w["h.%d.%s" % (l, name)] = take(cols)
    w["ln_f.weight"], w["ln_f.bias"] = take(C), take(C)
    assert pos == len(vals)
    return {"V": V, "T": T, "L": L, "H": NH, "C": C, "eps": 1e-5}, w


def load(path, heads):
    """Returns (config, weights as array('f') by GPT-2's names) of a file
    in either format."""
    if os.path.isdir(path):
        path = os.path.join(path, HF_FILE)
    with open(path, "rb") as f:
        head = f.read(9)
    if len(head) >= 4:
        (magic,) = struct.unpack("<i", head[:4])
        if magic == LLMC_MAGIC:
            return load_llmc(path, heads)
        if magic == LLMC_TOKENS_MAGIC:
            raise BadFile("an llm.c token file, not model weights")
    if len(head) == 9 and head[8:9] == b"{":
        return load_hf(path, heads)
    raise BadFile("neither a safetensors file nor an llm.c checkpoint")


# ---------------------------------------------------------------- the model

def logits(torch, cfg, w, tokens):
    """GPT-2's logits [len(tokens), V] for one sequence, in float32."""
    F = torch.nn.functional
    V, L, H, C, eps = cfg["V"], cfg["L"], cfg["H"], cfg["C"], cfg["eps"]
    D = C // H

    def t(name, *shape):
        return torch.frombuffer(w[name], dtype=torch.float32).reshape(*shape)

    n = len(tokens)
    if n > cfg["T"] or any(not 0 <= x < V for x in tokens):
        raise BadFile("tokens %s: at most %d of [0, %d)" % (tokens, cfg["T"], V))
    wte = t("wte.weight", V, C)
    idx = torch.tensor(tokens, dtype=torch.long)
    x = wte[idx] + t("wpe.weight", cfg["T"], C)[:n]
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    for l in range(L):
        p = "h.%d." % l
        a = F.layer_norm(x, (C,), t(p + "ln_1.weight", C), t(p + "ln_1.bias", C), eps)
        qkv = torch.addmm(t(p + "attn.c_attn.bias", 3 * C), a, t(p + "attn.c_attn.weight", C, 3 * C))
        q, k, v = (qkv[:, i * C:(i + 1) * C].reshape(n, H, D).transpose(0, 1) for i in range(3))
        s = (q @ k.transpose(1, 2)) / math.sqrt(D)  # [H, n, n]
        s = s.masked_fill(~causal, float("-inf"))
        y = (torch.softmax(s, dim=-1) @ v).transpose(0, 1).reshape(n, C)
        x = x + torch.addmm(t(p + "attn.c_proj.bias", C), y, t(p + "attn.c_proj.weight", C, C))
        m = F.layer_norm(x, (C,), t(p + "ln_2.weight", C), t(p + "ln_2.bias", C), eps)
        h = F.gelu(torch.addmm(t(p + "mlp.c_fc.bias", 4 * C), m, t(p + "mlp.c_fc.weight", C, 4 * C)),
                   approximate="tanh")
        x = x + torch.addmm(t(p + "mlp.c_proj.bias", C), h, t(p + "mlp.c_proj.weight", 4 * C, C))
    x = F.layer_norm(x, (C,), t("ln_f.weight", C), t("ln_f.bias", C), eps)
    return x @ wte.t()


def parse_tokens(s):
    try:
        return [int(x) for x in s.split(",") if x.strip() != ""]
    except ValueError:
        raise argparse.ArgumentTypeError("tokens %r: a comma-separated list of integers" % s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+", help="model.safetensors (or its directory) or llm.c gpt2_*.bin")
    ap.add_argument("--tokens", type=parse_tokens, action="append", required=True,
                    help="a comma-separated token sequence (repeat for several)")
    ap.add_argument("--heads", type=int, help="the number of heads (else config.json or GPT-2's table)")
    ap.add_argument("--out", help="write the logits here as little-endian float32 instead of printing them")
    args = ap.parse_args()

    models = []
    for path in args.models:
        try:
            models.append((path,) + load(path, args.heads))
        except (BadFile, OSError, ValueError, KeyError, TypeError) as e:
            print("gpt2_logits.py: %s: %s" % (path, e), file=sys.stderr)
            sys.exit(2)
    try:
        import torch
    except ImportError as e:
        print("gpt2_logits.py: cannot import torch (%s): apt-get install python3-torch" % e, file=sys.stderr)
        sys.exit(3)
    torch.set_num_threads(1)

    out = open(args.out, "wb") if args.out else None
    with torch.no_grad():
        for path, cfg, w in models:
            for i, seq in enumerate(args.tokens):
                try:
                    lg = logits(torch, cfg, w, seq)
                except BadFile as e:
                    print("gpt2_logits.py: %s: %s" % (path, e), file=sys.stderr)
                    sys.exit(2)
                if out:
                    a = array.array("f", lg.reshape(-1).tolist())
                    if sys.byteorder == "big":
                        a.byteswap()
                    out.write(a.tobytes())
                else:
                    print("# %s sequence %d: %d×%d logits" % (path, i, lg.shape[0], lg.shape[1]))
                    for row in lg.tolist():
                        print(" ".join("%.9g" % v for v in row))
    if out:
        out.close()


if __name__ == "__main__":
    main()
