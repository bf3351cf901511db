// Transformer-XL on WikiText-103 as NVIDIA DeepLearningExamples trains it
// (PyTorch/LanguageModeling/Transformer-XL: mem_transformer.py, utils/proj_adaptive_softmax.py,
// wt103_base.yaml, wt103_large.yaml, lamb.py). Post-norm layers with relative positions
// (RelPartialLearnableMultiHeadAttn), each segment attending to itself and as many
// remembered tokens, and an adaptive softmax over WikiText-103's 267,735 words (cutoffs
// 19,997 / 39,997 / 199,997 plus the three cluster tokens) tied to the embedding:
//  - base: 16 layers, d 512, 8 heads of 64, FFN 2048, 192-token segments, one 267,735 x 512
//    table (div_val 1), dropout 0.1, none on the attention probabilities;
//  - large: 18 layers, d 1024, 16 heads of 64, FFN 4096, 384-token segments, dropout 0.2 on
//    the attention probabilities too, and an adaptive input (div_val 4): one table per
//    cluster, 1,024, 256, 64 and 16 wide, each projected to 1,024; the softmax shares the
//    tables and the tail clusters' projections and has its own for the head.
// One sample is one segment of one stream.
//
// What each tensor carries, following the implementation's operators in order:
//  - qkv_net projects the tokens of [memory; segment] (the memory's queries are computed
//    and dropped), after torch.cat copies them into one tensor. r_net projects the relative
//    positions once per batch, not per sample: for the base model at batch 32 its 0.2 GFLOP
//    per layer and batch is 1 % of qkv_net's, and it is left out (the builder counts per
//    sample).
//  - The score work goes to o_net's weight: the two biased queries (q + r_w_bias,
//    q + r_r_bias), the copies torch.einsum makes to hand batched products contiguous
//    operands, the AC and BD products (each 2 x 192 x 384 x 512 FLOPs per base sample), the
//    relative shift (a torch.cat of the BD scores with a zero column), add_and_scale (AC +
//    BD, scaled, one TorchScript kernel), the in-place causal mask, the softmax over the
//    last dimension, the product with the values and the contiguous copy of its output.
//  - Dropout on the word embedding, the attention output, the FFN's hidden layer and output
//    and the last layer's output: masks kept, traffic not counted (builder.hpp).
//  - The adaptive softmax's work goes to its bias (crit.out_layers_biases.0, its gradient
//    ready first in backward): the head logits over 20,000 words and 3 cluster tokens for
//    every token, their log-softmax, a row copy of it per token (index_select per cluster),
//    and for the tokens of each tail cluster their hidden rows copied, their logits over the
//    cluster's words and a log-softmax. The share of tokens in each cluster is Zipf's law
//    fitted to WikiText-103's published counts (kHeadShare, kTailShares). With projections
//    (large), each cluster's logits are two products, through the projection and against
//    the table, and the bias is added apart (torch.einsum, then +).
//  - The embedding's lookup and its in-place scale by sqrt(d) go to its table, which is also
//    the softmax's weight: its gradient is complete only after the lookup's backward, the
//    last of the pass, so DDP reduces it last. The adaptive input (large) starts from a
//    zeroed output, looks up each cluster's tokens, projects them and copies them in
//    (index_copy_); each cluster's lookup goes to its table, its projection to its
//    projection, both at the start of forward.
// Not counted: the memory update (torch.stack of the n_layer + 1 hidden states under
// no_grad, 2.5 % of the base model's forward traffic; the builder doubles forward traffic
// for backward, which this work has none of); the per-iteration copies of the head weight
// (torch.cat) and the full-size gradients autograd makes for each slice of the tied table;
// the host synchronisations of the softmax's nonzero() per cluster.
//
// Precision. NVIDIA's mixed precision here is Apex AMP O2: the model itself is cast to
// fp16, so every activation is 16-bit, layer norm and softmax included, and nothing is
// converted on the way (no autocast casts); gradients are fp16 and fp32 master weights are
// kept by the optimizer. So this model's traffic follows the compute dtype throughout, as a
// layer file's does: no tensor here is marked fp32 or cast.
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "builder.hpp"

