#pragma once
// The built-in model zoo: workloads computed from architecture formulas, one
// parameter tensor per entry in backward (gradient-ready) order, with the FLOPs and
// activation traffic of the operator that owns it. Each entry carries its published
// parameter count, which the computed tensors must add up to exactly.
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "dtperf/names.hpp"
#include "dtperf/workload.hpp"

namespace dtperf {

struct ZooEntry {
  const char* name;          // "resnet50"
  const char* description;   // one line: architecture, input, sample unit
  const char* citation;      // paper and the reference implementation counted
  std::int64_t published_params;
  ModelSpec (*build)();
};

/// All zoo entries, in a stable order.
std::span<const ZooEntry> model_zoo();

/// The model by name, or nullopt.
std::optional<ModelSpec> zoo_model(const std::string& name);

// ---- Models by size ----------------------------------------------------------------
// Decoder-only language models built from their shape, for sizes the zoo does not list.

/// How attention is computed. Eager: PyTorch's operators, the score matrix written to
/// memory and kept for backward (what the zoo's Hugging Face entries run). Fused: one
/// kernel (FlashAttention-2, Dao 2023; PyTorch's scaled_dot_product_attention): scores
/// stay on chip, backward recomputes them (5 matrix products against forward's 2).
enum class Attention : std::uint8_t { eager, fused };
template <>
struct EnumNames<Attention> {
  static constexpr Named<Attention> table[] = {{Attention::eager, "eager"}, {Attention::fused, "fused"}};
};

/// How the MLP's GELU is computed. Fused: one kernel each way (torch.nn.GELU, either
/// approximation; MosaicML's MPT). Eager: the tanh approximation written as eight PyTorch
/// operators (Hugging Face's "gelu_new", NewGELUActivation, which GPT-2's configuration
/// names): each a kernel of its own and a pass over the MLP's hidden tensor, most of them in
/// fp32 under autocast (torch.pow is on its fp32 list). zoo/llm.cpp counts them.
enum class Gelu : std::uint8_t { fused, eager };
template <>
struct EnumNames<Gelu> {
  static constexpr Named<Gelu> table[] = {{Gelu::fused, "fused"}, {Gelu::eager, "eager"}};
};

/// How Llama's RMS norm, SwiGLU and rotary embedding are computed. Eager: as Hugging Face's
/// LlamaForCausalLM writes them, in PyTorch operators, each a kernel of its own and a pass
/// over its tensor (the norm in fp32); zoo/llm.cpp and zoo/builder.cpp count them. Fused:
/// one kernel each way for each (Liger Kernel, Transformer Engine, apex's fused RMS norm).
enum class Elementwise : std::uint8_t { eager, fused };
template <>
struct EnumNames<Elementwise> {
  static constexpr Named<Elementwise> table[] = {{Elementwise::eager, "eager"}, {Elementwise::fused, "fused"}};
};

/// GPT-2's architecture at any size (Radford et al. 2019; Hugging Face GPT2Model):
/// learned positions, LayerNorm and biases everywhere, GELU MLP, LM head tied to the
/// token embedding. MosaicML's MPT benchmarks count their models the same way (vocabulary
/// 50,368, context 2,048: MPT-7B is layers 32, d 4096 and 6,658,859,008 parameters).
struct GptShape {
  int layers = 12;
  std::int64_t model_dim = 768;
  std::int64_t heads = 12;      // dividing model_dim
  std::int64_t ffn_dim = 3072;  // the MLP's hidden width (4 x model_dim in GPT-2)
  std::int64_t context = 1024;  // tokens per sequence (one sample)
  std::int64_t vocab = 50257;
  double batch_per_gpu = 1.0;   // default sequences per GPU
  Attention attention = Attention::fused;
  bool dropout = false;         // dropout 0.1 on embeddings, attention and residuals (GPT-2)
  Gelu gelu = Gelu::fused;
};

/// Llama's architecture at any size (Touvron et al. 2023; Hugging Face LlamaForCausalLM):
/// RMSNorm, rotary positions, SwiGLU MLP, no biases, untied LM head, grouped-query
/// attention with kv_heads key/value heads.
struct LlamaShape {
  int layers = 32;
  std::int64_t model_dim = 4096;
  std::int64_t heads = 32;       // dividing model_dim
  std::int64_t kv_heads = 32;    // dividing heads
  std::int64_t ffn_dim = 11008;  // SwiGLU width
  std::int64_t context = 4096;
  std::int64_t vocab = 32000;
  double batch_per_gpu = 1.0;
  Attention attention = Attention::fused;
  Elementwise elementwise = Elementwise::eager;
};

/// The models' tensors and work, named by their canonical spelling
/// ("gpt:layers=24,d=2048,...", every key given) with a one-line description.
ModelSpec gpt_model(const GptShape& shape);
ModelSpec llama_model(const LlamaShape& shape);

}  // namespace dtperf
