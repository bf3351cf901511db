#pragma once
// Internal helpers of the model zoo: a builder that appends parameter tensors in
// forward execution order and returns them in backward (gradient-ready) order, the
// common layers, and the per-model build functions that zoo.cpp registers.
//
// Conventions, all per sample with fp32 activations (4 bytes per element):
//  - FLOPs count 2 x multiply-accumulates. Backward FLOPs are 2 x forward for every
//    operator: data and weight gradients for GEMMs and convolutions, and about twice
//    the forward work for elementwise and normalisation operators.
//  - A GEMM's or convolution's FLOPs sit on its weight. Its bias carries only the
//    bias add (one FLOP per output element) and no memory traffic, being fused into
//    the GEMM epilogue.
//  - Memory traffic is activation bytes read + written in forward. GEMM/conv: input
//    plus output, kept apart (`Work::gemm_bytes`) from the other operators' traffic: those
//    run as kernels of their own after the product's. Batch norm in training: three passes (read for the statistics, read
//    and write to normalise). Layer norm: read + write (Llama's RMS norm, llm.cpp: that or
//    the PyTorch operators Hugging Face writes it in). Elementwise operators:
//    every operand read and the result written. Weights are not counted.
//  - Backward traffic is twice forward's, plus `Work::backward_bytes` where an
//    implementation is known to run kernels of its own in backward (ViT-B/16's
//    nn.MultiheadAttention: a select's zero-filled gradients and their sum, transformer.cpp),
//    or less where its kernels are counted one by one and move less than that (GPT-2's
//    GELU, Llama's SwiGLU and rotary embedding written as PyTorch operators, llm.cpp; its
//    RMS norm moves more).
//  - Operators without parameters are attached to a neighbouring tensor; each model
//    file says which. Dropout and attention masking are not counted in FLOPs or traffic.
//  - Saved bytes are what autograd keeps from forward for backward (the activation memory),
//    each stored tensor counted once, following PyTorch's eager operators on a GPU:
//    a linear or convolution keeps its input (unless the operator before it already keeps
//    that tensor: ReLU keeps its output, so the convolution after it adds nothing; query,
//    key and value projections read one input); batch norm, layer norm and GELU keep
//    their input; RMS norm (Hugging Face) its input and the normalised tensor, fused its
//    input; SwiGLU (Hugging Face) the gate, silu(gate) and up, fused the gate and up; eager attention copies of Q, K, V and the softmax output over
//    every stored key (the whole n x n matrix, masked or not), and with attention dropout
//    the dropped probabilities; log-softmax its output. Residual adds, scalar scalings,
//    average pooling and concatenation keep nothing. `saved_fixed` holds what does not
//    follow the compute dtype: dropout masks (1 byte per element, CUDA's bool mask),
//    max-pool and embedding indices (8 bytes per element).
//  - 16-bit compute is PyTorch's automatic mixed precision (torch.autocast; the "CUDA Ops
//    that can autocast to float32" and "... to float16" lists of its documentation):
//    matrix products and convolutions run in 16 bits, and so does every operator whose
//    inputs are 16-bit (ReLU, GELU, batch norm, pooling, dropout); layer norm, softmax,
//    log-softmax and cross-entropy run in fp32, and an operator with one fp32 operand
//    (a residual add onto the fp32 stream that starts at the embedding) writes fp32.
//    `Work::fp32_bytes` is the traffic that stays fp32 that way, `Work::cast_elements`
//    the elements autocast converts: a matrix product's input made by an fp32 operator
//    (each projection casts its own copy: autocast caches only weight casts), the scores
//    on their way into and out of an eager softmax, logits into the loss, and an image
//    into the first convolution. Weight casts (6 bytes per parameter and pass, once per
//    step, not per sample) are not counted: for GPT-2 small, 124 M parameters x 6 bytes x
//    2 passes = 1.5 GB, about 0.3 ms of its 60 ms step on an H200 at batch 8.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "dtperf/workload.hpp"

