#!/usr/bin/env python3
"""TinyGPT (simdgpt's package gpt) trained with PyTorch, for cmd/trainbench.

The model and the optimizer are those of gpt, written out here with plain
torch operations: token and position embeddings; per block a pre-LayerNorm
(eps 1e-5), causal self-attention (x·w_qkv + b_qkv read as Q, K, V side by
side, each [B,T,H,D]; scores scaled by 1/sqrt(D); softmax; heads
concatenated; ·w_proj + b_proj) added to the residual, a second LayerNorm
and an MLP (·w_fc + b_fc, GELU in its tanh form, ·w_out + b_out) added to
the residual; a final LayerNorm and an untied linear head with a bias; the
mean cross-entropy. All fp32, or with --precision bf16 under
torch.autocast("cpu", torch.bfloat16) (matrix products in bfloat16). AdamW with betas 0.9 and 0.95, eps 1e-8,
weight decay only on the two-dimensional tensors (gpt.Config.DecayMask),
gradient clipping at a global L2 norm, and gpt.LRSchedule (linear warm-up,
cosine down to the minimum). The parameter names, shapes and order are
gpt.Config.Tensors().

Modes (see bench/torch/README.md):
  --check EXPECT   one step from --weights on the batch stored in EXPECT
                   (written by cmd/trainbench), comparing the loss, the
                   gradients and the parameters after the step with gpt's;
                   exit status 1 if they disagree beyond the tolerances.
  --bench N        N timed steps (batch drawing included), one "ms" line.
  --serve          a line protocol on stdin/stdout: "threads K", "run N"
                   (answers "ms t1 ... tN"), "quit".
  --roundtrip IN OUT  read a safetensors file and write it back (a test of
                   this script's reader and writer; needs no torch).

Only the Python standard library is needed to read and write safetensors;
torch is imported by the modes that train.
"""

import argparse
import array
import ctypes
import json
import math
import signal
import struct
import sys
import time

# Tolerances of --check. Loss: relative. Gradients: per tensor, absolute,
# as a fraction of the tensor's largest gradient (float32 sums over the
# batch in another order differ by a few ulps of the largest terms).
# Parameters after the step, in units of the learning rate, beyond what the
# gradient tolerance can cause through AdamW's first step (see run_check).
LOSS_TOL = 1e-5
GRAD_TOL = 1e-4
PARAM_TOL = 1e-3


# ---------------------------------------------------------------- safetensors

def read_safetensors(path):
    """Returns ({name: (shape, array('f'))}, metadata) of an F32 file."""
    with open(path, "rb") as f:
        b = f.read()
    if len(b) < 8:
        raise ValueError(f"{path}: too short for a safetensors header")
    (n,) = struct.unpack("<Q", b[:8])
    if 8 + n > len(b):
        raise ValueError(f"{path}: header length {n} beyond the file's {len(b)} bytes")
    header = json.loads(b[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {}) or {}
    data = b[8 + n:]
    out = {}
    # In the order of the data, so that writing them back in this order
    # reproduces the file's data section byte for byte.
    for name, e in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        if e["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name} has dtype {e['dtype']}, only F32 is read")
        lo, hi = e["data_offsets"]
        numel = math.prod(e["shape"])
        if hi - lo != 4 * numel or hi > len(data):
            raise ValueError(f"{path}: tensor {name}: offsets {lo}..{hi} do not hold shape {e['shape']}")
        a = array.array("f")
        a.frombytes(data[lo:hi])
        if sys.byteorder == "big":
            a.byteswap()
        out[name] = (list(e["shape"]), a)
    return out, meta


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_CRC32C = _crc32c_table()


def crc32c(data, crc=0):
    """CRC-32C (Castagnoli), as Go's hash/crc32 with crc32.Castagnoli."""
    t = _CRC32C
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def write_safetensors(path, tensors, metadata=None):
    """Writes [(name, shape, array('f'))] in order, little-endian F32, with
    the checksum gpt/safetensors requires: metadata "crc32c" holds the
    CRC-32C (8 hex digits) of the whole file computed with those digits
    set to "00000000" (a pure-Python CRC: a few seconds per 10 MB)."""
    header = {}
    off = 0
    for name, shape, a in tensors:
        if len(a) != math.prod(shape):
            raise ValueError(f"tensor {name}: {len(a)} values for shape {shape}")
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [off, off + 4 * len(a)]}
        off += 4 * len(a)
    meta = dict(metadata or {})
    meta.pop("data_crc32c", None)
    meta["crc32c"] = "00000000"
    header["__metadata__"] = meta
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)
    parts = [struct.pack("<Q", len(h)), h]
    for _, _, a in tensors:
        if sys.byteorder == "big":
            a = array.array("f", a)
            a.byteswap()
        parts.append(a.tobytes())
    out = bytearray().join(parts)
    field = b'"crc32c":"'
    at = 8 + h.index(field) + len(field)
    out[at:at + 8] = b"%08x" % crc32c(out)
    with open(path, "wb") as f:
        f.write(out)


