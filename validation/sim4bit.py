"""A CPU stand-in for bitsandbytes' 4-bit linear layer (QLoRA's base), for the harness's
`method=qlora` rows: bitsandbytes has no CPU build in Debian 12, so its memory behaviour is
reproduced with torch ops, as read in bitsandbytes 0.43.2 and later (PR #1270, 2024-07-16;
unchanged through 2026-08, commit 95f9af30):

- `Params4bit`: the weight quantized at load, packed two 4-bit codes per byte into a uint8
  tensor of ceil(n/2) elements, shape [ceil(n/2), 1]; one float32 absmax per block of 64
  (`blocksize=64`, no double quantization: `bnb_4bit_use_double_quant=False`) and the 16-entry
  float32 NF4 code (`quantize_4bit`).
- `MatMul4Bit.forward`: `F.linear(A, dequantize_4bit(B).to(A.dtype).t(), bias)`: the weight is
  dequantized to the compute dtype for the product and freed after it; `ctx.tensors = (None, B)`:
  the input A is *not* kept for the backward (bitsandbytes < 0.43.2 kept it).
- `MatMul4Bit.backward`: grad_A = grad_output @ dequantize_4bit(B), a second dequantized copy.

The stand-in subclasses nn.Linear so that PEFT's default dispatch wraps it in a LoRA layer as
it wraps `bnb.nn.Linear4bit` (the adapter stays float32: the base weight is not floating point).
The dequantization runs in chunks of 4,096 bytes, written into one output tensor, so that its
temporaries stay a few KiB: bitsandbytes' CUDA kernel writes the output directly.
"""

import torch
import torch.nn.functional as F

BLOCK = 64
CHUNK = 4096  # packed bytes per dequantization step (8,192 values: 128 blocks)
# bitsandbytes' NF4 code (`get_4bit_type("nf4")`; QLoRA paper, appendix E).
NF4 = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
       -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
       0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
       0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0]


def quantize(weight):
    """(packed uint8 [n/2, 1], absmax float32 [n/64], code float32 [16]) of a weight."""
    flat = weight.detach().reshape(-1)
    n = flat.numel()
    if n % BLOCK:
        raise ValueError(f"sim4bit: {n} elements are not a multiple of the block {BLOCK}")
    code = torch.tensor(NF4, dtype=torch.float32)
    bounds = (code[1:] + code[:-1]) / 2
    absmax = torch.empty(n // BLOCK, dtype=torch.float32)
    packed = torch.empty(n // 2, dtype=torch.uint8)
    for s in range(0, n, 2 * CHUNK):
        part = flat[s:s + 2 * CHUNK].float().view(-1, BLOCK)
        amax = part.abs().amax(dim=1).clamp_min(1e-12)
        absmax[s // BLOCK:s // BLOCK + amax.numel()] = amax
        idx = torch.bucketize(part / amax[:, None], bounds).to(torch.uint8).view(-1, 2)
        packed[s // 2:s // 2 + idx.shape[0]] = (idx[:, 0] << 4) | idx[:, 1]
    return packed.view(-1, 1), absmax, code


def dequantize(packed, absmax, code, shape, dtype):
    """The weight of `shape` in `dtype`, as `dequantize_4bit` returns it."""
    flat = packed.view(-1)
    out = torch.empty(flat.numel() * 2, dtype=dtype)
    for s in range(0, flat.numel(), CHUNK):
        p = flat[s:s + CHUNK]
        idx = torch.stack((p >> 4, p & 15), dim=1).view(-1).long()
        vals = code[idx].view(-1, BLOCK) * absmax[2 * s // BLOCK:2 * s // BLOCK + idx.numel() // BLOCK, None]
        out[2 * s:2 * s + idx.numel()] = vals.view(-1)
    return out.view(shape)


class _MatMul4Bit(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, packed, absmax, code, shape, bias):
        out = F.linear(a, dequantize(packed, absmax, code, shape, a.dtype), bias)
        ctx.quant = (packed, absmax, code, shape)  # bitsandbytes: ctx.tensors = (None, B)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        packed, absmax, code, shape = ctx.quant
        w = dequantize(packed, absmax, code, shape, grad_output.dtype)
        return torch.matmul(grad_output, w), None, None, None, None, None


class Linear4bit(torch.nn.Linear):
    """nn.Linear whose weight is the packed uint8 of `quantize` (bnb.nn.Linear4bit's layout)."""

    def __init__(self, linear):
        torch.nn.Module.__init__(self)
        self.in_features, self.out_features = linear.in_features, linear.out_features
        packed, absmax, code = quantize(linear.weight)
        self.weight = torch.nn.Parameter(packed, requires_grad=False)
        self.register_buffer("absmax", absmax)
        self.register_buffer("code", code)
        self.shape = tuple(linear.weight.shape)
        self.bias = linear.bias

    def forward(self, x):
        return _MatMul4Bit.apply(x, self.weight, self.absmax, self.code, self.shape, self.bias)


def replace_linears(model):
    """Every nn.Linear but the output head becomes a Linear4bit (transformers'
    `replace_with_bnb_linear` with `get_keys_to_not_convert`: the output embeddings stay in the
    model dtype). Returns the number of weights quantized."""
    head = model.get_output_embeddings()
    count = 0
    for module in list(model.modules()):
        for child_name, child in list(module.named_children()):
            if type(child) is torch.nn.Linear and child is not head:
                setattr(module, child_name, Linear4bit(child))
                count += child.weight.numel()
    return count
