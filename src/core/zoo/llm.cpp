// Decoder-only language models of the zoo: GPT-2 (Hugging Face GPT2Model, output
// projection tied to wte) and Llama-2-7B (Hugging Face LlamaForCausalLM, untied
// lm_head). One sample is one sequence of the model's full context.
//
// Tensor names follow Hugging Face's named_parameters(); the tensors are built in the
// order their operators run in forward and returned reversed. For Llama that order
// differs from registration order: input_layernorm runs before the attention and
// post_attention_layernorm before the MLP, though both are registered after them.
// Attached work:
//  - Causal attention counts only the unmasked query-key pairs, n_ctx / 2 keys per
//    query on average (as fused causal kernels compute); eager attention keeps the
//    whole n_ctx x n_ctx score matrix for backward (builder.hpp).
//  - GPT-2 trains with dropout 0.1 on the embeddings, the attention probabilities and
//    both residual branches (its masks are kept for backward); Llama without dropout. Its score products, softmax
//    and the residual add after it go to the attention output projection's weight.
//  - GELU / SwiGLU to the linear producing its input (c_fc, up_proj); the residual add
//    after the MLP to its output projection; rotary embedding to k_proj.
//  - The GPT-2 output projection is wte itself, so its GEMM, softmax and cross-entropy
//    go to ln_f.weight, the operator before it, which puts their backward at the start
//    of the backward pass; wte carries only the lookup. Llama's lm_head owns its GEMM.
#include <cstdint>
#include <string>
#include <utility>

#include "builder.hpp"