def as_tensor(torch, a, shape):
    """A float32 tensor of shape holding a copy of array('f') a."""
    return torch.frombuffer(a, dtype=torch.float32).clone().view(list(shape))


def as_array(t):
    """array('f') holding the values of tensor t in row-major order."""
    a = array.array("f")
    a.frombytes(t.detach().contiguous().numpy().tobytes())
    return a


# ---------------------------------------------------------------- the model

def tensor_shapes(cfg):
    """gpt.Config.Tensors(): [(name, shape)] in the flat vector's order."""
    C, V, T = cfg.width, cfg.vocab, cfg.block
    ts = [("wte", [V, C]), ("wpe", [T, C])]
    for l in range(cfg.layers):
        p = f"h.{l}."
        ts += [(p + "ln1.w", [C]), (p + "ln1.b", [C]),
               (p + "attn.w_qkv", [C, 3 * C]), (p + "attn.b_qkv", [3 * C]),
               (p + "attn.w_proj", [C, C]), (p + "attn.b_proj", [C]),
               (p + "ln2.w", [C]), (p + "ln2.b", [C]),
               (p + "mlp.w_fc", [C, 4 * C]), (p + "mlp.b_fc", [4 * C]),
               (p + "mlp.w_out", [4 * C, C]), (p + "mlp.b_out", [C])]
    ts += [("ln_f.w", [C]), ("ln_f.b", [C]), ("w_lm", [C, V]), ("b_lm", [V])]
    return ts


