"""The LeakyReluCustom NPU kernel: ``y = x if x > 0 else x * alpha``, as one Triton kernel.

One ``@triton.jit`` source serves every dtype of the op (float32, float16, bfloat16): the
element type comes from the pointers it is compiled for. Its variant (``flat``: one flat
range of ``n_elements``, no broadcasting, the op has one input) and parameters are stated in
``tf_ge_custom/op_def.py`` (``LEAKY_RELU_CUSTOM.kernel``); ``alpha`` is the op's float
attribute, passed at run time as a 32-bit float (the ``attr:alpha`` parameter slot).

It computes what TensorFlow's CPU kernel computes (``functor::LeakyRelu`` in
``tensorflow/core/kernels/relu_op_functor.h``): the attribute is first converted to the
element type, then ``select(x > 0, x, x * alpha)`` in that type. So for float16 and bfloat16
alpha is rounded to the element type before the one multiply, whose exact product is then
rounded once; alpha 0, 1, negative, above 1, NaN and infinite values follow IEEE arithmetic
(``-0.0`` and NaN are not above zero, so they are multiplied). For bfloat16 the compiler
computes the multiply in fp32 and narrows the product (exact: two 8-bit significands); the
kernel writes that out, rounding alpha and the product to bfloat16 on their bits, where no
compiler pass can drop the rounding and no conversion mode decides it.

Like the AddCustom kernels, every program walks a grid-stride loop over blocks, so the host
can cap the grid at the SoC's vector cores (and 65535); the host keeps every 32-bit index
below 2^31 by chunking larger tensors into several launches.

Framework-free on purpose: the builder compiles this file ahead of time, and the
interpreter tests run the very same function on the CPU.
"""
import triton
import triton.language as tl


@triton.jit
def _to_bfloat16(value):
    """``value`` (fp32) rounded to the nearest bfloat16, ties to even, on its bits: add
    0x7FFF plus the lowest bit kept, keep the top 16 bits (a NaN stays a quiet NaN of its
    sign). Written out rather than ``value.to(tl.bfloat16)`` because bishengir-compile folds
    ``extf(truncf(alpha))`` back to ``alpha`` when it widens a bfloat16 multiply to fp32, and
    so that the rounding is this integer arithmetic wherever the kernel runs, never a
    conversion instruction's mode (docs/kernels.md, "LeakyReluCustom")."""
    bits = value.to(tl.int32, bitcast=True)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    top = tl.where(value != value, (bits >> 16) | 0x40, rounded)
    return top.to(tl.int16).to(tl.bfloat16, bitcast=True)


@triton.jit
def _leaky_relu(x, alpha):
    """``x > 0 ? x : x * alpha`` in x's type, ``alpha`` already converted to that type (as
    fp32 holding a bfloat16 value, for bfloat16). bfloat16 is compared and multiplied in fp32
    (exact: two 8-bit significands, as the compiler widens a bfloat16 multiply anyway) and
    the product narrowed once, ties to even: TensorFlow's one rounding."""
    if x.dtype == tl.bfloat16:
        wide = x.to(tl.float32)
        y = tl.where(wide > 0, x, _to_bfloat16(wide * alpha))
    else:
        y = tl.where(x > 0, x, x * alpha)
    return y


@triton.jit
def leaky_relu_kernel(x_ptr, y_ptr, n_elements, alpha, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_programs = tl.num_programs(axis=0)
    # alpha in the element type first (TensorFlow's static_cast<T>(alpha)), then one multiply
    # in that type (the cast to fp32 changes nothing compiled: it is the parameter's type)
    alpha = tl.cast(alpha, tl.float32)
    if x_ptr.dtype.element_ty == tl.bfloat16:
        alpha = _to_bfloat16(alpha).to(tl.float32)
    else:
        alpha = alpha.to(x_ptr.dtype.element_ty)
    for block_start in range(pid * BLOCK_SIZE, n_elements, num_programs * BLOCK_SIZE):
        offsets = block_start + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        tl.store(y_ptr + offsets, _leaky_relu(x, alpha), mask=mask)