namespace dtperf::zoo {

inline constexpr double kActivationBytes = 4.0;
inline constexpr double kBackwardToForward = 2.0;
inline constexpr double kIndexBytes = 8.0;      // int64 indices kept for backward
inline constexpr double kNormStatistics = 2.0;  // mean and inverse deviation per row, kept by a norm

// Forward FLOPs per element of the elementwise operators.
inline constexpr double kNormFlopsPerElement = 5.0;     // mean, variance, normalise, affine
inline constexpr double kRmsNormFlopsPerElement = 4.0;  // square-sum, scale, weight
inline constexpr double kReluFlopsPerElement = 1.0;
inline constexpr double kGeluFlopsPerElement = 8.0;
inline constexpr double kTanhFlopsPerElement = 4.0;
inline constexpr double kSwigluFlopsPerElement = 5.0;   // silu(gate) * up
inline constexpr double kSoftmaxFlopsPerElement = 5.0;  // max, subtract, exp, sum, divide
inline constexpr double kRotaryFlopsPerElement = 3.0;

// Work of one operator per sample. `gemm_flops` is the part of `flops` done as matrix
// products (GEMMs, convolutions, attention products), which run at the size-dependent
// GEMM efficiency; the rest is elementwise work at the vector rate.
struct Work {
  double flops = 0.0;
  double bytes = 0.0;  // at 4 bytes per element
  double gemm_flops = 0.0;
  double saved = 0.0;        // kept for backward, 4 bytes per element
  double saved_fixed = 0.0;  // kept for backward, masks and indices
  double fp32_bytes = 0.0;     // the part of `bytes` autocast keeps in fp32
  double cast_elements = 0.0;  // converted between fp32 and 16 bits under autocast
  // The part of `gemm_flops` inside a fused attention kernel, and its backward's count.
  double attention_flops = 0.0;
  double backward_attention_flops = 0.0;
  // What that kernel computes beyond them on partly filled tiles (TensorSpec), forward and
  // backward: not in `flops`, which counts the model's work.
  double attention_tile_flops = 0.0;
  double backward_attention_tile_flops = 0.0;
  // The part of `gemm_flops` in products with a feature dimension not a multiple of 4
  // elements, and one a multiple of 4 but not of 8 (TensorSpec).
  double misaligned_gemm_flops = 0.0;
  double partly_aligned_gemm_flops = 0.0;
  // The part of `bytes` the matrix products move themselves (their operands read and their
  // result written, inside the GEMM kernel); the rest is other kernels' traffic.
  double gemm_bytes = 0.0;
  // Backward traffic beyond twice `bytes` (TensorSpec::backward_extra_memory_bytes_per_sample),
  // the part of it that stays fp32 under autocast, and the casts beyond forward's.
  double backward_bytes = 0.0;
  double backward_fp32_bytes = 0.0;
  double backward_cast_elements = 0.0;
};

// Memory kept for backward and nothing else: `elements` activations at 4 bytes.
Work keeps(double elements);
// A dropout's bool mask over `elements` elements.
Work dropout_mask(double elements);

// A matrix product of `flops` FLOPs moving `bytes` of activations.
Work gemm(double flops, double bytes);
// The same, over feature dimensions `features` (the contiguous dimensions of its operands
// and result): counted misaligned or partly aligned where one is not a multiple of 4 or 8.
Work gemm(double flops, double bytes, std::initializer_list<std::int64_t> features);

Work operator+(Work a, Work b);

// `elements` elements, `flops_per_element` each, `accesses` tensors of that size read
// or written (a residual add reads two and writes one: 3).
Work elementwise(double elements, double flops_per_element, double accesses);
// A copy of `elements` elements (torch.cat, .contiguous(), an einsum's operand): each read
// and written once.
Work copy(double elements);
// `work` run by an operator on autocast's fp32 list: all its traffic stays fp32.
Work in_fp32(Work work);
// `elements` converted by autocast (no FLOPs; their traffic is priced per cast).
Work casts(double elements);
// A residual add of `features` x `tokens` elements onto the fp32 stream: the stream read and
// the sum written in fp32, the branch's output read in the compute dtype.
Work residual_add(std::int64_t features, double tokens);
// An add of fp32 embeddings (token, position, segment) over `features` x `tokens` elements:
// every access fp32.
Work embedding_add(std::int64_t features, double tokens);

class ModelBuilder {
 public:
  ModelBuilder(std::string sample_unit, double default_batch_per_gpu, Optimizer optimizer);