namespace dtperf::zoo {
namespace {

struct TxlShape {
  int layers;
  std::int64_t model_dim;
  std::int64_t heads;
  std::int64_t ffn_dim;
  double target_tokens;  // tgt_len
  double memory_tokens;  // mem_len
  double batch_per_gpu;
  int div_val;             // 1: one table; 4: one per cluster, each 4x narrower
  bool attention_dropout;  // dropatt > 0
};

constexpr std::int64_t kWt103Vocab = 267'735;
// Adaptive softmax clusters for WikiText-103 (train.py: cutoffs [19997, 39997, 199997] after
// the 3 special symbols, so the head holds the 20,000 most frequent words).
constexpr std::int64_t kHeadWords = 20'000;
constexpr std::int64_t kClusters = 3;
constexpr std::array<std::int64_t, 3> kTailWords{20'000, 160'000, kWt103Vocab - 200'000};
// Share of the tokens whose word falls in the head and in each tail cluster: Zipf's law
// p(r) ~ r^-s over the 267,735 ranks, with s = 1.2754 chosen so that 103,227,021 training
// tokens (Merity et al. 2016) leave the rarest word 3 occurrences (WikiText-103 keeps every
// word seen at least 3 times). tests/test_zoo.cpp recomputes these.
constexpr double kHeadShare = 0.970528;
constexpr std::array<double, 3> kTailShares{0.010032, 0.017077, 0.002363};

// A layer norm under Apex O2: fp16 like everything else (builder.hpp's layer_norm marks its
// traffic fp32, as autocast runs it).
std::size_t o2_layer_norm(ModelBuilder& builder, const std::string& prefix, std::int64_t features, double tokens) {
  const double elements = static_cast<double>(features) * tokens;
  const Work norm = elementwise(elements, kNormFlopsPerElement, 2.0) + keeps(elements + kNormStatistics * tokens);
  const std::size_t weight = builder.add(prefix + ".weight", features, norm);
  builder.add(prefix + ".bias", features, {});
  return weight;
}

// An embedding lookup of `tokens` rows of `width` (builder.hpp's embedding() without its
// fp32 marking): the rows read, the result written, the int64 indices kept for the backward
// scatter.
Work lookup(std::int64_t width, double tokens) {
  const double elements = static_cast<double>(width) * tokens;
  return Work{0.0, 2.0 * elements * kActivationBytes, 0.0, 0.0, kIndexBytes * tokens};
}

// The relative attention's score work for one segment, attached to o_net.
Work relative_attention(const TxlShape& s) {
  const double d = static_cast<double>(s.model_dim);
  const double q = s.target_tokens;
  const double k = s.target_tokens + s.memory_tokens;
  const double scores = static_cast<double>(s.heads) * q * k;
  const double product_flops = 2.0 * q * k * d;
  // AC: (q + r_w_bias) against the keys; operands copied to [b, n, i, d] and [b, n, d, j].
  const Work ac = elementwise(q * d, 1.0, 2.0) + copy(q * d + k * d) +
                  gemm(product_flops, (q * d + k * d + scores) * kActivationBytes) + keeps(q * d + k * d);
  // BD: (q + r_r_bias) against the projected positions (per batch: their traffic is left
  // out), then the relative shift's padded copy of the scores.
  const Work bd = elementwise(q * d, 1.0, 2.0) + copy(q * d) +
                  gemm(product_flops, (q * d + scores) * kActivationBytes) + keeps(q * d) + copy(scores);
  // add_and_scale, the in-place mask, the softmax (its output kept).
  // With dropout on them the dropped probabilities are kept too, and the mask.
  const Work probabilities = elementwise(scores, 2.0, 3.0) + copy(scores) +
                             elementwise(scores, kSoftmaxFlopsPerElement, 2.0) + keeps(scores) +
                             (s.attention_dropout ? keeps(scores) + dropout_mask(scores) : Work{});
  // The probabilities against the values (copied to [b, n, j, d]), the output made
  // contiguous for o_net.
  const Work context = copy(k * d) + gemm(product_flops, (scores + k * d + q * d) * kActivationBytes) + keeps(k * d) +
                       copy(q * d);
  return ac + bd + probabilities + context;
}

void txl_layer(ModelBuilder& builder, const std::string& prefix, const TxlShape& s) {
  const std::int64_t d = s.model_dim;
  const double q = s.target_tokens;
  const double k = s.target_tokens + s.memory_tokens;
  const double elements = static_cast<double>(d) * q;
  const double hidden = static_cast<double>(s.ffn_dim) * q;
  builder.attach(linear(builder, prefix + ".dec_attn.qkv_net", d, 3 * d, k, false), copy(static_cast<double>(d) * k));
  builder.add(prefix + ".dec_attn.r_net.weight", d * d, {});
  // o_net, then dropout and the residual add before the post-norm.
  builder.attach(linear(builder, prefix + ".dec_attn.o_net", d, d, q, false),
                 relative_attention(s) + dropout_mask(elements) + elementwise(elements, 1.0, 3.0));
  o2_layer_norm(builder, prefix + ".dec_attn.layer_norm", d, q);
  // CoreNet: Linear, ReLU (in place, its output kept by the next Linear), Dropout, Linear,
  // Dropout; the residual add before the post-norm.
  builder.attach(linear(builder, prefix + ".pos_ff.CoreNet.0", d, s.ffn_dim, q),
                 elementwise(hidden, kReluFlopsPerElement, 2.0) + dropout_mask(hidden));
  builder.attach(linear(builder, prefix + ".pos_ff.CoreNet.3", s.ffn_dim, d, q),
                 dropout_mask(elements) + elementwise(elements, 1.0, 3.0));
  o2_layer_norm(builder, prefix + ".pos_ff.layer_norm", d, q);
}

// ProjectedAdaptiveLogSoftmax over the segment's target tokens. Cluster c's table is d / 4^c
// wide (div_val 4; all d with div_val 1). Without projections (div_val 1, one tied table) a
// cluster's logits are one product with the bias fused in (F.linear); with them, the hidden
// rows go through the projection (d x the table's width), then against the table, and the
// bias is added apart (torch.einsum('bd,de,ev->bv'), then +).
Work adaptive_softmax(const TxlShape& s) {
  const std::int64_t d = s.model_dim;
  const double dd = static_cast<double>(d);
  const double q = s.target_tokens;
  const bool projected = s.div_val != 1;
  const auto cluster = [&](double tokens, std::int64_t width, std::int64_t words) {
    const double w = static_cast<double>(width);
    const double v = static_cast<double>(words);
    Work work = keeps(dd * tokens);
    if (projected) {
      work = work + gemm(2.0 * dd * w * tokens, (dd + w) * tokens * kActivationBytes, {d, width}) + keeps(w * tokens);
    }
    work = work + gemm(2.0 * w * v * tokens, (w + v) * tokens * kActivationBytes, {width, words});
    if (projected) work = work + elementwise(v * tokens, 1.0, 3.0);
    return work + elementwise(v * tokens, kSoftmaxFlopsPerElement, 2.0) + keeps(v * tokens);
  };
  // The head over every token, its log-probabilities copied row by row (index_select per
  // cluster); each tail over its tokens, their hidden rows copied.
  Work work = cluster(q, d, kHeadWords + kClusters) + copy(static_cast<double>(kHeadWords + kClusters) * q);
  for (std::size_t c = 0; c < kTailWords.size(); ++c) {
    const double tokens = kTailShares[c] * q;
    const std::int64_t width = projected ? d >> (2 * (c + 1)) : d;
    work = work + copy(dd * tokens) + cluster(tokens, width, kTailWords[c]);
  }
  return work;
}

// AdaptiveEmbedding with div_val 4: the output zeroed, each cluster's tokens looked up in
// its table, projected to d and copied in (index_copy_), then scaled by sqrt(d).
void adaptive_input(ModelBuilder& builder, const TxlShape& s) {
  const std::int64_t d = s.model_dim;
  const double q = s.target_tokens;
  const double elements = static_cast<double>(d) * q;
  const std::array<std::int64_t, 4> words{kHeadWords, kTailWords[0], kTailWords[1], kTailWords[2]};
  const std::array<double, 4> shares{kHeadShare, kTailShares[0], kTailShares[1], kTailShares[2]};
  for (std::size_t c = 0; c < words.size(); ++c) {
    const std::int64_t width = d >> (2 * c);
    const double looked_up = static_cast<double>(width) * shares[c] * q;
    // The zeroed output and the final scale and dropout go to the head's table.
    const Work extra = c == 0 ? elementwise(elements, 0.0, 1.0) + elementwise(elements, 1.0, 2.0) +
                                    dropout_mask(elements)
                              : Work{};
    builder.add("word_emb.emb_layers." + std::to_string(c) + ".weight", words[c] * width,
                lookup(width, shares[c] * q) + extra, looked_up);
  }
  for (std::size_t c = 0; c < words.size(); ++c) {
    const std::int64_t width = d >> (2 * c);
    const double tokens = shares[c] * q;
    const double w = static_cast<double>(width);
    const double dd = static_cast<double>(d);
    builder.add("word_emb.emb_projs." + std::to_string(c), d * width,
                gemm(2.0 * w * dd * tokens, (w + dd) * tokens * kActivationBytes, {width, d}) + keeps(w * tokens) +
                    copy(dd * tokens));
  }
}

ModelSpec txl_tensors(const TxlShape& s) {
  ModelBuilder builder("sequence", s.batch_per_gpu, Optimizer::lamb);
  const double q = s.target_tokens;
  const double elements = static_cast<double>(s.model_dim) * q;
  if (s.div_val == 1) {
    // The lookup, embed.mul_(sqrt(d)), then dropout.
    builder.add("word_emb.emb_layers.0.weight", kWt103Vocab * s.model_dim,
                lookup(s.model_dim, q) + elementwise(elements, 1.0, 2.0) + dropout_mask(elements), elements);
  } else {
    adaptive_input(builder, s);
  }
  // The relative-position biases, shared by every layer: their gradients are complete after
  // the first layer's backward, the end of the pass.
  const std::int64_t per_bias = s.model_dim;  // n_head x d_head
  builder.add("r_w_bias", per_bias, {});
  builder.add("r_r_bias", per_bias, {});
  for (int i = 0; i < s.layers; ++i) txl_layer(builder, "layers." + std::to_string(i), s);
  builder.add("crit.cluster_weight", kClusters * s.model_dim, {});
  builder.add("crit.cluster_bias", kClusters, {});
  if (s.div_val == 1) {
    builder.add("crit.out_layers_biases.0", kWt103Vocab, adaptive_softmax(s) + dropout_mask(elements));
  } else {
    // The head's own projection (tie_projs [false, true, true, true]); the tails' are the
    // embedding's. Each cluster's bias.
    builder.add("crit.out_projs.0", s.model_dim * s.model_dim, {});
    builder.add("crit.out_layers_biases.0", kHeadWords, adaptive_softmax(s) + dropout_mask(elements));
    for (std::size_t c = 0; c < kTailWords.size(); ++c) {
      builder.add("crit.out_layers_biases." + std::to_string(c + 1), kTailWords[c], {});
    }
  }
  return std::move(builder).finish();
}

}  // namespace

// wt103_base.yaml; batch 32 per GPU, as NVIDIA's DGX A100 results train it.
ModelSpec build_transformer_xl_base() { return txl_tensors({16, 512, 8, 2048, 192.0, 192.0, 32.0, 1, false}); }
// wt103_large.yaml; batch 8 per GPU, as NVIDIA's results train it in 32 bits.
ModelSpec build_transformer_xl_large() { return txl_tensors({18, 1024, 16, 4096, 384.0, 384.0, 8.0, 4, true}); }

}  // namespace dtperf::zoo
