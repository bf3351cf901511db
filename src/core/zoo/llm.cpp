// Decoder-only language models: GPT-2's architecture (Hugging Face GPT2Model, output
// projection tied to wte) and Llama's (Hugging Face LlamaForCausalLM, untied lm_head), at
// the zoo's published sizes and at any size (zoo.hpp: GptShape, LlamaShape). One sample is
// one sequence of the model's full context.
//
// Tensor names follow Hugging Face's named_parameters(); the tensors are built in the
// order their operators run in forward and returned reversed. For Llama that order
// differs from registration order: input_layernorm runs before the attention and
// post_attention_layernorm before the MLP, though both are registered after them.
// Attached work:
//  - Causal attention counts only the unmasked query-key pairs, n_ctx / 2 keys per
//    query on average (as fused causal kernels compute). Eager attention keeps the
//    whole n_ctx x n_ctx score matrix for backward (builder.hpp); fused attention keeps
//    Q, K, V, its output and one log-sum-exp per query and head, and recomputes the
//    scores in backward (fused_attention_products). Both go to the attention output
//    projection's weight, with the residual add after it.
//  - GPT-2 trains with dropout 0.1 on the embeddings, the attention probabilities and
//    both residual branches (its masks are kept for backward); the sized GPT does so only
//    with dropout=yes (MosaicML's MPT recipes and most current pretraining run without);
//    Llama without dropout.
//  - GELU / SwiGLU to the linear producing its input (c_fc, up_proj); the residual add
//    after the MLP to its output projection; rotary embedding of queries and keys to k_proj.
//  - The GPT output projection is wte itself, so its GEMM, softmax and cross-entropy
//    go to ln_f.weight, the operator before it, which puts their backward at the start
//    of the backward pass; wte carries only the lookup. Llama's lm_head owns its GEMM.
#include <cstdint>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "builder.hpp"
#include "dtperf/zoo.hpp"

