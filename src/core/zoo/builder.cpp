#include "builder.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

namespace dtperf::zoo {

namespace {
constexpr double kMaskBytes = 1.0;  // bool
}  // namespace

Work operator+(Work a, Work b) {
  return {a.flops + b.flops,
          a.bytes + b.bytes,
          a.gemm_flops + b.gemm_flops,
          a.saved + b.saved,
          a.saved_fixed + b.saved_fixed,
          a.fp32_bytes + b.fp32_bytes,
          a.cast_elements + b.cast_elements,
          a.attention_flops + b.attention_flops,
          a.backward_attention_flops + b.backward_attention_flops,
          a.attention_tile_flops + b.attention_tile_flops,
          a.backward_attention_tile_flops + b.backward_attention_tile_flops,
          a.misaligned_gemm_flops + b.misaligned_gemm_flops,
          a.partly_aligned_gemm_flops + b.partly_aligned_gemm_flops,
          a.gemm_bytes + b.gemm_bytes,
          a.backward_bytes + b.backward_bytes,
          a.backward_fp32_bytes + b.backward_fp32_bytes,
          a.backward_cast_elements + b.backward_cast_elements};
}

Work keeps(double elements) { return {0.0, 0.0, 0.0, elements * kActivationBytes, 0.0}; }

Work dropout_mask(double elements) { return {0.0, 0.0, 0.0, 0.0, elements * kMaskBytes}; }

Work gemm(double flops, double bytes) {
  Work work{flops, bytes, flops};
  work.gemm_bytes = bytes;
  return work;
}

Work gemm(double flops, double bytes, std::initializer_list<std::int64_t> features) {
  Work work = gemm(flops, bytes);
  const bool by_4 = std::all_of(features.begin(), features.end(), [](std::int64_t f) { return f % 4 == 0; });
  const bool by_8 = std::all_of(features.begin(), features.end(), [](std::int64_t f) { return f % 8 == 0; });
  if (!by_4) {
    work.misaligned_gemm_flops = flops;
  } else if (!by_8) {
    work.partly_aligned_gemm_flops = flops;
  }
  return work;
}

Work elementwise(double elements, double flops_per_element, double accesses) {
  return {elements * flops_per_element, elements * accesses * kActivationBytes};
}

Work copy(double elements) { return elementwise(elements, 0.0, 2.0); }

Work in_fp32(Work work) {
  work.fp32_bytes = work.bytes;
  return work;
}

Work casts(double elements) {
  Work work;
  work.cast_elements = elements;
  return work;
}

Work residual_add(std::int64_t features, double tokens) {
  const double elements = static_cast<double>(features) * tokens;
  Work work = elementwise(elements, 1.0, 3.0);
  work.fp32_bytes = 2.0 * elements * kActivationBytes;
  return work;
}

Work embedding_add(std::int64_t features, double tokens) {
  return in_fp32(elementwise(static_cast<double>(features) * tokens, 1.0, 3.0));
}

ModelBuilder::ModelBuilder(std::string sample_unit, double default_batch_per_gpu,
                           Optimizer optimizer) {
  model_.sample_unit = std::move(sample_unit);
  model_.default_batch_per_gpu = default_batch_per_gpu;
  model_.default_optimizer = optimizer;
  model_.param_bytes = 4;
}

std::size_t ModelBuilder::add(std::string name, std::int64_t params, Work forward) {
  return add(std::move(name), params, forward, kBackwardToForward * forward.flops);
}

std::size_t ModelBuilder::add(std::string name, std::int64_t params, Work forward,
                              double backward_flops) {
  TensorSpec tensor;
  tensor.name = std::move(name);
  tensor.params = params;
  model_.tensors.push_back(std::move(tensor));
  const std::size_t index = model_.tensors.size() - 1;
  attach(index, forward, backward_flops);  // onto zeros: the tensor's own work
  return index;
}

void ModelBuilder::attach(std::size_t index, Work forward) {
  attach(index, forward, kBackwardToForward * forward.flops);
}

void ModelBuilder::attach(std::size_t index, Work forward, double backward_flops) {
  TensorSpec& tensor = model_.tensors.at(index);
  tensor.forward_flops_per_sample += forward.flops;
  tensor.backward_flops_per_sample += backward_flops;
  tensor.forward_memory_bytes_per_sample += forward.bytes;
  tensor.forward_gemm_memory_bytes_per_sample += forward.gemm_bytes;
  tensor.forward_fp32_memory_bytes_per_sample += forward.fp32_bytes;
  tensor.forward_cast_elements_per_sample += forward.cast_elements;
  tensor.backward_extra_memory_bytes_per_sample += forward.backward_bytes;
  tensor.backward_extra_fp32_memory_bytes_per_sample += forward.backward_fp32_bytes;
  tensor.backward_extra_cast_elements_per_sample += forward.backward_cast_elements;
  tensor.forward_gemm_flops_per_sample += forward.gemm_flops;
  tensor.forward_attention_flops_per_sample += forward.attention_flops;
  tensor.backward_attention_flops_per_sample += forward.backward_attention_flops;
  tensor.forward_attention_tile_flops_per_sample += forward.attention_tile_flops;
  tensor.backward_attention_tile_flops_per_sample += forward.backward_attention_tile_flops;
  tensor.forward_misaligned_gemm_flops_per_sample += forward.misaligned_gemm_flops;
  tensor.forward_partly_aligned_gemm_flops_per_sample += forward.partly_aligned_gemm_flops;
  tensor.saved_activation_bytes_per_sample += forward.saved;
  tensor.saved_fixed_bytes_per_sample += forward.saved_fixed;
}

void ModelBuilder::shares_input(std::size_t index, double input_bytes) {
  TensorSpec& tensor = model_.tensors.at(index);
  tensor.saved_activation_bytes_per_sample -= input_bytes;
}

ModelSpec ModelBuilder::finish() && {
  std::reverse(model_.tensors.begin(), model_.tensors.end());
  return std::move(model_);
}

// ---- Dense layers ---------------------------------------------------------------

std::size_t linear(ModelBuilder& builder, const std::string& weight_name,
                   const std::string& bias_name, std::int64_t in_features,
                   std::int64_t out_features, double tokens) {
  const double in = static_cast<double>(in_features);
  const double out = static_cast<double>(out_features);
  const Work product = gemm(2.0 * in * out * tokens, (in + out) * tokens * kActivationBytes, {in_features, out_features}) +
                       keeps(in * tokens);
  const std::size_t weight = builder.add(weight_name, in_features * out_features, product);
  if (!bias_name.empty()) builder.add(bias_name, out_features, {out * tokens, 0.0});
  return weight;
}

std::size_t linear(ModelBuilder& builder, const std::string& prefix,
                   std::int64_t in_features, std::int64_t out_features, double tokens,
                   bool bias) {
  return linear(builder, prefix + ".weight", bias ? prefix + ".bias" : std::string{},
                in_features, out_features, tokens);
}

std::size_t layer_norm(ModelBuilder& builder, const std::string& prefix,
                       std::int64_t features, double tokens) {
  const double elements = static_cast<double>(features) * tokens;
  const std::size_t weight = builder.add(
      prefix + ".weight", features,
      in_fp32(elementwise(elements, kNormFlopsPerElement, 2.0)) + keeps(elements + kNormStatistics * tokens));
  builder.add(prefix + ".bias", features, {});
  return weight;
}

std::size_t embedding(ModelBuilder& builder, const std::string& weight_name,
                      std::int64_t rows, std::int64_t features, double tokens) {
  const double elements = static_cast<double>(features) * tokens;
  // The rows are fp32 weights, looked up and written as they are (no autocast list has it).
  return builder.add(weight_name, rows * features,
                     in_fp32({0.0, 2.0 * elements * kActivationBytes, 0.0, 0.0, kIndexBytes * tokens}), elements);
}

Work attention_products(std::int64_t model_dim, std::int64_t heads, double query_tokens,
                        double keys_per_query, double stored_keys_per_query, bool probs_dropout) {
  const double d = static_cast<double>(model_dim);
  const double scores = static_cast<double>(heads) * keys_per_query;
  // QK^T and AV: d MACs per query-key pair each.
  const double gemm_flops = 2.0 * 2.0 * d * keys_per_query;
  const double softmax_flops = kSoftmaxFlopsPerElement * scores;
  // Q, K, V read and the context written; scores written by QK^T, read and
  // written by the softmax, read by AV.
  const double bytes = (4.0 * d + 4.0 * scores) * kActivationBytes;
  // Kept: contiguous copies of Q, K and V for the batched products, the softmax output,
  // and with dropout the dropped probabilities (read by AV) and the mask.
  const double stored = static_cast<double>(heads) * stored_keys_per_query;
  const double kept = 3.0 * d + (probs_dropout ? 2.0 : 1.0) * stored;
  const double mask = probs_dropout ? stored * kMaskBytes : 0.0;
  // Under autocast the products run in 16 bits and the softmax in fp32: the scores are cast
  // up for it and its output cast down for AV, and its own read and write stay fp32.
  Work work{query_tokens * (gemm_flops + softmax_flops),
            query_tokens * bytes,
            query_tokens * gemm_flops,
            query_tokens * kept * kActivationBytes,
            query_tokens * mask,
            query_tokens * 2.0 * scores * kActivationBytes,
            query_tokens * 2.0 * scores};
  // The two batched products' own traffic: Q and K read, the scores written; the
  // probabilities and V read, the context written. The softmax's is the rest.
  work.gemm_bytes = query_tokens * (4.0 * d + 2.0 * scores) * kActivationBytes;
  return work;
}

double attention_pairs(double tokens, AttentionMask mask) {
  return mask == AttentionMask::causal ? tokens * tokens / 2.0 : tokens * tokens;
}

double attention_tile_pairs(double tokens, AttentionMask mask) {
  const double tiles = std::ceil(tokens / kFusedAttentionTileTokens);
  const double pairs_per_tile = kFusedAttentionTileTokens * kFusedAttentionTileTokens;
  return mask == AttentionMask::causal ? pairs_per_tile * tiles * (tiles + 1.0) / 2.0 : pairs_per_tile * tiles * tiles;
}

FusedAttention fused_attention_products(std::int64_t model_dim, std::int64_t kv_dim, std::int64_t heads, double tokens,
                                        AttentionMask mask) {
  constexpr double kBackwardProductsToForward = 2.5;  // FlashAttention-2: 5 products / 2
  const double d = static_cast<double>(model_dim);
  const double kv = static_cast<double>(kv_dim);
  const double h = static_cast<double>(heads);
  const double products_per_pair = 2.0 * 2.0 * d;  // QK^T and AV: d MACs per pair each
  const double pairs = attention_pairs(tokens, mask);
  const double gemm_flops = products_per_pair * pairs;
  const double softmax_flops = kSoftmaxFlopsPerElement * h * pairs;
  const double bytes = (2.0 * d + 2.0 * kv) * kActivationBytes;  // Q, K, V read, output written
  const double kept = 2.0 * d + 2.0 * kv + h;                     // Q, K, V, output, log-sum-exp
  const double tile_flops = products_per_pair * (attention_tile_pairs(tokens, mask) - pairs);
  FusedAttention out;
  out.forward = {gemm_flops + softmax_flops, tokens * bytes, gemm_flops, tokens * kept * kActivationBytes, 0.0};
  out.forward.attention_flops = gemm_flops;
  out.forward.backward_attention_flops = kBackwardProductsToForward * gemm_flops;
  out.forward.attention_tile_flops = tile_flops;
  out.forward.backward_attention_tile_flops = kBackwardProductsToForward * tile_flops;
  out.forward.gemm_bytes = out.forward.bytes;  // one kernel
  out.backward_flops = kBackwardProductsToForward * gemm_flops + kBackwardToForward * softmax_flops;
  return out;
}

Work softmax_cross_entropy(std::int64_t classes, double tokens) {
  const double elements = static_cast<double>(classes) * tokens;
  return in_fp32(elementwise(elements, kSoftmaxFlopsPerElement, 2.0)) + casts(elements) +
         keeps(elements);  // log-softmax output
}

Work tied_output_projection(std::int64_t model_dim, std::int64_t vocab, double tokens) {
  const double d = static_cast<double>(model_dim);
  const double v = static_cast<double>(vocab);
  // Its input is the final layer norm's fp32 output, cast for the product.
  return gemm(2.0 * d * v * tokens, (d + v) * tokens * kActivationBytes, {model_dim, vocab}) + casts(d * tokens) +
         keeps(d * tokens) +
         softmax_cross_entropy(vocab, tokens);
}

// ---- Convolutional layers -------------------------------------------------------

double FeatureMap::elements() const {
  return static_cast<double>(channels) * static_cast<double>(height) *
         static_cast<double>(width);
}

namespace {

std::int64_t window_output(std::int64_t size, std::int64_t kernel, std::int64_t stride,
                           std::int64_t padding) {
  return (size + 2 * padding - kernel) / stride + 1;
}

}  // namespace

ConvOutput conv2d(ModelBuilder& builder, const std::string& prefix, FeatureMap input,
                  std::int64_t out_channels, std::int64_t kernel, std::int64_t stride,
                  std::int64_t padding, bool bias) {
  const FeatureMap output{out_channels, window_output(input.height, kernel, stride, padding),
                          window_output(input.width, kernel, stride, padding)};
  const std::int64_t params = input.channels * out_channels * kernel * kernel;
  const double macs_per_output = static_cast<double>(input.channels * kernel * kernel);
  const Work conv = gemm(2.0 * macs_per_output * output.elements(),
                         (input.elements() + output.elements()) * kActivationBytes) +
                    keeps(input.kept ? 0.0 : input.elements());
  const std::size_t weight = builder.add(prefix + ".weight", params, conv);
  if (bias) builder.add(prefix + ".bias", out_channels, {output.elements(), 0.0});
  return {output, weight};
}

std::size_t batch_norm2d(ModelBuilder& builder, const std::string& prefix, FeatureMap map) {
  const std::size_t weight = builder.add(
      prefix + ".weight", map.channels,
      elementwise(map.elements(), kNormFlopsPerElement, 3.0) + keeps(map.elements() + kNormStatistics * map.channels));
  builder.add(prefix + ".bias", map.channels, {});
  return weight;
}

FeatureMap pool2d_output(FeatureMap input, std::int64_t kernel, std::int64_t stride,
                         std::int64_t padding) {
  return {input.channels, window_output(input.height, kernel, stride, padding),
          window_output(input.width, kernel, stride, padding)};
}

Work pool2d(FeatureMap input, FeatureMap output, std::int64_t kernel) {
  return {output.elements() * static_cast<double>(kernel * kernel),
          (input.elements() + output.elements()) * kActivationBytes};
}

Work max_pool_indices(FeatureMap output) { return {0.0, 0.0, 0.0, 0.0, output.elements() * kIndexBytes}; }

}  // namespace dtperf::zoo
