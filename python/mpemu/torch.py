"""PyTorch on an emulated tensor core: every GEMM of a layer's forward and backward pass
computed by a libmpemu model, bit for bit, with the operand formats of a training recipe.

    import mpemu.torch as mt
    model = mt.emulate(model, model="h100", recipe="fp8")   # nn.Linear, nn.Conv2d swapped
    ...train as usual...
    mt.restore(model)                                       # the original modules back

Recipes (:class:`Recipe`, or one of the names in :data:`RECIPES`):

- ``"fp16-amp"`` / ``"bf16-amp"``: what ``torch.autocast`` does to a linear layer: inputs and
  weights rounded to FP16/BF16 (nearest-even), FP32 accumulation on the model's tensor cores,
  the output rounded once to FP16/BF16; the backward GEMMs likewise, their operands (gradient,
  weight, input) in FP16/BF16, the results rounded to FP16/BF16. Loss scaling is the
  training loop's (:class:`GradScaler`).
- ``"fp8"``: Transformer Engine's HYBRID recipe with per-tensor current scaling: forward
  operands in E4M3, gradients in E5M2, each tensor multiplied by a power-of-two scale
  2^floor(log2(fmax / amax)) before it is encoded (fmax 448 for E4M3, 57344 for E5M2), the
  GEMM's output multiplied back by 1 / (scale_a * scale_b) (the GEMM's alpha); FP32 output.
- ``"fp16"``, ``"bf16"``, ``"tf32"``, ``"e4m3"``: plain inputs of that format, FP32 output, no
  scaling (the GEMMs ``mpemu.gemm`` computes).
- ``"mxfp8"`` (E4M3 forward, E5M2 gradients), ``"mxfp6"``, ``"mxfp4"``, ``"nvfp4"``: block-scaled
  operands along the reduction dimension multiplied on the B200's block-scaled tensor cores
  (``mpemu.gemm_mx``); use ``model="b200"``.

Tensors are kept in float32 throughout (values of the recipe's formats where it rounds); the
GEMMs run on the CPU through ctypes, so an emulated layer is slower than ``torch``'s own
(see python/bench_linear.py). Elementwise work (activations, the loss, the optimizer)
stays in ``torch``.

Also here: :func:`quantize` (round to a format with a straight-through gradient),
:class:`GradScaler` (``torch.amp.GradScaler``'s interface with the rules of an mpemu scaler
preset), :class:`GradientDump` (per-step gradients to safetensors files for ``mpanalyze``).
"""
import importlib
import math
import os
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Union

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import mpemu

__all__ = ["Recipe", "RECIPES", "linear", "quantize", "emulate", "restore", "EmulatedLinear", "EmulatedConv2d",
           "GradScaler", "GradientDump", "pow2_scale"]

_FMAX = {"e4m3": 448.0, "e5m2": 57344.0}


@dataclass(frozen=True)
class Recipe:
    """The operand formats of a layer's three GEMMs (forward Y = X W^T, dgrad dX = dY W,
    wgrad dW = dY^T X).

    fwd: the format of X and W (``"fp16"``, ``"bf16"``, ``"tf32"``, ``"e4m3"``, ``"e5m2"``, or a
    block-scaled kind ``"mxfp8_e4m3"``, ... when ``block`` is True); bwd: the format of dY in
    the backward GEMMs (W and X stay in ``fwd``); out: None (FP32 results) or the format every
    GEMM result is rounded to once (AMP); scaling: ``"none"`` or ``"tensor"`` (power-of-two
    per-tensor scales from each operand's amax, FP8 only); block: operands are block-scaled
    (``mpemu.gemm_mx``)."""
    fwd: str = "fp16"
    bwd: str = "fp16"
    out: Optional[str] = None
    scaling: str = "none"
    block: bool = False