  // Appends a tensor whose operator does `forward` work; backward FLOPs are
  // kBackwardToForward x forward unless given. Returns the tensor's index.
  std::size_t add(std::string name, std::int64_t params, Work forward);
  std::size_t add(std::string name, std::int64_t params, Work forward, double backward_flops);

  // Adds the work of a parameter-free operator to the tensor at `index` (backward FLOPs
  // kBackwardToForward x forward unless given).
  void attach(std::size_t index, Work forward);
  void attach(std::size_t index, Work forward, double backward_flops);

  // The operator of the tensor at `index` (a linear just added) reads a tensor an earlier
  // operator keeps already (key and value projections after the query's): its input is
  // not counted twice.
  void shares_input(std::size_t index, double input_bytes);

  // The model with its tensors in backward order.
  ModelSpec finish() &&;

 private:
  ModelSpec model_;
};

// ---- Dense layers over `tokens` tokens per sample --------------------------------

// A weight of out x in and, unless `bias_name` is empty, a bias of out. Returns the
// weight's index.
std::size_t linear(ModelBuilder& builder, const std::string& weight_name,
                   const std::string& bias_name, std::int64_t in_features,
                   std::int64_t out_features, double tokens);
// "<prefix>.weight" and "<prefix>.bias".
std::size_t linear(ModelBuilder& builder, const std::string& prefix,
                   std::int64_t in_features, std::int64_t out_features, double tokens,
                   bool bias = true);
// "<prefix>.weight" and "<prefix>.bias"; returns the weight's index.
std::size_t layer_norm(ModelBuilder& builder, const std::string& prefix,
                       std::int64_t features, double tokens);
// A table of rows x features looked up `tokens` times: no forward FLOPs, the
// gradient scatter-add (features per token) in backward.
std::size_t embedding(ModelBuilder& builder, const std::string& weight_name,
                      std::int64_t rows, std::int64_t features, double tokens);

// QK^T, softmax and AV for `query_tokens` queries each attending to
// `keys_per_query` keys (half the context for causal attention: only the unmasked
// pairs are counted), scores written and read at fp32. Eager attention keeps the scores of
// `stored_keys_per_query` keys (the whole context, causal or not) and, with
// `probs_dropout`, the dropped probabilities and their mask.
Work attention_products(std::int64_t model_dim, std::int64_t heads, double query_tokens,
                        double keys_per_query, double stored_keys_per_query, bool probs_dropout);
// The same products in one fused kernel (FlashAttention-2, Dao 2023, Algorithms 1 and 2):
// Q, K, V read and the output written once, the scores never leave the chip; kept for
// backward: Q, K and V (keys and values at `kv_dim`, grouped-query attention), the output
// and one log-sum-exp per query and head. Backward recomputes QK^T: 5 matrix products
// against forward's 2, so 2.5 x forward's product FLOPs (the paper's own count, Sec. 4.1),
// and the softmax twice over as every elementwise operator here.
// Self-attention over `tokens` tokens, every query against every key or (causal) against
// the keys up to its own: n^2 or n^2 / 2 query-key pairs, the model's work. The kernel
// computes whole tiles of kFusedAttentionTileTokens queries by as many keys: a sequence
// that is not a multiple of the tile fills its last tiles partly, and a causal mask's
// diagonal tiles are computed whole and half of them masked (FlashAttention-2, Sec. 3.1.1:
// blocks above the diagonal are skipped, those on it computed with the mask applied). The
// products on those tile pairs beyond the model's own are `attention_tile_flops`, priced
// with the rest of the kernel's products but not counted as the model's FLOPs.
enum class AttentionMask : std::uint8_t { full, causal };
// Tokens per tile, queries and keys: the fused attention kernels on the H200
// (validation/data/single-gpu/h200-kernels.json) are PyTorch's memory-efficient fp32
// kernels, `fmha_cutlassF_f32_aligned_64x64` and `fmha_cutlassB_f32_aligned_64x64_k64`
// (64 queries by 64 keys per block), and cuDNN's, `flash_fprop_..._64x128x64` and
// `flash_bprop_..._64x64x64`. Where a kernel's tiles are larger (128 keys in cuDNN's
// forward, 128 x 128 in FlashAttention-2's forward at head size 64) it wastes more: 64
// is the least any of them wastes.
inline constexpr double kFusedAttentionTileTokens = 64.0;
// Query-key pairs of self-attention over `tokens` tokens: the model's, and those its fused
// kernel computes on whole tiles.
double attention_pairs(double tokens, AttentionMask mask);
double attention_tile_pairs(double tokens, AttentionMask mask);
struct FusedAttention {
  Work forward;
  double backward_flops = 0.0;
};
FusedAttention fused_attention_products(std::int64_t model_dim, std::int64_t kv_dim, std::int64_t heads, double tokens,
                                        AttentionMask mask);
// Logits of `vocab` classes per token from a projection whose weight is tied to an
// embedding, after a layer norm (whose fp32 output autocast casts): the GEMM, softmax and
// cross-entropy.
Work tied_output_projection(std::int64_t model_dim, std::int64_t vocab, double tokens);
// Softmax and cross-entropy over `classes` logits for each of `tokens` tokens, in fp32
// (the logits cast from the projection's 16-bit output under autocast).
Work softmax_cross_entropy(std::int64_t classes, double tokens);

// ---- Convolutional layers -------------------------------------------------------

struct FeatureMap {
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;
  bool kept = false;  // the producing operator keeps it for backward (a ReLU's output)
  double elements() const;
};

struct ConvOutput {
  FeatureMap map;
  std::size_t weight_index = 0;
};

// "<prefix>.weight" (and "<prefix>.bias") of a square kernel with zero padding.
ConvOutput conv2d(ModelBuilder& builder, const std::string& prefix, FeatureMap input,
                  std::int64_t out_channels, std::int64_t kernel, std::int64_t stride,
                  std::int64_t padding, bool bias);
// "<prefix>.weight" and "<prefix>.bias" in training mode; returns the weight's index.
std::size_t batch_norm2d(ModelBuilder& builder, const std::string& prefix, FeatureMap map);
// Square pooling window: the output map and its work (one FLOP per window element).
FeatureMap pool2d_output(FeatureMap input, std::int64_t kernel, std::int64_t stride,
                         std::int64_t padding);
Work pool2d(FeatureMap input, FeatureMap output, std::int64_t kernel);
// Max pooling keeps the argmax index of every output element (its input is the ReLU
// output before it, kept there).
Work max_pool_indices(FeatureMap output);

// ---- Model build functions (tensors and training defaults; zoo.cpp adds the name,
// ---- description and citation) ---------------------------------------------------

ModelSpec build_resnet50();
ModelSpec build_resnet101();
ModelSpec build_vgg16();
ModelSpec build_vgg16_bn();
ModelSpec build_transformer_base();
ModelSpec build_transformer_big();
ModelSpec build_bert_base();
ModelSpec build_bert_large();
ModelSpec build_vit_b16();
ModelSpec build_transformer_xl_base();
ModelSpec build_transformer_xl_large();
ModelSpec build_gpt2_small();
ModelSpec build_gpt2_medium();
ModelSpec build_gpt2_large();
ModelSpec build_gpt2_xl();
ModelSpec build_llama_7b();

}  // namespace dtperf::zoo