namespace dtperf::zoo {
namespace {

// Causal self-attention over `tokens` tokens and the residual add after it, attached
// to the output projection at `index`.
void attach_attention(ModelBuilder& builder, std::size_t index, std::int64_t d, std::int64_t kv_dim,
                      std::int64_t heads, double tokens, Attention attention, bool dropout) {
  const double elements = static_cast<double>(d) * tokens;
  if (attention == Attention::fused) {
    const FusedAttention fused = fused_attention_products(d, kv_dim, heads, tokens, AttentionMask::causal);
    builder.attach(index, fused.forward, fused.backward_flops);
    builder.attach(index, dropout ? residual_add(d, tokens) + dropout_mask(elements) : residual_add(d, tokens));
    return;
  }
  const Work products = attention_products(d, heads, tokens, tokens / 2.0, tokens, dropout);
  builder.attach(index, dropout ? products + residual_add(d, tokens) + dropout_mask(elements)
                                : products + residual_add(d, tokens));
}

// ---- GPT ----------------------------------------------------------------------------

// Hugging Face's "gelu_new" (NewGELUActivation), GPT-2's MLP activation, as PyTorch runs it:
//   y = 0.5 * x * (1.0 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3.0))))
// eight operators, each a kernel and a pass over the hidden tensor (h elements per sample).
// Accesses in elements of h, read + written:
//   forward   pow 2, x 0.044715 2, + x 3, x sqrt(2/pi) 2, tanh 2, 1 + 2, 0.5 x 2, the
//             product 3: 18, FLOPs 2+1+1+1+4+1+1+1 = 12 per element;
//   backward  the product's two gradients 3 + 3, x 0.5 2, tanh_backward 3, x sqrt(2/pi) 2,
//             x 0.044715 2, pow's gradient (pow(x, 2), x 3, x the gradient) 2 + 2 + 3, x's
//             three gradients summed 3 + 3: 28 in 11 kernels, FLOPs 13 per element.
// Under autocast torch.pow is on the fp32 list: x (16-bit, from c_fc) is cast to fp32 for
// it, and from there the chain is fp32 by type promotion; only 0.5 x, x's reads in the
// sum and the product, and the sum of x's gradients stay 16-bit. Of forward's 18
// accesses 14 are fp32; of backward's 28, 19. Casts: x into pow, and the fp32 result into
// c_proj's product (autocast), in forward; in backward those two gradients cast back and
// two more that autograd casts to a 16-bit input's dtype (0.5 x's and the sum's gradients
// of x): 4, where the rule charges 2. Backward is given against the rule (twice forward,
// one cast each): fp32 accesses 19 - 2 x 14 = -9, the others 9 - 2 x 4 = +1, casts +2.
// Per element: 72 bytes forward and 112 backward in fp32; 76 and 118 in 16 bits.
// Autograd keeps x (pow's input), tanh's output, and both operands of the product: 4 h,
// three of them fp32 under autocast where the model's 16-bit halving counts 2 bytes.
// Checked against the H200 profile of GPT-2 small's step (h200-kernels.json), per layer:
// the scalar multiplications 84 / 12 = 7 (3 forward, 4 backward), two pow kernels, tanh,
// tanh_backward and the scalar add once each; in bf16 the tensor multiplications 48 / 12
// = 4, and the scalar multiplications 60 of fp32 and 24 of bf16 (5 and 2 a layer); and
// traced operator by operator on PyTorch (validation/eager_chains.py).
struct EagerGelu {
  Work forward;
  double backward_flops = 0.0;
};
EagerGelu eager_gelu(double hidden) {
  Work work = elementwise(hidden, 12.0, 18.0);
  work.fp32_bytes = 14.0 * hidden * kActivationBytes;
  work.cast_elements = 2.0 * hidden;
  work.backward_bytes = (28.0 - 2.0 * 18.0) * hidden * kActivationBytes;
  work.backward_fp32_bytes = (19.0 - 2.0 * 14.0) * hidden * kActivationBytes;
  work.backward_cast_elements = (4.0 - 2.0) * hidden;
  return {work + keeps(4.0 * hidden), 13.0 * hidden};
}

void gpt_block(ModelBuilder& builder, const std::string& prefix, const GptShape& s) {
  const double tokens = static_cast<double>(s.context);
  const std::int64_t d = s.model_dim;
  const double elements = static_cast<double>(d) * tokens;
  const double hidden = static_cast<double>(s.ffn_dim) * tokens;
  layer_norm(builder, prefix + ".ln_1", d, tokens);
  builder.attach(linear(builder, prefix + ".attn.c_attn", d, 3 * d, tokens), casts(elements));
  attach_attention(builder, linear(builder, prefix + ".attn.c_proj", d, d, tokens), d, d, s.heads, tokens,
                   s.attention, s.dropout);
  layer_norm(builder, prefix + ".ln_2", d, tokens);
  const std::size_t c_fc = linear(builder, prefix + ".mlp.c_fc", d, s.ffn_dim, tokens);
  builder.attach(c_fc, casts(elements));
  if (s.gelu == Gelu::eager) {
    const EagerGelu gelu = eager_gelu(hidden);
    builder.attach(c_fc, gelu.forward, gelu.backward_flops);
  } else {
    builder.attach(c_fc, elementwise(hidden, kGeluFlopsPerElement, 2.0) + keeps(hidden));
  }
  const std::size_t out = linear(builder, prefix + ".mlp.c_proj", s.ffn_dim, d, tokens);
  builder.attach(out, s.dropout ? residual_add(d, tokens) + dropout_mask(elements) : residual_add(d, tokens));
}

ModelSpec gpt_tensors(const GptShape& s) {
  ModelBuilder builder("sequence", s.batch_per_gpu, Optimizer::adam);
  const double tokens = static_cast<double>(s.context);
  const double elements = static_cast<double>(s.model_dim) * tokens;
  embedding(builder, "wte.weight", s.vocab, s.model_dim, tokens);
  // wte + wpe: both fp32 tables, the sum the fp32 stream the blocks add onto.
  const Work positions = embedding_add(s.model_dim, tokens);
  builder.attach(embedding(builder, "wpe.weight", s.context, s.model_dim, tokens),
                 s.dropout ? positions + dropout_mask(elements) : positions);
  for (int i = 0; i < s.layers; ++i) gpt_block(builder, "h." + std::to_string(i), s);
  builder.attach(layer_norm(builder, "ln_f", s.model_dim, tokens),
                 tied_output_projection(s.model_dim, s.vocab, tokens));
  return std::move(builder).finish();
}

// The zoo's GPT-2 sizes, as Hugging Face trains them: dropout, and attention in one fused
// kernel (transformers' default attn_implementation "sdpa", PyTorch's
// scaled_dot_product_attention with its dropout inside; the H200 kernel breakdown shows
// its fmha kernels and no separate softmax, validation/data/single-gpu/h200-kernels.json).
// Older transformers releases ran it eager: `--model gpt:...,attention=eager`. Its MLP runs
// "gelu_new" (GPT2Config's activation_function) as PyTorch operators (eager_gelu).
GptShape gpt2_shape(std::int64_t d, std::int64_t heads, int layers, double batch) {
  return {layers, d, heads, 4 * d, 1024, 50257, batch, Attention::fused, true, Gelu::eager};
}

// ---- Llama ------------------------------------------------------------------------

// Hugging Face's Llama writes its RMS norm, SwiGLU and rotary embedding in PyTorch
// operators, a kernel and a pass over the tensor each (Elementwise::eager, traced operator
// by operator on PyTorch: validation/eager_chains.py); fused kernels (Liger Kernel,
// Transformer Engine, apex) run one kernel each way, reading their inputs and writing
// their outputs once, and in backward reading the gradient and what forward kept and
// writing the inputs' gradients once (Elementwise::fused). Accesses in elements of the
// tensor, read + written.
//
// LlamaRMSNorm, over the stream (e elements per sample):
//   h = x.to(float32); v = h.pow(2).mean(-1, keepdim=True); h = h * rsqrt(v + eps);
//   y = weight * h.to(input_dtype)
// It computes in fp32 whatever its input (the explicit cast; under autocast its input is
// the fp32 stream, so no cast runs). A row's statistic (1 / features of x) and the weight
// (1 / tokens) are left out:
//   forward   pow 2, mean 1, h x rsqrt 2, weight x 2: 7, in 6 kernels (v + eps and the
//             rsqrt are per row); FLOPs 4 per element (kRmsNormFlopsPerElement);
//   backward  the weight's product: grad x weight 2, grad x h 3 and its sum over tokens 1;
//             the normalisation's: grad x rsqrt 2, grad x h 3 and its sum over the row 1;
//             mean's gradient expanded and divided 1; pow's: h^1 2, x 2 2, x the gradient
//             3; x's two gradients summed 3: 23, in 14 kernels (3 per row), 11 FLOPs per
//             element.
// It keeps its input, the inverse RMS and the normalised tensor. Fused: x read and y
// written, 2; backward the gradient and x read and x's gradient written, 3; it keeps x and
// the inverse RMS.
std::size_t llama_rms_norm(ModelBuilder& builder, const std::string& weight_name, std::int64_t features,
                           double tokens, Elementwise form) {
  const double elements = static_cast<double>(features) * tokens;
  const bool eager = form == Elementwise::eager;
  Work work = in_fp32(elementwise(elements, kRmsNormFlopsPerElement, eager ? 7.0 : 2.0));
  work.backward_bytes = (eager ? 23.0 - 2.0 * 7.0 : 3.0 - 2.0 * 2.0) * elements * kActivationBytes;
  work.backward_fp32_bytes = work.backward_bytes;
  const double backward_flops = (eager ? 11.0 : 2.0 * kRmsNormFlopsPerElement) * elements;
  return builder.add(weight_name, features, work + keeps((eager ? 2.0 : 1.0) * elements + tokens), backward_flops);
}

// LlamaMLP: down_proj(act_fn(gate_proj(x)) * up_proj(x)), act_fn SiLU, over the hidden
// tensor (h elements per sample):
//   forward   silu 2, the product 3: 5 in 2 kernels; FLOPs 5 per element
//             (kSwigluFlopsPerElement);
//   backward  grad x up 3 (silu's gradient), grad x silu(gate) 3 (up's), silu_backward 3:
//             9 in 3 kernels, against the rule's 2 x 5.
// Both projections' outputs are 16-bit under autocast (no list holds silu or mul), so the
// chain is. It keeps the gate, silu(gate) and up. Fused: gate and up read, the product
// written, 3; backward the gradient, gate and up read, their gradients written, 5; it
// keeps the gate and up (silu is recomputed).
Work llama_swiglu(double hidden, Elementwise form) {
  const bool eager = form == Elementwise::eager;
  Work work = elementwise(hidden, kSwigluFlopsPerElement, eager ? 5.0 : 3.0);
  work.backward_bytes = (eager ? 9.0 - 2.0 * 5.0 : 5.0 - 2.0 * 3.0) * hidden * kActivationBytes;
  return work + keeps((eager ? 3.0 : 2.0) * hidden);
}

// apply_rotary_pos_emb: q * cos + rotate_half(q) * sin, rotate_half(x) = cat(-x2, x1) of
// x's two halves, over queries and keys (e elements per sample); cos and sin are one row
// per position, shared by every head, and left out:
//   forward   q x cos 2, the negated half 1, cat 2, x sin 2, the sum 3: 10 in 5 kernels;
//   backward  grad x sin 2, the negated half 1, each half's slice_backward a zero fill of
//             the whole 1 and the half copied in 1, the two summed 3, grad x cos 2, q's two
//             gradients summed 3: 15 in 9 kernels, against the rule's 2 x 10.
// FLOPs 3 per element (kRotaryFlopsPerElement: two products and the sum; the negation is
// a sign). cos and sin are cast to the queries' dtype (LlamaRotaryEmbedding), so the chain
// is 16-bit under autocast. It keeps nothing of q's size (the products keep cos and sin).
// Fused: q read and written, 2, and the same in backward (the rotation by -theta).
Work llama_rotary(double elements, Elementwise form) {
  const bool eager = form == Elementwise::eager;
  Work work = elementwise(elements, kRotaryFlopsPerElement, eager ? 10.0 : 2.0);
  work.backward_bytes = (eager ? 15.0 - 2.0 * 10.0 : 2.0 - 2.0 * 2.0) * elements * kActivationBytes;
  return work;
}

void llama_attention(ModelBuilder& builder, const std::string& prefix, const LlamaShape& s, double tokens) {
  const std::int64_t d = s.model_dim;
  const std::int64_t kv_dim = d / s.heads * s.kv_heads;
  const double input = static_cast<double>(d) * tokens;
  const double input_bytes = input * kActivationBytes;
  // Each projection casts the RMS norm's fp32 output for itself.
  builder.attach(linear(builder, prefix + ".q_proj", d, d, tokens, false), casts(input));
  const std::size_t k_proj = linear(builder, prefix + ".k_proj", d, kv_dim, tokens, false);
  builder.shares_input(k_proj, input_bytes);
  builder.attach(k_proj, casts(input) + llama_rotary(static_cast<double>(d + kv_dim) * tokens, s.elementwise));
  const std::size_t v_proj = linear(builder, prefix + ".v_proj", d, kv_dim, tokens, false);
  builder.shares_input(v_proj, input_bytes);
  builder.attach(v_proj, casts(input));
  attach_attention(builder, linear(builder, prefix + ".o_proj", d, d, tokens, false), d, kv_dim, s.heads, tokens,
                   s.attention, false);
}

void llama_mlp(ModelBuilder& builder, const std::string& prefix, const LlamaShape& s, double tokens) {
  const double hidden = static_cast<double>(s.ffn_dim) * tokens;
  const double input = static_cast<double>(s.model_dim) * tokens;
  builder.attach(linear(builder, prefix + ".gate_proj", s.model_dim, s.ffn_dim, tokens, false), casts(input));
  const std::size_t up = linear(builder, prefix + ".up_proj", s.model_dim, s.ffn_dim, tokens, false);
  builder.shares_input(up, input * kActivationBytes);
  builder.attach(up, casts(input));
  builder.attach(up, llama_swiglu(hidden, s.elementwise));
  builder.attach(linear(builder, prefix + ".down_proj", s.ffn_dim, s.model_dim, tokens, false),
                 residual_add(s.model_dim, tokens));
}

ModelSpec llama_tensors(const LlamaShape& s) {
  ModelBuilder builder("sequence", s.batch_per_gpu, Optimizer::adam);
  const double tokens = static_cast<double>(s.context);
  embedding(builder, "model.embed_tokens.weight", s.vocab, s.model_dim, tokens);
  for (int i = 0; i < s.layers; ++i) {
    const std::string prefix = "model.layers." + std::to_string(i);
    llama_rms_norm(builder, prefix + ".input_layernorm.weight", s.model_dim, tokens, s.elementwise);
    llama_attention(builder, prefix + ".self_attn", s, tokens);
    llama_rms_norm(builder, prefix + ".post_attention_layernorm.weight", s.model_dim, tokens, s.elementwise);
    llama_mlp(builder, prefix + ".mlp", s, tokens);
  }
  llama_rms_norm(builder, "model.norm.weight", s.model_dim, tokens, s.elementwise);
  builder.attach(linear(builder, "lm_head", s.model_dim, s.vocab, tokens, false),
                 casts(static_cast<double>(s.model_dim) * tokens) + softmax_cross_entropy(s.vocab, tokens));
  return std::move(builder).finish();
}

// Llama-2-7B as Hugging Face trains it: eager attention, and its RMS norm, SwiGLU and rotary
// embedding as PyTorch operators.
LlamaShape llama2_7b_shape() {
  return {32, 4096, 32, 32, 11008, 4096, 32000, 1.0, Attention::eager, Elementwise::eager};
}

}  // namespace

ModelSpec build_gpt2_small() { return gpt_tensors(gpt2_shape(768, 12, 12, 8.0)); }
ModelSpec build_gpt2_medium() { return gpt_tensors(gpt2_shape(1024, 16, 24, 4.0)); }
ModelSpec build_gpt2_large() { return gpt_tensors(gpt2_shape(1280, 20, 36, 2.0)); }
ModelSpec build_gpt2_xl() { return gpt_tensors(gpt2_shape(1600, 25, 48, 1.0)); }
ModelSpec build_llama_7b() { return llama_tensors(llama2_7b_shape()); }

}  // namespace dtperf::zoo