RECIPES: Dict[str, Recipe] = {
    "fp16": Recipe("fp16", "fp16"),
    "bf16": Recipe("bf16", "bf16"),
    "tf32": Recipe("tf32", "tf32"),
    "e4m3": Recipe("e4m3", "e4m3"),
    "fp16-amp": Recipe("fp16", "fp16", out="fp16"),
    "bf16-amp": Recipe("bf16", "bf16", out="bf16"),
    "fp8": Recipe("e4m3", "e5m2", scaling="tensor"),
    "mxfp8": Recipe("mxfp8_e4m3", "mxfp8_e5m2", block=True),
    "mxfp6": Recipe("mxfp6_e2m3", "mxfp6_e3m2", block=True),
    "mxfp4": Recipe("mxfp4", "mxfp4", block=True),
    "nvfp4": Recipe("nvfp4", "nvfp4", block=True),
}


def _recipe(r: Union[str, Recipe]) -> Recipe:
    if isinstance(r, Recipe):
        if r.scaling not in ("none", "tensor"):
            raise ValueError(f"unknown scaling {r.scaling!r} (valid: none, tensor)")
        if r.scaling == "tensor" and (r.fwd not in _FMAX or r.bwd not in _FMAX):
            raise ValueError("per-tensor scaling is for FP8 operands (e4m3, e5m2)")
        return r
    if r not in RECIPES:
        raise ValueError(f"unknown recipe {r!r} (valid: {', '.join(RECIPES)})")
    return RECIPES[r]


def pow2_scale(x: np.ndarray, fmt: str) -> float:
    """The per-tensor scale of the ``"fp8"`` recipe: 2^floor(log2(fmax / amax)) for the largest
    finite |x| (1 when x holds no finite non-zero value); exact to invert."""
    a = np.abs(x[np.isfinite(x)]) if x.size else x
    amax = float(a.max()) if a.size else 0.0
    if amax == 0.0:
        return 1.0
    e = math.floor(math.log2(_FMAX[fmt] / amax))
    while _FMAX[fmt] / amax < 2.0**e:     # log2 of a quotient near a power of two may round up
        e -= 1
    return 2.0 ** max(min(e, 126), -126)


def _mm(a: np.ndarray, b: np.ndarray, fa: str, fb: str, model: str, r: Recipe) -> np.ndarray:
    """a @ b (float32 arrays) as the recipe and model compute it, a float32 array"""
    if r.block:
        y = mpemu.gemm_mx(a, b, kind=fa, kind_b=fb, model=model)
    elif r.scaling == "tensor":
        sa, sb = pow2_scale(a, fa), pow2_scale(b, fb)
        y = mpemu.gemm(a * np.float32(sa), b * np.float32(sb), model=model, input=fa, input_b=fb,
                       alpha=1.0 / (sa * sb))
    else:
        y = mpemu.gemm(a, b, model=model, input=fa, input_b=None if fb == fa else fb)
    return y


def _finish(y: np.ndarray, r: Recipe) -> np.ndarray:
    return y if r.out is None else mpemu.round(y, r.out)


def _f32(t: torch.Tensor) -> np.ndarray:
    """a tensor's values as a C-contiguous float32 array (shares memory when it already is one)"""
    return np.ascontiguousarray(t.detach().to(torch.float32).contiguous().numpy())


class _LinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, model, recipe):
        shape = x.shape
        x2 = _f32(x.reshape(-1, shape[-1]))
        w = _f32(weight)
        y = _mm(x2, np.ascontiguousarray(w.T), recipe.fwd, recipe.fwd, model, recipe)
        if bias is not None:
            y = y + _f32(bias)
        ctx.save_for_backward(x, weight, bias)
        ctx.model, ctx.recipe = model, recipe
        return torch.from_numpy(_finish(y, recipe)).reshape(*shape[:-1], w.shape[0])

    @staticmethod
    def backward(ctx, gy):
        x, weight, bias = ctx.saved_tensors
        r, model = ctx.recipe, ctx.model
        g = _f32(gy.reshape(-1, gy.shape[-1]))
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            dx = _finish(_mm(g, _f32(weight), r.bwd, r.fwd, model, r), r)
            gx = torch.from_numpy(dx).reshape(x.shape).to(x.dtype)
        if ctx.needs_input_grad[1]:
            x2 = _f32(x.reshape(-1, x.shape[-1]))
            gw = torch.from_numpy(_finish(_mm(np.ascontiguousarray(g.T), x2, r.bwd, r.fwd, model, r), r))
            gw = gw.to(weight.dtype)
        if bias is not None and ctx.needs_input_grad[2]:
            gb = torch.from_numpy(_finish(g.sum(axis=0, dtype=np.float32), r)).to(bias.dtype)
        return gx, gw, gb, None, None


