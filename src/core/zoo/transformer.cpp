// Encoder and encoder-decoder transformers of the zoo: the WMT14 En-De Transformer
// (fairseq), BERT (Hugging Face BertModel with pooler) and ViT-B/16 (torchvision).
//
// Tensor names follow each implementation's named_parameters(); the tensors are built
// in the order their operators run in forward and returned reversed. Attached work:
//  - Attention score products (QK^T, AV), the softmax and the residual add after the
//    attention go to the attention output projection's weight. fairseq and BERT run them
//    as PyTorch operators (eager); torchvision's ViT calls nn.MultiheadAttention with
//    need_weights=False, which runs scaled_dot_product_attention, one fused kernel (the
//    H200 kernel breakdown shows its fmha kernels, validation/data/single-gpu/h200-kernels.json).
//  - GELU/ReLU to the first FFN linear's weight; the residual add after the FFN to the
//    second FFN linear's weight.
//  - Position additions to the position embedding (BERT, ViT) or the token embedding
//    (fairseq, sinusoidal positions have no parameters).
//  - Output projection tied to the shared embedding (fairseq): its GEMM, softmax and
//    cross-entropy go to the last decoder layer norm's weight, the operator before it,
//    so its backward lands at the start of the backward pass.
//  - Dropout masks kept for backward: fairseq's residual dropout (0.1 base, 0.3 big; no
//    attention or activation dropout by default) and BERT's hidden and attention-probability
//    dropout (0.1); torchvision's ViT-B/16 trains without dropout. The query, key and value
//    projections read one input, kept once; so do the cross-attention key and value
//    projections, whose encoder output is counted once per layer (a slight overcount: it
//    is one tensor for all decoder layers).
#include <cstdint>
#include <string>
#include <utility>

#include "builder.hpp"