namespace dtperf {

ModelSpec gpt_model(const GptShape& s) {
  ModelSpec model = zoo::gpt_tensors(s);
  model.name = fmt::format("gpt:layers={},d={},heads={},ffn={},seq={},vocab={},batch={},attention={},dropout={},gelu={}",
                           s.layers, s.model_dim, s.heads, s.ffn_dim, s.context, s.vocab, s.batch_per_gpu,
                           name_of(s.attention), s.dropout ? "yes" : "no", name_of(s.gelu));
  model.description = fmt::format(
      "GPT ({} layers, d {}, {} heads, FFN {}, {}-token vocabulary, tied LM head, {} attention{}, {} GELU); "
      "sample = {}-token sequence",
      s.layers, s.model_dim, s.heads, s.ffn_dim, s.vocab, name_of(s.attention), s.dropout ? ", dropout 0.1" : "",
      name_of(s.gelu), s.context);
  model.citation = "Radford et al. 2019, Language Models are Unsupervised Multitask Learners: GPT-2's architecture "
                   "(Hugging Face GPT2Model) at this size";
  return model;
}

ModelSpec llama_model(const LlamaShape& s) {
  ModelSpec model = zoo::llama_tensors(s);
  model.name = fmt::format(
      "llama:layers={},d={},heads={},kv_heads={},ffn={},seq={},vocab={},batch={},attention={},elementwise={}",
      s.layers, s.model_dim, s.heads, s.kv_heads, s.ffn_dim, s.context, s.vocab, s.batch_per_gpu,
      name_of(s.attention), name_of(s.elementwise));
  model.description = fmt::format(
      "Llama ({} layers, d {}, {} heads, {} key/value heads, SwiGLU {}, {}-token vocabulary, untied LM head, {} "
      "attention, {} RMS norm, SwiGLU and rotary embedding); sample = {}-token sequence",
      s.layers, s.model_dim, s.heads, s.kv_heads, s.ffn_dim, s.vocab, name_of(s.attention), name_of(s.elementwise),
      s.context);
  model.citation = "Touvron et al. 2023, Llama 2: Open Foundation and Fine-Tuned Chat Models: Llama's architecture "
                   "(Hugging Face LlamaForCausalLM) at this size";
  return model;
}

}  // namespace dtperf