def linear(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None, *, model: str = "h100",
           recipe: Union[str, Recipe] = "fp16-amp") -> torch.Tensor:
    """``F.linear(x, weight, bias)`` with its forward GEMM and, under autograd, its two backward
    GEMMs computed by ``model`` with ``recipe``'s operand formats (float32 result; CPU tensors).
    The bias is added in FP32 before the recipe's output rounding; its gradient is the FP32 sum
    of dY over the batch."""
    return _LinearFn.apply(x, weight, bias, model, _recipe(recipe))


class _QuantizeFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, fmt, mode, saturate, clip, seed):
        xv = x.detach()
        if xv.dtype != torch.float64:
            xv = xv.to(torch.float32)   # exact for the narrower float dtypes
        if mpemu._L.mpe_mx_lookup(fmt.encode()) >= 0:
            y = mpemu.mx_round(xv, fmt, mode, seed=seed)   # binary32 (float64 input rounded once first)
            lim = math.inf
        else:
            y = mpemu.round(xv, fmt, mode, saturate=saturate, seed=seed)
            lim = mpemu._L.mpe_format_max(mpemu._L.mpe_format_lookup(fmt.encode()))
        if clip:
            ctx.save_for_backward(xv.abs() <= lim)
        ctx.clip = clip
        return y

    @staticmethod
    def backward(ctx, g):
        if ctx.clip:
            (keep,) = ctx.saved_tensors
            g = g * keep
        return g, None, None, None, None, None


def quantize(x: torch.Tensor, fmt: str, mode: str = "rne", *, saturate: bool = False, clip: bool = False,
             seed: Optional[int] = None) -> torch.Tensor:
    """x rounded to ``fmt`` (``mpemu.round``: a format name; or a block-scaled kind such as
    ``"mxfp8_e4m3"``, ``"nvfp4"``: ``mpemu.mx_round`` along the last axis) with a straight-through
    gradient: the backward pass passes the incoming gradient through unchanged, or, with
    ``clip=True``, zeroes it where |x| exceeds the format's largest finite value (the clipped
    straight-through estimator; block-scaled kinds scale every block into range and clip
    nothing). float32 result (float64 for float64 input rounded to a format name)."""
    if mpemu._L.mpe_mx_lookup(mpemu._name(fmt, "format")) < 0:
        mpemu._format(fmt)   # ValueError naming the valid formats
    return _QuantizeFn.apply(x, fmt, mode, saturate, clip, seed)


class EmulatedLinear(nn.Module):
    """An ``nn.Linear`` whose GEMMs run on an emulated tensor core (:func:`linear`). It holds
    the original module's own ``weight`` and ``bias`` Parameters (an optimizer built before
    the swap keeps working) and the original module in ``.original``."""

    def __init__(self, original: nn.Linear, model: str, recipe: Recipe):
        super().__init__()
        self.weight = original.weight
        self.bias = original.bias
        self.model, self.recipe = model, recipe
        object.__setattr__(self, "original", original)   # not a submodule: no parameters twice

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _LinearFn.apply(x, self.weight, self.bias, self.model, self.recipe)

    def extra_repr(self) -> str:
        return f"{self.weight.shape[1]}, {self.weight.shape[0]}, model={self.model!r}, recipe={self.recipe}"