def f32(x):
    """x rounded to float32 (as a Python float)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def lr_at(step, cfg):
    """gpt.LRSchedule.At, with its float32 roundings."""
    mx, mn = f32(cfg.lr), f32(cfg.min_lr)
    if step < cfg.warmup:
        return f32(f32(mx * f32(float(step + 1))) / f32(float(cfg.warmup)))
    if step >= cfg.max_iters or cfg.max_iters <= cfg.warmup:
        return mn
    frac = (step - cfg.warmup) / (cfg.max_iters - cfg.warmup)
    return f32(mn + f32(f32(0.5 * (1 + math.cos(math.pi * frac))) * f32(mx - mn)))


class GPT:
    """The parameters (named as gpt.Config.Tensors) and the loss."""

    def __init__(self, torch, cfg, init):
        self.torch = torch
        self.F = torch.nn.functional
        self.cfg = cfg
        self.names = [n for n, _ in tensor_shapes(cfg)]
        self.p = {}
        for name, shape in tensor_shapes(cfg):
            self.p[name] = init(name, shape).requires_grad_(True)
        T = cfg.block
        self.mask = torch.ones(T, T, dtype=torch.bool).triu(1)  # j > i is masked
        self.scale = 1.0 / math.sqrt(cfg.width // cfg.heads)

    def params(self):
        return [self.p[n] for n in self.names]

    def loss(self, x, y):
        torch, F, p, cfg = self.torch, self.F, self.p, self.cfg
        B, T = x.shape
        C, H = cfg.width, cfg.heads
        D = C // H
        h = p["wte"][x] + p["wpe"][:T]
        for l in range(cfg.layers):
            q = f"h.{l}."
            a = F.layer_norm(h, (C,), p[q + "ln1.w"], p[q + "ln1.b"], 1e-5)
            qkv = torch.addmm(p[q + "attn.b_qkv"], a.view(B * T, C), p[q + "attn.w_qkv"])
            qkv = qkv.view(B, T, 3, H, D).permute(2, 0, 3, 1, 4)  # [3,B,H,T,D]
            s = (qkv[0] @ qkv[1].transpose(-2, -1)) * self.scale
            s = s.masked_fill(self.mask[:T, :T], float("-inf")).softmax(-1)
            att = (s @ qkv[2]).transpose(1, 2).reshape(B * T, C)
            h = h + torch.addmm(p[q + "attn.b_proj"], att, p[q + "attn.w_proj"]).view(B, T, C)
            a = F.layer_norm(h, (C,), p[q + "ln2.w"], p[q + "ln2.b"], 1e-5)
            f = F.gelu(torch.addmm(p[q + "mlp.b_fc"], a.view(B * T, C), p[q + "mlp.w_fc"]), approximate="tanh")
            h = h + torch.addmm(p[q + "mlp.b_out"], f, p[q + "mlp.w_out"]).view(B, T, C)
        a = F.layer_norm(h, (C,), p["ln_f.w"], p["ln_f.b"], 1e-5)
        logits = torch.addmm(p["b_lm"], a.view(B * T, C), p["w_lm"])
        return F.cross_entropy(logits, y.reshape(B * T))


class Trainer:
    """One optimizer step per call of step: batch, forward, backward,
    clipping, AdamW with the learning rate of gpt's schedule."""

    def __init__(self, torch, cfg, model, tokens):
        self.torch, self.cfg, self.model = torch, cfg, model
        decay = [model.p[n] for n, s in tensor_shapes(cfg) if len(s) == 2]
        other = [model.p[n] for n, s in tensor_shapes(cfg) if len(s) != 2]
        self.opt = torch.optim.AdamW(
            [{"params": decay, "weight_decay": cfg.weight_decay},
             {"params": other, "weight_decay": 0.0}],
            lr=lr_at(0, cfg), betas=(0.9, 0.95), eps=1e-8)
        self.steps = 0
        self.tokens = tokens
        self.offsets = torch.arange(cfg.block)

    def batch(self):
        """B windows of T tokens at random starts, and the next tokens."""
        torch, cfg = self.torch, self.cfg
        starts = torch.randint(len(self.tokens) - cfg.block, (cfg.batch, 1))
        idx = starts + self.offsets
        return self.tokens[idx], self.tokens[idx + 1]

    def step(self, x=None, y=None):
        """One training step (drawing a batch unless given); returns the
        loss before the update."""
        if x is None:
            x, y = self.batch()
        lr = lr_at(self.steps, self.cfg)
        for g in self.opt.param_groups:
            g["lr"] = lr
        self.opt.zero_grad(set_to_none=True)
        if self.cfg.precision == "bf16":
            # Mixed precision as torch.autocast does it: the matrix
            # products in bfloat16, LayerNorm, softmax and the loss in
            # float32, parameters, gradients and AdamW state in float32.
            with self.torch.autocast("cpu", dtype=self.torch.bfloat16):
                loss = self.model.loss(x, y)
        else:
            loss = self.model.loss(x, y)
        loss.backward()
        if self.cfg.clip > 0:
            self.torch.nn.utils.clip_grad_norm_(self.model.params(), self.cfg.clip)
        self.opt.step()
        self.steps += 1
        return loss.item()


# ---------------------------------------------------------------- set-up