namespace dtperf::zoo {
namespace {

// GELU keeps its input; ReLU keeps its output, which the next linear keeps as its input
// already (counted there).
Work activation(std::int64_t features, double tokens, double flops_per_element) {
  const double elements = static_cast<double>(features) * tokens;
  const bool keeps_input = flops_per_element != kReluFlopsPerElement;
  return elementwise(elements, flops_per_element, 2.0) + keeps(keeps_input ? elements : 0.0);
}

Work residual_dropout(std::int64_t features, double tokens) {
  return dropout_mask(static_cast<double>(features) * tokens);
}

// Query, key and value projections of one input: the input kept once, and cast by each
// (it is a layer norm's or the embeddings' fp32 output).
void qkv_projections(ModelBuilder& builder, const std::string& q, const std::string& k, const std::string& v,
                     std::int64_t features, double tokens) {
  const double input = static_cast<double>(features) * tokens;
  const double input_bytes = input * kActivationBytes;
  builder.attach(linear(builder, q, features, features, tokens), casts(input));
  const std::size_t key = linear(builder, k, features, features, tokens);
  builder.shares_input(key, input_bytes);
  builder.attach(key, casts(input));
  const std::size_t value = linear(builder, v, features, features, tokens);
  builder.shares_input(value, input_bytes);
  builder.attach(value, casts(input));
}

// ---- Transformer for WMT14 En-De (fairseq) ----------------------------------------
//
// One sample is one token position of a sentence pair: a source token and a target
// token, source and target sentences both assumed kWmtSentenceTokens long. Every
// per-token operator runs once in the encoder and once in the decoder per sample;
// encoder self-attention and cross-attention see kWmtSentenceTokens keys, the causal
// decoder self-attention half of them.

constexpr std::int64_t kWmtVocab = 32768;  // joined En-De BPE dictionary
constexpr double kWmtSentenceTokens = 32.0;
constexpr double kWmtTokensPerGpu = 3125.0;  // --max-tokens 3125 (25k tokens on 8 GPUs)

struct WmtConfig {
  std::int64_t model_dim;
  std::int64_t ffn_dim;
  std::int64_t heads;
  int layers;  // each of encoder and decoder
};

// fairseq MultiheadAttention for one query token per sample.
void fairseq_attention(ModelBuilder& builder, const std::string& prefix, const WmtConfig& c,
                       double keys_per_query) {
  qkv_projections(builder, prefix + ".q_proj", prefix + ".k_proj", prefix + ".v_proj", c.model_dim, 1.0);
  const std::size_t out = linear(builder, prefix + ".out_proj", c.model_dim, c.model_dim, 1.0);
  builder.attach(out, attention_products(c.model_dim, c.heads, 1.0, keys_per_query, kWmtSentenceTokens, false) +
                          residual_add(c.model_dim, 1.0) + residual_dropout(c.model_dim, 1.0));
}

// fc1, ReLU, fc2, residual add, final_layer_norm (post-norm).
std::size_t fairseq_ffn(ModelBuilder& builder, const std::string& prefix, const WmtConfig& c) {
  builder.attach(linear(builder, prefix + ".fc1", c.model_dim, c.ffn_dim, 1.0),
                 casts(static_cast<double>(c.model_dim)) + activation(c.ffn_dim, 1.0, kReluFlopsPerElement));
  builder.attach(linear(builder, prefix + ".fc2", c.ffn_dim, c.model_dim, 1.0),
                 residual_add(c.model_dim, 1.0) + residual_dropout(c.model_dim, 1.0));
  return layer_norm(builder, prefix + ".final_layer_norm", c.model_dim, 1.0);
}

void fairseq_encoder_layer(ModelBuilder& builder, const std::string& prefix,
                           const WmtConfig& c) {
  fairseq_attention(builder, prefix + ".self_attn", c, kWmtSentenceTokens);
  layer_norm(builder, prefix + ".self_attn_layer_norm", c.model_dim, 1.0);
  fairseq_ffn(builder, prefix, c);
}

// Returns the index of final_layer_norm.weight.
std::size_t fairseq_decoder_layer(ModelBuilder& builder, const std::string& prefix,
                                  const WmtConfig& c) {
  fairseq_attention(builder, prefix + ".self_attn", c, kWmtSentenceTokens / 2.0);
  layer_norm(builder, prefix + ".self_attn_layer_norm", c.model_dim, 1.0);
  fairseq_attention(builder, prefix + ".encoder_attn", c, kWmtSentenceTokens);
  layer_norm(builder, prefix + ".encoder_attn_layer_norm", c.model_dim, 1.0);
  return fairseq_ffn(builder, prefix, c);
}

// --share-all-embeddings: one table serves the encoder input, the decoder input and
// the output projection; named_parameters() lists it once, as the encoder's.
// Post-norm layers have no final encoder/decoder layer norm.
ModelSpec wmt_transformer(const WmtConfig& c) {
  ModelBuilder builder("token", kWmtTokensPerGpu, Optimizer::adam);
  const std::size_t table =
      embedding(builder, "encoder.embed_tokens.weight", kWmtVocab, c.model_dim, 2.0);
  // sqrt(d) scaling and the sinusoidal position add, encoder and decoder.
  builder.attach(table, in_fp32(elementwise(2.0 * static_cast<double>(c.model_dim), 2.0, 3.0)) +
                           residual_dropout(c.model_dim, 2.0));
  for (int i = 0; i < c.layers; ++i)
    fairseq_encoder_layer(builder, "encoder.layers." + std::to_string(i), c);
  std::size_t last_norm = 0;
  for (int i = 0; i < c.layers; ++i)
    last_norm = fairseq_decoder_layer(builder, "decoder.layers." + std::to_string(i), c);
  builder.attach(last_norm, tied_output_projection(c.model_dim, kWmtVocab, 1.0));
  return std::move(builder).finish();
}

// ---- BERT (Hugging Face BertModel) ------------------------------------------------
//
// One sample is a sequence of kBertSequenceTokens tokens; the model is the encoder
// and pooler (as counted by bert-base-uncased / bert-large-uncased), without the
// pre-training heads.

constexpr double kBertSequenceTokens = 512.0;
constexpr std::int64_t kBertVocab = 30522;
constexpr std::int64_t kBertPositions = 512;
constexpr std::int64_t kBertTokenTypes = 2;

struct BertConfig {
  std::int64_t hidden;
  std::int64_t intermediate;
  std::int64_t heads;
  int layers;
  double batch_per_gpu;
};

void bert_embeddings(ModelBuilder& builder, const BertConfig& c) {
  const double tokens = kBertSequenceTokens;
  embedding(builder, "embeddings.word_embeddings.weight", kBertVocab, c.hidden, tokens);
  builder.attach(embedding(builder, "embeddings.position_embeddings.weight", kBertPositions,
                           c.hidden, tokens),
                 embedding_add(c.hidden, tokens));
  builder.attach(embedding(builder, "embeddings.token_type_embeddings.weight",
                           kBertTokenTypes, c.hidden, tokens),
                 embedding_add(c.hidden, tokens));
  builder.attach(layer_norm(builder, "embeddings.LayerNorm", c.hidden, tokens), residual_dropout(c.hidden, tokens));
}

void bert_layer(ModelBuilder& builder, const std::string& prefix, const BertConfig& c) {
  const double tokens = kBertSequenceTokens;
  qkv_projections(builder, prefix + ".attention.self.query", prefix + ".attention.self.key",
                  prefix + ".attention.self.value", c.hidden, tokens);
  builder.attach(linear(builder, prefix + ".attention.output.dense", c.hidden, c.hidden, tokens),
                 attention_products(c.hidden, c.heads, tokens, tokens, tokens, true) +
                     residual_add(c.hidden, tokens) + residual_dropout(c.hidden, tokens));
  layer_norm(builder, prefix + ".attention.output.LayerNorm", c.hidden, tokens);
  builder.attach(linear(builder, prefix + ".intermediate.dense", c.hidden, c.intermediate, tokens),
                 casts(static_cast<double>(c.hidden) * tokens) + activation(c.intermediate, tokens, kGeluFlopsPerElement));
  builder.attach(linear(builder, prefix + ".output.dense", c.intermediate, c.hidden, tokens),
                 residual_add(c.hidden, tokens) + residual_dropout(c.hidden, tokens));
  layer_norm(builder, prefix + ".output.LayerNorm", c.hidden, tokens);
}

ModelSpec bert(const BertConfig& c) {
  ModelBuilder builder("sequence", c.batch_per_gpu, Optimizer::adam);
  bert_embeddings(builder, c);
  for (int i = 0; i < c.layers; ++i)
    bert_layer(builder, "encoder.layer." + std::to_string(i), c);
  // The pooler reads the first token only: dense + tanh.
  builder.attach(linear(builder, "pooler.dense", c.hidden, c.hidden, 1.0),
                 casts(static_cast<double>(c.hidden)) + activation(c.hidden, 1.0, kTanhFlopsPerElement));
  return std::move(builder).finish();
}

// ---- ViT-B/16 (torchvision vit_b_16) ----------------------------------------------
//
// One sample is a 224x224 image: 14x14 patches of 16x16 plus the class token.

constexpr std::int64_t kVitImageSide = 224;
constexpr std::int64_t kVitPatch = 16;
constexpr std::int64_t kVitHidden = 768;
constexpr std::int64_t kVitMlp = 3072;
constexpr std::int64_t kVitHeads = 12;
constexpr int kVitLayers = 12;
constexpr std::int64_t kVitClasses = 1000;
constexpr double kVitBatchPerGpu = 64.0;

// The layout work of nn.MultiheadAttention's self-attention (F.multi_head_attention_forward,
// PyTorch 2), beside the products: `_in_projection_packed` makes the packed projection's
// output contiguous as (3, tokens, E), a copy of 3E per token, and hands out its three
// slices; the attention's output is permuted back and made contiguous for out_proj, a copy
// of E. In backward each slice's select fills a zero gradient of the whole 3E buffer and
// copies its E into it, autograd sums the three (two adds of 3E), and the sum, in the
// permuted layout, is copied back for in_proj's products (3E). The H200 profile of
// ViT-B/16's training step shows the selects' kernels, 3 per layer: 39 fills and 36
// device-to-device copies per step, 1.84 and 1.40 ms in tf32, what 3E and E per token at
// the measured copy bandwidth take (validation/data/single-gpu/h200-kernels.json).
struct PackedProjectionLayout {
  Work in_proj;   // the packed output's copy and the selects' backward
  Work out_proj;  // the output's copy, its backward priced by the rule (twice forward)
};
PackedProjectionLayout packed_projection_layout(std::int64_t features, double tokens) {
  const double e = static_cast<double>(features) * tokens;
  PackedProjectionLayout layout{copy(3.0 * e), copy(e)};
  // Backward, in accesses of E per token: fills 3 x 3 (written), slice copies 3 x 2, the
  // sum 2 x (6 read + 3 written), the copy back 3 + 3: 39, of which the rule charges twice
  // the forward copy's 6.
  layout.in_proj.backward_bytes = (39.0 - 2.0 * 6.0) * e * kActivationBytes;
  return layout;
}

void vit_layer(ModelBuilder& builder, const std::string& prefix, double tokens) {
  layer_norm(builder, prefix + ".ln_1", kVitHidden, tokens);
  const PackedProjectionLayout layout = packed_projection_layout(kVitHidden, tokens);
  builder.attach(linear(builder, prefix + ".self_attention.in_proj_weight",
                        prefix + ".self_attention.in_proj_bias", kVitHidden, 3 * kVitHidden, tokens),
                 casts(static_cast<double>(kVitHidden) * tokens) + layout.in_proj);
  const std::size_t out_proj = linear(builder, prefix + ".self_attention.out_proj", kVitHidden, kVitHidden, tokens);
  const FusedAttention fused = fused_attention_products(kVitHidden, kVitHidden, kVitHeads, tokens, AttentionMask::full);
  builder.attach(out_proj, fused.forward, fused.backward_flops);
  builder.attach(out_proj, layout.out_proj + residual_add(kVitHidden, tokens));
  layer_norm(builder, prefix + ".ln_2", kVitHidden, tokens);
  builder.attach(linear(builder, prefix + ".mlp.0", kVitHidden, kVitMlp, tokens),
                 casts(static_cast<double>(kVitHidden) * tokens) + activation(kVitMlp, tokens, kGeluFlopsPerElement));
  builder.attach(linear(builder, prefix + ".mlp.3", kVitMlp, kVitHidden, tokens),
                 residual_add(kVitHidden, tokens));
}

ModelSpec vit_b16() {
  ModelBuilder builder("image", kVitBatchPerGpu, Optimizer::adam);
  const FeatureMap image{3, kVitImageSide, kVitImageSide};
  const ConvOutput projection = conv2d(builder, "conv_proj", image, kVitHidden, kVitPatch, kVitPatch, 0, true);
  builder.attach(projection.weight_index, casts(image.elements()));  // the fp32 image, under autocast
  const FeatureMap patches = projection.map;
  const double tokens = static_cast<double>(patches.height * patches.width) + 1.0;
  const double sequence_elements = tokens * static_cast<double>(kVitHidden);
  // Concatenating the class token copies the sequence, written in fp32 (the widest of the
  // 16-bit patches and the fp32 token); the position add is fp32 throughout.
  Work concatenate = elementwise(sequence_elements, 0.0, 2.0);
  concatenate.fp32_bytes = sequence_elements * kActivationBytes;
  builder.add("class_token", kVitHidden, concatenate);
  builder.add("encoder.pos_embedding", static_cast<std::int64_t>(sequence_elements),
              embedding_add(kVitHidden, tokens));
  for (int i = 0; i < kVitLayers; ++i)
    vit_layer(builder, "encoder.layers.encoder_layer_" + std::to_string(i), tokens);
  layer_norm(builder, "encoder.ln", kVitHidden, tokens);
  builder.attach(linear(builder, "heads.head", kVitHidden, kVitClasses, 1.0),
                 casts(static_cast<double>(kVitHidden)) + softmax_cross_entropy(kVitClasses, 1.0));
  return std::move(builder).finish();
}

}  // namespace

// transformer_wmt_en_de: d 512, FFN 2048, 8 heads, 6+6 layers.
ModelSpec build_transformer_base() { return wmt_transformer({512, 2048, 8, 6}); }
// transformer_vaswani_wmt_en_de_big: d 1024, FFN 4096, 16 heads, 6+6 layers.
ModelSpec build_transformer_big() { return wmt_transformer({1024, 4096, 16, 6}); }
ModelSpec build_bert_base() { return bert({768, 3072, 12, 12, 16.0}); }
ModelSpec build_bert_large() { return bert({1024, 4096, 16, 24, 8.0}); }
ModelSpec build_vit_b16() { return vit_b16(); }

}  // namespace dtperf::zoo