class EmulatedConv2d(nn.Module):
    """An ``nn.Conv2d`` (groups 1, zero padding) computed as ``unfold`` then an emulated GEMM:
    the columns of every output position times the flattened kernel, forward and backward
    through :func:`linear`."""

    def __init__(self, original: nn.Conv2d, model: str, recipe: Recipe):
        super().__init__()
        self.weight = original.weight
        self.bias = original.bias
        self.model, self.recipe = model, recipe
        self.kernel_size, self.stride = original.kernel_size, original.stride
        self.padding, self.dilation = original.padding, original.dilation
        object.__setattr__(self, "original", original)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, _, h, w = x.shape
        cols = F.unfold(x, self.kernel_size, dilation=self.dilation, padding=self.padding, stride=self.stride)
        out = self.weight.shape[0]
        y = _LinearFn.apply(cols.transpose(1, 2), self.weight.reshape(out, -1), self.bias, self.model, self.recipe)
        ho = (h + 2 * self.padding[0] - self.dilation[0] * (self.kernel_size[0] - 1) - 1) // self.stride[0] + 1
        wo = (w + 2 * self.padding[1] - self.dilation[1] * (self.kernel_size[1] - 1) - 1) // self.stride[1] + 1
        return y.transpose(1, 2).reshape(n, out, ho, wo)


def _convertible_conv(m: nn.Module) -> bool:
    return (isinstance(m, nn.Conv2d) and m.groups == 1 and m.padding_mode == "zeros"
            and not isinstance(m.padding, str))


def emulate(module: nn.Module, model: str = "h100", recipe: Union[str, Recipe] = "fp16-amp", *,
            conv: bool = True, skip: Iterable[str] = ()) -> nn.Module:
    """Swap every ``nn.Linear`` (and, with ``conv``, every ``nn.Conv2d`` with groups 1, zero
    padding mode and numeric padding) inside ``module`` for an emulated layer computing its GEMMs
    on ``model`` with ``recipe``. Left alone: modules whose qualified names are in ``skip``,
    other Conv2d layers, and subclasses of nn.Linear such as MultiheadAttention's out_proj,
    whose owner reads its weight directly (attention's own GEMMs stay in torch). The swap is in
    place; returns ``module`` (a bare ``nn.Linear``/``nn.Conv2d`` is returned wrapped).
    Parameters are shared, not copied. :func:`restore` undoes it."""
    r = _recipe(recipe)
    if r.block:   # a bad model name fails here, not at the first forward pass
        mpemu._mx_model(model, r.fwd)
    else:
        mpemu._model(model, mpemu._TYPE_OF[r.fwd], r.fwd)
    skip = set(skip)

    def swap(m: nn.Module) -> Optional[nn.Module]:
        if type(m) is nn.Linear:
            return EmulatedLinear(m, model, r)
        if conv and _convertible_conv(m):
            return EmulatedConv2d(m, model, r)
        return None

    top = swap(module)
    if top is not None:
        return top
    for name, parent in list(module.named_modules()):
        for child_name, child in list(parent.named_children()):
            full = f"{name}.{child_name}" if name else child_name
            if full in skip:
                continue
            new = swap(child)
            if new is not None:
                setattr(parent, child_name, new)
    return module


def restore(module: nn.Module) -> nn.Module:
    """Put back the original modules :func:`emulate` swapped out (in place; returns the
    module, or the original of a bare emulated layer)."""
    if isinstance(module, (EmulatedLinear, EmulatedConv2d)):
        return module.original
    for _, parent in list(module.named_modules()):
        for child_name, child in list(parent.named_children()):
            if isinstance(child, (EmulatedLinear, EmulatedConv2d)):
                setattr(parent, child_name, child.original)
    return module


