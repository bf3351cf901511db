"""Where SGP's bookkeeping sits in a training iteration, measured on one device with a
real model, against dtperf's SGP timeline.

dtperf's overlapped SGP (include/dtperf/gossip.hpp) is a max-plus recursion: an iteration
computes (forward, backward, optimizer step), waits for the push sent one iteration
earlier, mixes, and sends again, so a steady iteration takes about

    max(compute + mix, transfer + mix)

with SGP's memory passes charged once each over the model's bytes. SGP's reference
implementation (GossipDataParallel in facebookresearch/stochastic_gradient_push, overlap
mode) does per-tensor work on the main thread instead (validation/sgp_bookkeeping.py
counts it): before forward, after the wait for its gossip thread, it reads a device flag
(a host synchronisation), adds the received residual, mixes and copies every tensor into
the send buffer and from there on the gossip stream, then de-biases every tensor; after
backward it multiplies every tensor back into a push-sum numerator. The gossip thread
flattens the send buffer, exchanges it, unflattens what it received and synchronises.

This script runs that loop on one device with a real transformer-base (fairseq's WMT
shapes: 253 tensors, 60.9 M parameters; fp32 parameters, fp16 autocast and a loss
scaler) and replaces the network by a delay of a chosen length on the gossip stream
(`torch.cuda._sleep`: a kernel that occupies the stream as a transfer would, so the host
issues everything around it exactly as with a real transport; on a CPU, a sleep in the
gossip thread). Per tokens-per-device and delay it times the steady iteration of:

  plain      forward, backward, step (no gossip)
  reference  the reference implementation's per-tensor bookkeeping and gossip thread
  fused      the same thread and synchronisation, every per-tensor pass done once over a
             flat buffer that holds the parameters (what dtperf charges)

With no delay the iteration is compute-bound: reference - plain is what the bookkeeping
adds to the compute chain. With a delay longer than the computation it is transfer-bound:
reference - delay is what sits between the wait and the next send.

  python3 validation/sgp_timeline.py cuda -o sgp-timeline.json   # or cpu (a smoke test)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import threading
import time
from contextlib import AbstractContextManager
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 32768
MODEL_DIM = 512
FFN_DIM = 2048
HEADS = 8
LAYERS = 6


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.v, self.out = (nn.Linear(MODEL_DIM, MODEL_DIM) for _ in range(4))

    def forward(self, x: torch.Tensor, memory: torch.Tensor, causal: bool) -> torch.Tensor:
        b, t, _ = x.shape
        s = memory.shape[1]

        def heads(y: torch.Tensor, n: int) -> torch.Tensor:
            return y.view(b, n, HEADS, MODEL_DIM // HEADS).transpose(1, 2)

        q, k, v = heads(self.q(x), t), heads(self.k(memory), s), heads(self.v(memory), s)
        scores = q @ k.transpose(-1, -2) / math.sqrt(MODEL_DIM // HEADS)
        if causal:
            mask = torch.ones(t, s, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
        y = F.dropout(scores.softmax(-1), 0.1, self.training) @ v
        return self.out(y.transpose(1, 2).reshape(b, t, MODEL_DIM))


class Layer(nn.Module):
    """Post-norm transformer layer; a decoder layer adds attention over the encoder."""

    def __init__(self, decoder: bool) -> None:
        super().__init__()
        self.self_attention = Attention()
        self.self_norm = nn.LayerNorm(MODEL_DIM)
        self.cross_attention = Attention() if decoder else None
        self.cross_norm = nn.LayerNorm(MODEL_DIM) if decoder else None
        self.fc1 = nn.Linear(MODEL_DIM, FFN_DIM)
        self.fc2 = nn.Linear(FFN_DIM, MODEL_DIM)
        self.ffn_norm = nn.LayerNorm(MODEL_DIM)

    def forward(self, x: torch.Tensor, memory: torch.Tensor | None = None) -> torch.Tensor:
        drop = lambda y: F.dropout(y, 0.1, self.training)  # noqa: E731
        x = self.self_norm(x + drop(self.self_attention(x, x, causal=memory is not None)))
        if memory is not None:
            assert self.cross_attention is not None and self.cross_norm is not None  # a decoder layer
            x = self.cross_norm(x + drop(self.cross_attention(x, memory, causal=False)))
        return self.ffn_norm(x + drop(self.fc2(drop(F.relu(self.fc1(x))))))


class TransformerBase(nn.Module):
    """fairseq's transformer_wmt_en_de with a joined, shared embedding: 253 tensors."""

    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, MODEL_DIM)
        self.encoder = nn.ModuleList(Layer(False) for _ in range(LAYERS))
        self.decoder = nn.ModuleList(Layer(True) for _ in range(LAYERS))

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        t = tokens.shape[1]
        position = torch.arange(t, device=tokens.device, dtype=torch.float32)[:, None]
        rate = torch.exp(torch.arange(0, MODEL_DIM, 2, device=tokens.device) * (-math.log(1e4) / MODEL_DIM))
        sinusoid = torch.cat([torch.sin(position * rate), torch.cos(position * rate)], dim=1)
        return F.dropout(self.embedding(tokens) * math.sqrt(MODEL_DIM) + sinusoid, 0.1, self.training)

    def forward(self, source: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        memory = self.embed(source)
        for layer in self.encoder:
            memory = layer(memory)
        x = self.embed(target)
        for layer in self.decoder:
            x = layer(x, memory)
        logits = x @ self.embedding.weight.t()
        return F.cross_entropy(logits.float().view(-1, VOCAB), target.reshape(-1))


class Device:
    """The few device calls that differ between CUDA and the CPU smoke test."""

    def __init__(self, name: str) -> None:
        self.device = torch.device(name)
        self.cuda = self.device.type == "cuda"
        self.cycles_per_s = self._sleep_rate() if self.cuda else 0.0

    def synchronize(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def stream(self) -> torch.cuda.Stream | None:
        return torch.cuda.Stream() if self.cuda else None

    def on(self, stream: torch.cuda.Stream | None) -> AbstractContextManager[Any]:
        return torch.cuda.stream(stream) if self.cuda else contextlib.nullcontext()

    def _sleep_rate(self) -> float:
        cycles = 200_000_000
        torch.cuda._sleep(1000)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        end.synchronize()
        return cycles / (start.elapsed_time(end) * 1e-3)

    def transfer(self, seconds: float, stream: torch.cuda.Stream | None) -> None:
        """The network: occupies `stream` for `seconds`, as a transport's kernel would."""
        if seconds <= 0.0:
            return
        if self.cuda:
            with torch.cuda.stream(stream):
                torch.cuda._sleep(int(seconds * self.cycles_per_s))
        else:
            time.sleep(seconds)


class Gossip:
    """SGP's overlap mode around `model`: per-tensor (the reference) or over one flat buffer."""

    def __init__(self, model: nn.Module, dev: Device, fused: bool, transfer_s: float) -> None:
        self.dev, self.fused, self.transfer_s = dev, fused, transfer_s
        self.params = list(model.parameters())
        if fused:  # the parameters become views of one flat buffer
            self.flat = torch.cat([p.detach().reshape(-1) for p in self.params])
            offset = 0
            for p in self.params:
                p.data = self.flat[offset:offset + p.numel()].view_as(p)
                offset += p.numel()
            self.flat_buffer = self.flat.clone()
        else:
            self.buffers = [p.detach().clone() for p in self.params]
        self.ps_weight = torch.ones(1, device=dev.device)
        self.gossip_ps_weight = self.ps_weight.clone()
        self.factor = torch.full((1,), 0.5, device=dev.device)
        self.stream: Any = dev.stream()  # None on the CPU, where only self.dev.on takes it
        self.gossip_flag, self.train_flag = threading.Event(), threading.Event()
        self.gossiping = False
        self.stop = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    # -- the main thread's part (the reference's forward pre-hook and backward hook)
    def before_forward(self) -> None:
        if self.gossiping:
            self.gossip_flag.wait()
            if bool(self.gossip_ps_weight[0] == -1):  # reads a device value: a synchronisation
                raise RuntimeError("gossip interrupted")
            self.ps_weight += self.gossip_ps_weight
            if self.fused:
                self.flat.add_(self.flat_buffer)
            else:
                for p, r in zip(self.params, self.buffers):
                    p.data.add_(r)
            self.gossip_flag.clear()
        # transfer_params: mix, copy into the send buffer, and from there on the gossip stream
        self.ps_weight *= self.factor
        self.gossip_ps_weight.copy_(self.ps_weight)
        if self.fused:
            self.flat.mul_(self.factor)
            self.flat_buffer.copy_(self.flat)
        else:
            for p, b in zip(self.params, self.buffers):
                p.data.mul_(self.factor)
                b.copy_(p.data)
        if self.dev.cuda:
            self.stream.wait_stream(torch.cuda.current_stream())
        with self.dev.on(self.stream):
            if self.fused:
                self.flat_buffer.copy_(self.flat_buffer)
            else:
                for b in self.buffers:
                    b.copy_(b, non_blocking=True)
        self.gossiping = True
        self.train_flag.set()
        # de-bias
        if self.fused:
            self.flat.div_(self.ps_weight)
        else:
            for p in self.params:
                p.data.div_(self.ps_weight)

    def after_backward(self) -> None:  # back to push-sum numerators
        if self.fused:
            self.flat.mul_(self.ps_weight)
        else:
            for p in self.params:
                p.data.mul_(self.ps_weight)

    # -- the gossip thread: flatten, exchange, unflatten, synchronise
    def _loop(self) -> None:
        while True:
            self.train_flag.wait()
            if self.stop:
                return
            with self.dev.on(self.stream):
                message = self.flat_buffer if self.fused else torch.cat([b.reshape(-1) for b in self.buffers])
                message.mul_(self.factor)
                self.dev.transfer(self.transfer_s, self.stream)
                message.add_(message)
                if not self.fused:
                    offset = 0
                    for b in self.buffers:
                        b.copy_(message[offset:offset + b.numel()].view_as(b))
                        offset += b.numel()
                self.gossip_ps_weight.mul_(self.factor)
            if self.dev.cuda:
                self.stream.synchronize()
            self.train_flag.clear()
            self.gossip_flag.set()

    def close(self) -> None:
        if self.gossiping:
            self.gossip_flag.wait()
        self.stop = True
        self.train_flag.set()
        self.thread.join()


def timed_iterations(dev: Device, tokens: int, variant: str, transfer_s: float, warmup: int,
                     iterations: int) -> dict[str, float]:
    torch.manual_seed(0)
    model = TransformerBase().to(dev.device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda") if dev.cuda else None
    gossip = None if variant == "plain" else Gossip(model, dev, variant == "fused", transfer_s)
    sentences = max(1, tokens // 125)
    length = tokens // sentences
    source = torch.randint(0, VOCAB, (sentences, length), device=dev.device)
    target = torch.randint(0, VOCAB, (sentences, length), device=dev.device)

    hook_ms: list[float] = []

    def iteration() -> None:
        if gossip:
            start = time.perf_counter()
            gossip.before_forward()
            hook_ms.append((time.perf_counter() - start) * 1e3)
        with torch.autocast(dev.device.type, dtype=torch.float16 if dev.cuda else torch.bfloat16):
            loss = model(source, target)
        (scaler.scale(loss) if scaler else loss).backward()
        if gossip:
            gossip.after_backward()
        if scaler:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(warmup):
        iteration()
    dev.synchronize()
    hook_ms.clear()
    stamps = [time.perf_counter()]
    for _ in range(iterations):
        iteration()
        stamps.append(time.perf_counter())
    dev.synchronize()
    if gossip:
        gossip.close()
    steps = [(b - a) * 1e3 for a, b in zip(stamps, stamps[1:])]
    result = {"median_ms": statistics.median(steps), "mean_ms": statistics.fmean(steps)}
    if hook_ms:  # the host's time in the main thread's part before forward (waiting included)
        result["before_forward_host_ms"] = statistics.median(hook_ms)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("device", nargs="?", default="cpu")
    parser.add_argument("--tokens", default="3125,1563,781", help="tokens per device, comma-separated")
    parser.add_argument("--delays", default="0,0.5,1,1.5", help="transfer delays as multiples of the plain iteration")
    parser.add_argument("--warmup", type=int, default=15)
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("-o", "--output")
    args = parser.parse_args()
    dev = Device(args.device)
    report = {
        "device": torch.cuda.get_device_name() if dev.cuda else "cpu",
        "torch": torch.__version__,
        "tensors": sum(1 for _ in TransformerBase().parameters()),
        "runs": [],
    }
    for tokens in (int(t) for t in args.tokens.split(",")):
        plain = timed_iterations(dev, tokens, "plain", 0.0, args.warmup, args.iterations)
        plain_ms = plain["median_ms"]
        report["runs"].append({"tokens": tokens, "variant": "plain", "transfer_ms": 0.0, **plain})
        for multiple in (float(d) for d in args.delays.split(",")):
            transfer_ms = multiple * plain_ms
            for variant in ("reference", "fused"):
                r = timed_iterations(dev, tokens, variant, transfer_ms * 1e-3, args.warmup, args.iterations)
                run = {"tokens": tokens, "variant": variant, "transfer_ms": transfer_ms, **r}
                report["runs"].append(run)
                print(json.dumps(run), flush=True)
    text = json.dumps(report, indent=1)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