namespace dtperf::zoo {
namespace {

Work residual_add(std::int64_t features, double tokens) {
  return elementwise(static_cast<double>(features) * tokens, 1.0, 3.0);
}

// ---- GPT-2 ------------------------------------------------------------------------

constexpr std::int64_t kGpt2Vocab = 50257;
constexpr std::int64_t kGpt2Context = 1024;

struct Gpt2Config {
  std::int64_t model_dim;
  std::int64_t heads;
  int layers;
  double batch_per_gpu;
};

void gpt2_block(ModelBuilder& builder, const std::string& prefix, const Gpt2Config& c) {
  const double tokens = static_cast<double>(kGpt2Context);
  const std::int64_t d = c.model_dim;
  const double elements = static_cast<double>(d) * tokens;
  layer_norm(builder, prefix + ".ln_1", d, tokens);
  linear(builder, prefix + ".attn.c_attn", d, 3 * d, tokens);
  builder.attach(linear(builder, prefix + ".attn.c_proj", d, d, tokens),
                 attention_products(d, c.heads, tokens, tokens / 2.0, tokens, true) + residual_add(d, tokens) +
                     dropout_mask(elements));
  layer_norm(builder, prefix + ".ln_2", d, tokens);
  builder.attach(linear(builder, prefix + ".mlp.c_fc", d, 4 * d, tokens),
                 elementwise(4.0 * elements, kGeluFlopsPerElement, 2.0) + keeps(4.0 * elements));
  builder.attach(linear(builder, prefix + ".mlp.c_proj", 4 * d, d, tokens),
                 residual_add(d, tokens) + dropout_mask(elements));
}

ModelSpec gpt2(const Gpt2Config& c) {
  ModelBuilder builder("sequence", c.batch_per_gpu, Optimizer::adam);
  const double tokens = static_cast<double>(kGpt2Context);
  embedding(builder, "wte.weight", kGpt2Vocab, c.model_dim, tokens);
  builder.attach(embedding(builder, "wpe.weight", kGpt2Context, c.model_dim, tokens),
                 residual_add(c.model_dim, tokens) + dropout_mask(static_cast<double>(c.model_dim) * tokens));
  for (int i = 0; i < c.layers; ++i) gpt2_block(builder, "h." + std::to_string(i), c);
  builder.attach(layer_norm(builder, "ln_f", c.model_dim, tokens),
                 tied_output_projection(c.model_dim, kGpt2Vocab, tokens));
  return std::move(builder).finish();
}

// ---- Llama-2-7B -------------------------------------------------------------------

constexpr std::int64_t kLlamaVocab = 32000;
constexpr std::int64_t kLlamaContext = 4096;
constexpr std::int64_t kLlamaDim = 4096;
constexpr std::int64_t kLlamaFfn = 11008;
constexpr std::int64_t kLlamaHeads = 32;
constexpr int kLlamaLayers = 32;
constexpr double kLlamaBatchPerGpu = 1.0;

void llama_attention(ModelBuilder& builder, const std::string& prefix, double tokens) {
  const std::int64_t d = kLlamaDim;
  const double input_bytes = static_cast<double>(d) * tokens * kActivationBytes;
  linear(builder, prefix + ".q_proj", d, d, tokens, false);
  const std::size_t k_proj = linear(builder, prefix + ".k_proj", d, d, tokens, false);
  builder.shares_input(k_proj, input_bytes);
  builder.attach(k_proj, elementwise(2.0 * static_cast<double>(d) * tokens, kRotaryFlopsPerElement, 2.0));
  builder.shares_input(linear(builder, prefix + ".v_proj", d, d, tokens, false), input_bytes);
  builder.attach(linear(builder, prefix + ".o_proj", d, d, tokens, false),
                 attention_products(d, kLlamaHeads, tokens, tokens / 2.0, tokens, false) +
                     residual_add(d, tokens));
}

void llama_mlp(ModelBuilder& builder, const std::string& prefix, double tokens) {
  const double hidden = static_cast<double>(kLlamaFfn) * tokens;
  linear(builder, prefix + ".gate_proj", kLlamaDim, kLlamaFfn, tokens, false);
  const std::size_t up = linear(builder, prefix + ".up_proj", kLlamaDim, kLlamaFfn, tokens, false);
  builder.shares_input(up, static_cast<double>(kLlamaDim) * tokens * kActivationBytes);
  // silu(gate) * up reads both projections and writes one tensor; it keeps the gate,
  // silu(gate) and up.
  builder.attach(up, elementwise(hidden, kSwigluFlopsPerElement, 3.0) + keeps(3.0 * hidden));
  builder.attach(linear(builder, prefix + ".down_proj", kLlamaFfn, kLlamaDim, tokens, false),
                 residual_add(kLlamaDim, tokens));
}

void llama_layer(ModelBuilder& builder, const std::string& prefix, double tokens) {
  rms_norm(builder, prefix + ".input_layernorm.weight", kLlamaDim, tokens);
  llama_attention(builder, prefix + ".self_attn", tokens);
  rms_norm(builder, prefix + ".post_attention_layernorm.weight", kLlamaDim, tokens);
  llama_mlp(builder, prefix + ".mlp", tokens);
}

ModelSpec llama_7b() {
  ModelBuilder builder("sequence", kLlamaBatchPerGpu, Optimizer::adam);
  const double tokens = static_cast<double>(kLlamaContext);
  embedding(builder, "model.embed_tokens.weight", kLlamaVocab, kLlamaDim, tokens);
  for (int i = 0; i < kLlamaLayers; ++i)
    llama_layer(builder, "model.layers." + std::to_string(i), tokens);
  rms_norm(builder, "model.norm.weight", kLlamaDim, tokens);
  builder.attach(linear(builder, "lm_head", kLlamaDim, kLlamaVocab, tokens, false),
                 softmax_cross_entropy(kLlamaVocab, tokens));
  return std::move(builder).finish();
}

}  // namespace

ModelSpec build_gpt2_small() { return gpt2({768, 12, 12, 8.0}); }
ModelSpec build_gpt2_medium() { return gpt2({1024, 16, 24, 4.0}); }
ModelSpec build_gpt2_large() { return gpt2({1280, 20, 36, 2.0}); }
ModelSpec build_gpt2_xl() { return gpt2({1600, 25, 48, 1.0}); }
ModelSpec build_llama_7b() { return llama_7b(); }

}  // namespace dtperf::zoo