def parse_args(argv):
    ap = argparse.ArgumentParser(description="TinyGPT (simdgpt's gpt) trained with PyTorch, for cmd/trainbench")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--batch", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=65)
    ap.add_argument("--lr", type=float, default=1e-3, help="peak learning rate")
    ap.add_argument("--min-lr", type=float, default=None, help="end of the cosine (default lr/10)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up steps (default as gpt.DefaultTrainConfig)")
    ap.add_argument("--max-iters", type=int, default=1000, help="steps of the schedule")
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--clip", type=float, default=1.0, help="global gradient norm clip (0: none)")
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                    help="bf16: the step under torch.autocast(\"cpu\", torch.bfloat16) (--bench and --serve)")
    ap.add_argument("--weights", help="initial weights: a gpt checkpoint (safetensors)")
    ap.add_argument("--data", help="training tokens, raw little-endian uint16")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", metavar="EXPECT", help="one step, compared with gpt's (EXPECT from cmd/trainbench)")
    mode.add_argument("--bench", type=int, metavar="N", help="time N steps")
    mode.add_argument("--serve", action="store_true", help="line protocol on stdin/stdout")
    mode.add_argument("--roundtrip", nargs=2, metavar=("IN", "OUT"), help="copy a safetensors file through this script")
    ap.add_argument("--out", help="with --check: write the parameters after the step here")
    ap.add_argument("--tolerance", choices=["fp32", "bf16"], default="fp32",
                    help="with --check: the bounds of gpt's step in that precision against this float32 step")
    a = ap.parse_args(argv)
    if a.tolerance == "bf16":
        # gpt's bounds of a bf16 step against a float32 one (bf16LossTol,
        # bf16GradTol in gpt/precision.go).
        global LOSS_TOL, GRAD_TOL
        LOSS_TOL, GRAD_TOL = 1e-3, 2.5e-2
    if a.precision != "fp32" and (a.check or a.roundtrip):
        ap.error(f"--precision {a.precision}: only with --bench or --serve (--check compares float32 steps)")
    if a.min_lr is None:
        a.min_lr = a.lr / 10
    if a.warmup is None:
        a.warmup = min(100, max(1, a.max_iters // 20))
    for name in ("layers", "heads", "width", "block", "batch", "vocab", "max_iters", "threads"):
        if getattr(a, name) < 1:
            ap.error(f"--{name.replace('_', '-')} {getattr(a, name)}: must be at least 1")
    if a.width % a.heads:
        ap.error(f"--width {a.width} is not a multiple of --heads {a.heads}")
    return a


def import_torch():
    try:
        import torch
    except ImportError as e:
        sys.exit(f"train_gpt.py: cannot import torch ({e}); apt-get install python3-torch")
    return torch


def blas_thread_setter():
    """openblas_set_num_threads of an OpenBLAS loaded into this process (by
    torch, through libblas), or None. torch.set_num_threads does not reach
    a BLAS other than MKL, and OpenBLAS' own threads (as many as the CPUs
    by default) would run torch's matrix products on more threads than
    asked for."""
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({l.split()[-1] for l in f if "blas" in l.lower() and "/" in l})
    except OSError:
        return None
    for p in paths:
        try:
            fn = ctypes.CDLL(p).openblas_set_num_threads
        except (OSError, AttributeError):
            continue
        fn.argtypes, fn.restype = [ctypes.c_int], None
        return fn
    return None


def set_threads(torch, n):
    """Runs torch, and its BLAS when it is OpenBLAS, on n threads; returns
    the name of the BLAS whose threads were set too ("" for none)."""
    torch.set_num_threads(n)
    fn = blas_thread_setter()
    if fn is None:
        return ""
    fn(n)
    return "openblas"


def load_tokens(torch, cfg):
    if cfg.data is None:
        g = torch.Generator().manual_seed(cfg.seed)
        return torch.randint(cfg.vocab, (200000,), generator=g)
    a = array.array("H")
    with open(cfg.data, "rb") as f:
        a.frombytes(f.read())
    if sys.byteorder == "big":
        a.byteswap()
    if len(a) < cfg.block + 1:
        sys.exit(f"train_gpt.py: {cfg.data}: {len(a)} tokens, need at least block+1 = {cfg.block + 1}")
    if max(a) >= cfg.vocab:
        sys.exit(f"train_gpt.py: {cfg.data}: token {max(a)} outside the vocabulary of {cfg.vocab}")
    return torch.frombuffer(array.array("i", a), dtype=torch.int32).long()


def build(torch, cfg):
    """The model, initialised from --weights or (like gpt.New, with torch's
    generator) from --seed."""
    torch.manual_seed(cfg.seed)
    weights = {}
    if cfg.weights:
        weights, _ = read_safetensors(cfg.weights)

    def init(name, shape):
        if cfg.weights:
            if name not in weights:
                sys.exit(f"train_gpt.py: {cfg.weights}: tensor {name} is missing")
            s, a = weights[name]
            if s != shape:
                sys.exit(f"train_gpt.py: {cfg.weights}: tensor {name} has shape {s}, the arguments give {shape}")
            return as_tensor(torch, a, shape)
        if len(shape) == 1:
            return torch.ones(shape) if name.endswith(".w") else torch.zeros(shape)
        std = 0.02
        if name.endswith("w_proj") or name.endswith("w_out"):
            std /= math.sqrt(2 * cfg.layers)
        return torch.randn(shape) * std

    return GPT(torch, cfg, init)


# ---------------------------------------------------------------- modes

def run_check(torch, cfg, tr):
    """One step on the batch of cfg.check; prints the comparison, returns
    whether everything agrees."""
    exp, meta = read_safetensors(cfg.check)
    shape = [cfg.batch, cfg.block]
    for k in ("batch.x", "batch.y"):
        if k not in exp or exp[k][0] != shape:
            sys.exit(f"train_gpt.py: {cfg.check}: no {k} of shape {shape}")
    x = as_tensor(torch, exp["batch.x"][1], shape).long()
    y = as_tensor(torch, exp["batch.y"][1], shape).long()
    lr = lr_at(0, cfg)
    if "lr" in meta and f32(float(meta["lr"])) != lr:
        sys.exit(f"train_gpt.py: gpt's first learning rate {meta['lr']} is not this schedule's {lr!r}")
    model = tr.model
    before = {n: model.p[n].detach().clone() for n in model.names}
    # The step of Trainer.step, keeping the gradients before clipping.
    for g in tr.opt.param_groups:
        g["lr"] = lr
    tr.opt.zero_grad(set_to_none=True)
    loss_t = model.loss(x, y)
    loss_t.backward()
    grads = {n: model.p[n].grad.detach().clone() for n in model.names}
    if cfg.clip > 0:
        torch.nn.utils.clip_grad_norm_(model.params(), cfg.clip)
    tr.opt.step()
    loss = loss_t.item()

    ok = True
    loss_go = float(meta["loss"])
    rel = abs(loss - loss_go) / abs(loss_go)
    good = rel <= LOSS_TOL
    ok &= good
    print(f"check loss gpt={loss_go:.9g} torch={loss:.9g} rel={rel:.3g} tol={LOSS_TOL:g} {'ok' if good else 'FAIL'}")

    worst_g, worst_gn, gpt_grads, grad_tol = 0.0, "", {}, {}
    for n in model.names:
        go = as_tensor(torch, exp["grad." + n][1], grads[n].shape)
        scale = max(go.abs().max().item(), 1e-30)
        d = (grads[n] - go).abs().max().item() / scale
        if math.isnan(d) or go.isnan().any():
            d = math.inf
        if d > worst_g:
            worst_g, worst_gn = d, n
        gpt_grads[n], grad_tol[n] = go, GRAD_TOL * scale
    good = worst_g <= GRAD_TOL
    ok &= good
    print(f"check grads max|Δg|/max|g|={worst_g:.3g} ({worst_gn or '-'}) tol={GRAD_TOL:g} {'ok' if good else 'FAIL'}")

    # The first AdamW step moves a parameter by lr·(u + wd·p) with
    # u = ĝ/(|ĝ|+eps), ĝ the clipped gradient. A gradient error up to δ
    # changes u by at most eps·δ/(|ĝ|-δ)² (by 2 when |ĝ| <= δ, where the
    # sign of g is rounding noise): that allowance, plus PARAM_TOL·lr and
    # 4 ulps of the parameter, bounds the difference of the parameters.
    eps = 1e-8
    norm = math.sqrt(sum((g.double() ** 2).sum().item() for g in gpt_grads.values()))
    clip = min(1.0, cfg.clip / norm) if cfg.clip > 0 and norm > cfg.clip else 1.0
    worst_p, worst_pn, loose, raw = 0.0, "", 0, 0.0
    for n in model.names:
        go = as_tensor(torch, exp["param." + n][1], before[n].shape).double()
        pt = model.p[n].detach().double()
        ulp = 4 * torch.maximum(before[n].double().abs(), go.abs()) * 2.0 ** -23
        g, dg = clip * gpt_grads[n].double().abs(), clip * grad_tol[n]
        allow = (eps * dg / (g - dg).clamp(min=1e-30) ** 2).clamp(max=2)
        allow[g <= dg] = 2
        loose += int((allow > PARAM_TOL).sum().item())
        diff = ((pt - go).abs() - ulp).clamp(min=0) / lr
        raw = max(raw, diff.max().item())
        excess = (diff - allow).clamp(min=0)
        if excess.isnan().any():
            worst_p, worst_pn = math.inf, n + " (NaN)"
        elif excess.max().item() > worst_p:
            worst_p, worst_pn = excess.max().item(), n
    good = worst_p <= PARAM_TOL
    ok &= good
    print(f"check params max|Δp|/lr={raw:.3g}, beyond the allowance for the gradient tolerance {worst_p:.3g} ({worst_pn or '-'}) "
          f"tol={PARAM_TOL:g} ({loose} of {sum(p.numel() for p in model.params())} with an allowance above tol) {'ok' if good else 'FAIL'}")
    if cfg.out:
        write_safetensors(cfg.out, [(n, s, as_array(model.p[n]))
                                    for n, s in tensor_shapes(cfg)], {"loss": repr(loss)})
    print("check " + ("PASS" if ok else "FAIL"))
    return ok


def run_steps(tr, n):
    """n timed steps (batch drawing included); milliseconds of each."""
    ms = []
    for _ in range(n):
        t0 = time.perf_counter()
        tr.step()
        ms.append(1000 * (time.perf_counter() - t0))
    return ms


def serve(torch, tr):
    blas = "openblas" if blas_thread_setter() else "other"
    print(f"ready {sum(p.numel() for p in tr.model.params())} blas={blas}", flush=True)
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        if f[0] == "quit":
            return
        if f[0] == "threads" and len(f) == 2 and f[1].isdigit() and int(f[1]) >= 1:
            set_threads(torch, int(f[1]))
            print(f"ok {torch.get_num_threads()}", flush=True)
        elif f[0] == "run" and len(f) == 2 and f[1].isdigit():
            ms = run_steps(tr, int(f[1]))
            print("ms " + " ".join(f"{t:.4f}" for t in ms), flush=True)
        else:
            print(f"error unknown command {line.strip()!r}", flush=True)


def main(argv):
    cfg = parse_args(argv)
    if cfg.roundtrip:
        ts, meta = read_safetensors(cfg.roundtrip[0])
        write_safetensors(cfg.roundtrip[1], [(n, s, a) for n, (s, a) in ts.items()], meta)
        return 0
    if cfg.check or cfg.serve:
        # cmd/trainbench runs these modes and stops them itself: Ctrl-C at
        # a terminal reaches the whole process group, and must not end
        # this process with a traceback while trainbench is stopping.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch = import_torch()
    set_threads(torch, cfg.threads)
    model = build(torch, cfg)
    tr = Trainer(torch, cfg, model, load_tokens(torch, cfg))
    if cfg.check:
        return 0 if run_check(torch, cfg, tr) else 1
    if cfg.serve:
        serve(torch, tr)
        return 0
    tr.step()  # warm-up
    ms = run_steps(tr, cfg.bench)
    print("ms " + " ".join(f"{t:.4f}" for t in ms))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