class GradScaler:
    """``torch.amp.GradScaler``'s interface (``scale``, ``unscale_``, ``step``, ``update``,
    ``get_scale``, ``state_dict``) driven by an mpemu scaler preset (``mpemu.Scaler``: the
    rules of PyTorch, Apex, Megatron, DeepSpeed or Keras), so a training loop written for
    GradScaler replays another framework's loss-scaling decisions. Gradients are unscaled
    in FP32 by the reciprocal of the scale and checked for inf/NaN as GradScaler does; a step
    with one is skipped. Keyword arguments override the preset (``init_scale``,
    ``growth_factor``, ``backoff_factor``, ``growth_interval``, ...)."""

    def __init__(self, preset: str = "pytorch", enabled: bool = True, **params: float):
        self.preset, self._params = preset, dict(params)
        self._s = mpemu.Scaler(preset, **params)
        self._enabled = enabled
        self._found: Dict[int, bool] = {}
        self._unscaled: Dict[int, bool] = {}

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return float(self._s.scale) if self._enabled else 1.0

    def scale(self, outputs: Any) -> Any:
        """outputs (a tensor or nested lists/tuples of them) times the scale, in their dtype"""
        if not self._enabled:
            return outputs
        if isinstance(outputs, torch.Tensor):
            return outputs * torch.tensor(self._s.scale, dtype=torch.float32, device=outputs.device)
        return type(outputs)(self.scale(o) for o in outputs)

    def unscale_(self, optimizer: torch.optim.Optimizer) -> None:
        """the gradients of optimizer's parameters divided by the scale (multiplied by its
        float32 reciprocal, as GradScaler does); records whether any holds an inf or NaN"""
        if not self._enabled:
            return
        if self._unscaled.get(id(optimizer)):
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update()")
        inv = torch.tensor(1.0 / self._s.scale, dtype=torch.float64).float()
        found = False
        with torch.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not torch.isfinite(p.grad).all():
                        found = True
                    p.grad.mul_(inv)
        self._found[id(optimizer)] = found
        self._unscaled[id(optimizer)] = True

    def step(self, optimizer: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> Optional[Any]:
        """optimizer.step() unless this step's gradients held an inf/NaN (then skipped)"""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if not self._unscaled.get(id(optimizer)):
            self.unscale_(optimizer)
        if self._found[id(optimizer)]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self) -> None:
        """the preset's rule for the next scale, from whether any optimizer saw an inf/NaN"""
        if not self._enabled:
            return
        self._s.update(any(self._found.values()))
        self._found.clear()
        self._unscaled.clear()

    @property
    def steps(self) -> int:
        return self._s.steps

    @property
    def skipped(self) -> int:
        return self._s.skipped

    def state_dict(self) -> Dict[str, Any]:
        return {"preset": self.preset, "params": dict(self._params), "scale": self.get_scale(),
                "steps": self.steps, "skipped": self.skipped}


class GradientDump:
    """Per-step gradients of ``module``'s parameters to ``folder/step%06d.safetensors`` (or
    ``.pt`` with ``format="pt"``), the files ``mpanalyze`` and ``mpemu.analyze`` read.

    Hooks on the parameters record each gradient as backward computes it (under a loss scale,
    the scaled gradient: the values an FP16 gradient must hold), as float32 on the CPU;
    :meth:`step` writes the step's file and returns its path; :meth:`remove` takes the hooks
    off (also on leaving a ``with`` block). ``every``: write every n-th step only."""

    def __init__(self, module: nn.Module, folder: str, *, every: int = 1, format: str = "safetensors"):
        if format not in ("safetensors", "pt"):
            raise ValueError(f"unknown format {format!r} (valid: safetensors, pt)")
        if format == "safetensors":
            importlib.import_module("safetensors.torch")   # an ImportError now rather than at the first step
        self.folder, self.every, self.format = folder, max(int(every), 1), format
        self.count = 0
        self._grads: Dict[str, torch.Tensor] = {}
        self._hooks: List[Any] = []
        os.makedirs(folder, exist_ok=True)
        for name, p in module.named_parameters():
            if p.requires_grad:
                self._hooks.append(p.register_hook(lambda g, name=name: self._record(name, g)))

    def _record(self, name: str, g: torch.Tensor) -> None:
        if self.count % self.every == 0:
            g = g.detach().to(torch.float32).cpu().contiguous()
            self._grads[name] = g.clone() if name not in self._grads else self._grads[name] + g

    def step(self) -> Optional[str]:
        """write this step's gradients (None when the step is not written); next step"""
        path = None
        if self.count % self.every == 0 and self._grads:
            path = os.path.join(self.folder, f"step{self.count:06d}.{self.format}")
            if self.format == "safetensors":
                from safetensors.torch import save_file
                save_file(self._grads, path)
            else:
                torch.save(self._grads, path)
        self._grads = {}
        self.count += 1
        return path

    def remove(self) -> None:
        for h in self._hooks:
            h.remove()
        self._hooks = []

    def __enter__(self) -> "GradientDump":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()

