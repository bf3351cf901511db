#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "dtperf/zoo.hpp"

namespace {

using dtperf::ModelSpec;

ModelSpec zoo(const std::string& name) {
  const auto model = dtperf::zoo_model(name);
  REQUIRE(model.has_value());
  return *model;
}

double forward_flops(const ModelSpec& model) {
  double total = 0.0;
  for (const auto& tensor : model.tensors) total += tensor.forward_flops_per_sample;
  return total;
}

// The tensor of `model` named `name` (a copy: Catch2's FAIL throws, the return is never taken).
dtperf::TensorSpec tensor_named(const ModelSpec& model, const std::string& name) {
  for (const auto& tensor : model.tensors)
    if (tensor.name == name) return tensor;
  FAIL("no tensor " << name);
  return model.tensors.front();
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

}  // namespace

TEST_CASE("The zoo lists the sixteen built-in models by name", "[zoo]") {
  const std::vector<std::string> expected{
      "resnet50",    "resnet101",   "vgg16",      "vgg16-bn", "transformer-base",
      "transformer-big", "bert-base", "bert-large", "gpt2-small", "gpt2-medium",
      "gpt2-large",  "gpt2-xl",     "vit-b16",    "llama-7b", "transformer-xl-base",
      "transformer-xl-large"};
  std::vector<std::string> names;
  for (const auto& entry : dtperf::model_zoo()) names.emplace_back(entry.name);
  CHECK(names == expected);
}

TEST_CASE("Looking up an unknown zoo model gives nothing", "[zoo]") {
  CHECK_FALSE(dtperf::zoo_model("nope").has_value());
  CHECK_FALSE(dtperf::zoo_model("").has_value());
}

TEST_CASE("A zoo model carries its entry's name, description and citation", "[zoo]") {
  for (const auto& entry : dtperf::model_zoo()) {
    INFO(entry.name);
    const ModelSpec model = zoo(entry.name);
    CHECK(model.name == entry.name);
    CHECK(model.description == entry.description);
    CHECK(model.citation == entry.citation);
    CHECK_FALSE(model.description.empty());
    CHECK_FALSE(model.citation.empty());
    CHECK(model.param_bytes == 4);
    CHECK(model.default_batch_per_gpu > 0.0);
  }
}

TEST_CASE("Every zoo model's tensors add up to its published parameter count", "[zoo]") {
  for (const auto& entry : dtperf::model_zoo()) {
    INFO(entry.name);
    CHECK(entry.build().total_params() == entry.published_params);
  }
}

TEST_CASE("Published parameter counts match the reference implementations", "[zoo]") {
  const auto published = [](const std::string& name) {
    for (const auto& entry : dtperf::model_zoo())
      if (entry.name == name) return entry.published_params;
    return std::int64_t{-1};
  };
  CHECK(published("resnet50") == 25'557'032);
  CHECK(published("resnet101") == 44'549'160);
  CHECK(published("vgg16") == 138'357'544);
  CHECK(published("vgg16-bn") == 138'365'992);
  CHECK(published("bert-base") == 109'482'240);
  CHECK(published("bert-large") == 335'141'888);
  CHECK(published("gpt2-small") == 124'439'808);
  CHECK(published("gpt2-medium") == 354'823'168);
  CHECK(published("gpt2-large") == 774'030'080);
  CHECK(published("gpt2-xl") == 1'557'611'200);
  CHECK(published("vit-b16") == 86'567'656);
  CHECK(published("llama-7b") == 6'738'415'616);
}

TEST_CASE("The WMT Transformers count a shared 32,768-token embedding and post-norm layers",
          "[zoo][transformer]") {
  // Encoder layer: 4(d^2 + d) + 2d + (d f + f) + (f d + d) + 2d;
  // decoder layer: that plus 4(d^2 + d) + 2d for the cross-attention.
  const auto count = [](std::int64_t d, std::int64_t f) {
    const std::int64_t attention = 4 * (d * d + d);
    const std::int64_t norm = 2 * d;
    const std::int64_t encoder = attention + norm + (d * f + f) + (f * d + d) + norm;
    const std::int64_t decoder = encoder + attention + norm;
    return 32'768 * d + 6 * encoder + 6 * decoder;
  };
  // 32,768 x 512 = 16,777,216 + 6 x 3,152,384 + 6 x 4,204,032 => 60,915,712.
  CHECK(count(512, 2048) == 60'915'712);
  CHECK(zoo("transformer-base").total_params() == count(512, 2048));
  // 32,768 x 1024 = 33,554,432 + 6 x 12,596,224 + 6 x 16,796,672 => 209,911,808.
  CHECK(count(1024, 4096) == 209'911'808);
  CHECK(zoo("transformer-big").total_params() == count(1024, 4096));
  CHECK(zoo("transformer-base").sample_unit == "token");
  CHECK(zoo("transformer-base").default_batch_per_gpu == 3125.0);
}

TEST_CASE("Every zoo tensor has parameters and non-negative work", "[zoo]") {
  for (const auto& entry : dtperf::model_zoo()) {
    const ModelSpec model = entry.build();
    REQUIRE_FALSE(model.tensors.empty());
    for (const auto& tensor : model.tensors) {
      INFO(entry.name << " " << tensor.name);
      CHECK(tensor.params > 0);
      CHECK(tensor.forward_flops_per_sample >= 0.0);
      CHECK(tensor.backward_flops_per_sample >= 0.0);
      CHECK(tensor.forward_memory_bytes_per_sample >= 0.0);
      // The products' own traffic is part of the operator's, and moves only with products.
      CHECK(tensor.forward_gemm_memory_bytes_per_sample >= 0.0);
      CHECK(tensor.forward_gemm_memory_bytes_per_sample <= tensor.forward_memory_bytes_per_sample * (1 + 1e-12));
      if (tensor.forward_gemm_flops_per_sample == 0.0) CHECK(tensor.forward_gemm_memory_bytes_per_sample == 0.0);
      CHECK_FALSE(tensor.measured_backward_s.has_value());
    }
  }
}

TEST_CASE("Under autocast a CNN casts only its image and a transformer keeps norms and stream in fp32",
          "[zoo][autocast]") {
  for (const auto& entry : dtperf::model_zoo()) {
    for (const auto& tensor : entry.build().tensors) {
      INFO(entry.name << " " << tensor.name);
      CHECK(tensor.forward_fp32_memory_bytes_per_sample >= 0.0);
      CHECK(tensor.forward_fp32_memory_bytes_per_sample <= tensor.forward_memory_bytes_per_sample);
      CHECK(tensor.forward_cast_elements_per_sample >= 0.0);
    }
  }
  // ResNet-50: everything from the first convolution to the logits reads 16-bit inputs. The
  // casts: the 3 x 224 x 224 image into conv1, the 1,000 logits into the loss, which reads
  // and writes them in fp32 (2 x 1,000 x 4 bytes).
  double fp32 = 0.0;
  double casts = 0.0;
  for (const auto& tensor : zoo("resnet50").tensors) {
    fp32 += tensor.forward_fp32_memory_bytes_per_sample;
    casts += tensor.forward_cast_elements_per_sample;
  }
  CHECK(fp32 == 2.0 * 1000 * 4);
  CHECK(casts == 3.0 * 224 * 224 + 1000);
  // GPT-2 small, per 1,024-token sequence of d = 768: a layer norm is fp32 through (read and
  // write at 4 bytes); c_attn casts ln_1's output (768 x 1,024 elements) for its product.
  const ModelSpec gpt2 = zoo("gpt2-small");
  for (const auto& tensor : gpt2.tensors) {
    INFO(tensor.name);
    if (tensor.name == "h.0.ln_1.weight") {
      CHECK(tensor.forward_fp32_memory_bytes_per_sample == 2.0 * 768 * 1024 * 4);
      CHECK(tensor.forward_fp32_memory_bytes_per_sample == tensor.forward_memory_bytes_per_sample);
    }
    if (tensor.name == "h.0.attn.c_attn.weight") CHECK(tensor.forward_cast_elements_per_sample == 768.0 * 1024);
  }
}

TEST_CASE("GPT-2's gelu_new runs as eight PyTorch operators, most of them in fp32 under autocast", "[zoo]") {
  // The same GPT-2 small with one GELU kernel (gelu=fused) and with Hugging Face's
  // gelu_new written out (the zoo's gpt2-small): the difference is c_fc's, per 1,024-token
  // sequence over h = 3,072 x 1,024 = 3,145,728 hidden elements (zoo/llm.cpp counts them).
  dtperf::GptShape shape;  // GPT-2 small's dimensions are the defaults
  shape.dropout = true;
  const ModelSpec fused = dtperf::gpt_model(shape);
  const ModelSpec eager = zoo("gpt2-small");
  const auto a = tensor_named(fused, "h.0.mlp.c_fc.weight");
  const auto b = tensor_named(eager, "h.0.mlp.c_fc.weight");
  const double h = 3072.0 * 1024;
  // Forward: 18 accesses at 4 bytes where one kernel makes 2; 14 of them stay fp32; two
  // more casts (x into pow, the result into c_proj).
  CHECK(b.forward_memory_bytes_per_sample - a.forward_memory_bytes_per_sample == Approx((18.0 - 2.0) * 4.0 * h));
  CHECK(b.forward_fp32_memory_bytes_per_sample - a.forward_fp32_memory_bytes_per_sample == Approx(14.0 * 4.0 * h));
  CHECK(b.forward_cast_elements_per_sample - a.forward_cast_elements_per_sample == Approx(2.0 * h));
  // Backward against the rule (twice forward, a cast each): 28 accesses for 36, of them
  // 19 fp32 for 28 and 9 others for 8; 4 casts for 2.
  CHECK(b.backward_extra_memory_bytes_per_sample == Approx((28.0 - 36.0) * 4.0 * h));
  CHECK(b.backward_extra_fp32_memory_bytes_per_sample == Approx((19.0 - 28.0) * 4.0 * h));
  CHECK(b.backward_extra_cast_elements_per_sample == Approx(2.0 * h));
  // Per hidden element, the chain's bytes as compute.cpp prices them. fp32: 72 forward,
  // 2 x 72 - 32 = 112 backward. 16 bits: (72 - 56) / 2 + 56 = 64 of activations and two
  // casts at 4 + 2 bytes, 76 forward; 2 x 64 + 12 - 36 + 4 / 2 + 2 x 6 = 118 backward.
  const double activations16 = (72.0 - 56.0) / 2.0 + 56.0;
  CHECK(activations16 + 2.0 * 6.0 == 76.0);
  CHECK(2.0 * activations16 + 2.0 * 6.0 + (-36.0 + 4.0 / 2.0 + 2.0 * 6.0) == 118.0);
  // It keeps x, tanh's output and both operands of the product: 3 h more than one kernel.
  CHECK(b.saved_activation_bytes_per_sample - a.saved_activation_bytes_per_sample == Approx(3.0 * 4.0 * h));
  // FLOPs: 12 forward and 13 backward per element, where one kernel counts 8 and 16.
  CHECK(b.forward_flops_per_sample - a.forward_flops_per_sample == Approx((12.0 - 8.0) * h));
  CHECK(b.backward_flops_per_sample - a.backward_flops_per_sample == Approx((13.0 - 16.0) * h));
  // Everything else about the two models is the same.
  REQUIRE(fused.tensors.size() == eager.tensors.size());
  CHECK(fused.total_params() == eager.total_params());
}

TEST_CASE("Llama's RMS norm, SwiGLU and rotary embedding run as the PyTorch operators Hugging Face writes",
          "[zoo]") {
  // A small Llama: d 256, 2 key/value heads of 64 (kv_dim 128), SwiGLU 512, 128 tokens.
  // Per sequence: e = 256 x 128 = 32,768 elements of the stream, h = 512 x 128 = 65,536 of
  // the MLP's hidden tensor, q = (256 + 128) x 128 = 49,152 of queries and keys. The counts
  // (zoo/llm.cpp, zoo/builder.cpp) are the traces of validation/eager_chains.py.
  dtperf::LlamaShape shape;
  shape.layers = 1;
  shape.model_dim = 256;
  shape.heads = 4;
  shape.kv_heads = 2;
  shape.ffn_dim = 512;
  shape.context = 128;
  shape.vocab = 1000;
  const ModelSpec llama = dtperf::llama_model(shape);
  const double e = 256.0 * 128;
  const double h = 512.0 * 128;
  const double q = (256.0 + 128.0) * 128;
  // RMS norm, all fp32: 7 accesses forward (pow 2, mean 1, two products 2 + 2), 23 backward
  // against the rule's 14; FLOPs 4 forward, 11 backward per element.
  const auto norm = tensor_named(llama, "model.layers.0.input_layernorm.weight");
  CHECK(norm.forward_memory_bytes_per_sample == Approx(7.0 * 4.0 * e));
  CHECK(norm.forward_fp32_memory_bytes_per_sample == norm.forward_memory_bytes_per_sample);
  CHECK(norm.backward_extra_memory_bytes_per_sample == Approx((23.0 - 14.0) * 4.0 * e));
  CHECK(norm.backward_extra_fp32_memory_bytes_per_sample == norm.backward_extra_memory_bytes_per_sample);
  CHECK(norm.forward_flops_per_sample == Approx(4.0 * e));
  CHECK(norm.backward_flops_per_sample == Approx(11.0 * e));
  // SwiGLU on up_proj, beside its product: silu 2 and the product 3 forward, 9 backward
  // against the rule's 10; none of it fp32.
  const auto up = tensor_named(llama, "model.layers.0.mlp.up_proj.weight");
  CHECK(up.forward_memory_bytes_per_sample - up.forward_gemm_memory_bytes_per_sample == Approx(5.0 * 4.0 * h));
  CHECK(up.forward_fp32_memory_bytes_per_sample == 0.0);
  CHECK(up.backward_extra_memory_bytes_per_sample == Approx((9.0 - 10.0) * 4.0 * h));
  // The rotary embedding on k_proj: 10 accesses forward, 15 backward against the rule's 20.
  const auto k = tensor_named(llama, "model.layers.0.self_attn.k_proj.weight");
  CHECK(k.forward_memory_bytes_per_sample - k.forward_gemm_memory_bytes_per_sample == Approx(10.0 * 4.0 * q));
  CHECK(k.backward_extra_memory_bytes_per_sample == Approx((15.0 - 20.0) * 4.0 * q));

  // elementwise=fused: one kernel each way, inputs read and outputs written once. The norm
  // 2 forward, 3 backward (the gradient and x read, x's gradient written) against the
  // rule's 4, keeping x and one inverse RMS per token; SwiGLU 3 and 5 against 6, keeping
  // gate and up; the rotary embedding 2 and 2 against 4.
  shape.elementwise = dtperf::Elementwise::fused;
  const ModelSpec fused = dtperf::llama_model(shape);
  const auto fused_norm = tensor_named(fused, "model.layers.0.input_layernorm.weight");
  CHECK(fused_norm.forward_memory_bytes_per_sample == Approx(2.0 * 4.0 * e));
  CHECK(fused_norm.backward_extra_memory_bytes_per_sample == Approx((3.0 - 4.0) * 4.0 * e));
  CHECK(fused_norm.backward_flops_per_sample == Approx(8.0 * e));
  CHECK(norm.saved_activation_bytes_per_sample - fused_norm.saved_activation_bytes_per_sample == Approx(4.0 * e));
  const auto fused_up = tensor_named(fused, "model.layers.0.mlp.up_proj.weight");
  CHECK(up.forward_memory_bytes_per_sample - fused_up.forward_memory_bytes_per_sample == Approx((5.0 - 3.0) * 4.0 * h));
  CHECK(fused_up.backward_extra_memory_bytes_per_sample == Approx((5.0 - 6.0) * 4.0 * h));
  CHECK(up.saved_activation_bytes_per_sample - fused_up.saved_activation_bytes_per_sample == Approx(4.0 * h));
  const auto fused_k = tensor_named(fused, "model.layers.0.self_attn.k_proj.weight");
  CHECK(k.forward_memory_bytes_per_sample - fused_k.forward_memory_bytes_per_sample == Approx((10.0 - 2.0) * 4.0 * q));
  CHECK(fused_k.backward_extra_memory_bytes_per_sample == Approx((2.0 - 4.0) * 4.0 * q));
  // The parameters are the same.
  CHECK(fused.total_params() == llama.total_params());
}

TEST_CASE("Fused attention computes whole tiles of 64 queries by 64 keys", "[zoo]") {
  // ViT-B/16, 197 tokens, every query against every key: 197^2 = 38,809 pairs, 4 tiles of
  // 64 each way compute 256^2 = 65,536. Products: 2 x 2 x 768 FLOPs per pair.
  const auto vit = tensor_named(zoo("vit-b16"), "encoder.layers.encoder_layer_0.self_attention.out_proj.weight");
  CHECK(vit.forward_attention_flops_per_sample == Approx(4.0 * 768 * 38809));
  CHECK(vit.forward_attention_tile_flops_per_sample == Approx(4.0 * 768 * (65536 - 38809)));
  CHECK(vit.backward_attention_tile_flops_per_sample == Approx(2.5 * 4.0 * 768 * (65536 - 38809)));
  // GPT-2 small, 1,024 tokens, causal: the model's 1024^2 / 2 = 524,288 pairs; 16 tiles a
  // side, of which 16 x 17 / 2 = 136 tile pairs on and below the diagonal, 136 x 64^2 =
  // 557,056 pairs computed.
  const auto gpt2 = tensor_named(zoo("gpt2-small"), "h.0.attn.c_proj.weight");
  CHECK(gpt2.forward_attention_flops_per_sample == Approx(4.0 * 768 * 524288));
  CHECK(gpt2.forward_attention_tile_flops_per_sample == Approx(4.0 * 768 * (557056 - 524288)));
  // Eager attention runs no fused kernel, so no tiles of one.
  for (const auto& t : zoo("transformer-base").tensors) {
    INFO(t.name);
    CHECK(t.forward_attention_tile_flops_per_sample == 0.0);
  }
}

TEST_CASE("ViT-B/16 counts nn.MultiheadAttention's layout copies and its selects' backward", "[zoo]") {
  // Per image: 197 tokens of E = 768, e = 151,296 elements. in_proj: the packed output made
  // contiguous, 3e read and written (6e accesses, 4 bytes each), on top of its product and
  // the cast of its input; backward beyond twice that: 39e - 12e = 27e accesses (three
  // fills of 3e, three slice copies of e, two adds of 3e, the copy back of 3e). out_proj:
  // the output made contiguous, e read and written.
  const double e = 197.0 * 768.0;
  const ModelSpec vit = zoo("vit-b16");
  const dtperf::TensorSpec* in_proj = nullptr;
  const dtperf::TensorSpec* out_proj = nullptr;
  for (const auto& tensor : vit.tensors) {
    if (tensor.name == "encoder.layers.encoder_layer_0.self_attention.in_proj_weight") in_proj = &tensor;
    if (tensor.name == "encoder.layers.encoder_layer_0.self_attention.out_proj.weight") out_proj = &tensor;
  }
  REQUIRE(in_proj);
  REQUIRE(out_proj);
  CHECK(in_proj->backward_extra_memory_bytes_per_sample == Approx(27.0 * e * 4.0));
  CHECK(in_proj->forward_memory_bytes_per_sample - in_proj->forward_gemm_memory_bytes_per_sample ==
        Approx(6.0 * e * 4.0));
  CHECK(out_proj->backward_extra_memory_bytes_per_sample == 0.0);
  // Its other traffic: the fused attention's own (gemm bytes) and the residual add's 3e.
  CHECK(out_proj->forward_memory_bytes_per_sample - out_proj->forward_gemm_memory_bytes_per_sample -
            out_proj->forward_fp32_memory_bytes_per_sample ==
        Approx(2.0 * e * 4.0 + e * 4.0));
  // No other zoo model runs that path; GPT-2's eager GELU and Llama's RMS norm, SwiGLU and
  // rotary embedding move other than the rule (below).
  for (const auto& entry : dtperf::model_zoo()) {
    const std::string_view name = entry.name;
    if (name == "vit-b16" || name.starts_with("gpt2") || name.starts_with("llama")) continue;
    const ModelSpec model = entry.build();
    for (const auto& tensor : model.tensors) {
      INFO(entry.name << " " << tensor.name);
      CHECK(tensor.backward_extra_memory_bytes_per_sample == 0.0);
    }
  }
}

TEST_CASE("Tensor names are unique within each zoo model", "[zoo]") {
  for (const auto& entry : dtperf::model_zoo()) {
    INFO(entry.name);
    const ModelSpec model = entry.build();
    std::set<std::string> names;
    for (const auto& tensor : model.tensors) names.insert(tensor.name);
    CHECK(names.size() == model.tensors.size());
  }
}

TEST_CASE("Zoo tensors are listed in backward order", "[zoo]") {
  SECTION("ResNet-50 starts at the classifier and ends at the stem convolution") {
    const ModelSpec model = zoo("resnet50");
    CHECK(starts_with(model.tensors.front().name, "fc."));
    CHECK(model.tensors.back().name == "conv1.weight");
    CHECK(model.tensors[2].name == "layer4.2.bn3.bias");
  }
  SECTION("VGG-16 starts at the last classifier layer and ends at features.0") {
    const ModelSpec model = zoo("vgg16");
    CHECK(model.tensors.front().name == "classifier.6.bias");
    CHECK(model.tensors.back().name == "features.0.weight");
  }
  SECTION("GPT-2 ends at the embedding") {
    const ModelSpec model = zoo("gpt2-small");
    CHECK(starts_with(model.tensors.front().name, "ln_f."));
    const std::string last = model.tensors.back().name;
    CHECK((last == "wte.weight" || last == "wpe.weight"));
  }
  SECTION("BERT ends at the word embeddings, Llama starts at its untied LM head") {
    CHECK(zoo("bert-base").tensors.back().name == "embeddings.word_embeddings.weight");
    const ModelSpec llama = zoo("llama-7b");
    CHECK(llama.tensors.front().name == "lm_head.weight");
    CHECK(llama.tensors.back().name == "model.embed_tokens.weight");
  }
  SECTION("Decoder layers come before encoder layers in the WMT Transformer") {
    const ModelSpec model = zoo("transformer-base");
    const auto position = [&](const std::string& name) {
      const auto it = std::find_if(model.tensors.begin(), model.tensors.end(),
                                   [&](const auto& tensor) { return tensor.name == name; });
      return it - model.tensors.begin();
    };
    CHECK(position("decoder.layers.0.self_attn.q_proj.weight") <
          position("encoder.layers.5.final_layer_norm.weight"));
    CHECK(model.tensors.back().name == "encoder.embed_tokens.weight");
  }
}

TEST_CASE("GEMM and convolution backward work is twice the forward work", "[zoo]") {
  const ModelSpec model = zoo("resnet50");
  const auto& conv1 = model.tensors.back();
  // 2 x 3 x 64 x 7 x 7 x 112 x 112 = 236,027,904 FLOPs.
  CHECK(conv1.forward_flops_per_sample == Approx(236'027'904.0));
  CHECK(conv1.backward_flops_per_sample == Approx(2.0 * conv1.forward_flops_per_sample));
}

TEST_CASE("Zoo CNN forward FLOPs match the published multiply-accumulate counts",
          "[zoo][flops]") {
  // ResNet-50: 4.09 GMACs (torchvision) x 2 => 8.18e9 FLOPs; batch norm, ReLU,
  // pooling and residual adds add about 1 %.
  CHECK(forward_flops(zoo("resnet50")) == Approx(8.18e9).epsilon(0.03));
  // ResNet-101: 7.80 GMACs x 2 => 15.6e9 FLOPs.
  CHECK(forward_flops(zoo("resnet101")) == Approx(15.6e9).epsilon(0.03));
  // VGG-16: 15.47 GMACs x 2 => 30.94e9 FLOPs.
  CHECK(forward_flops(zoo("vgg16")) == Approx(30.94e9).epsilon(0.03));
  CHECK(forward_flops(zoo("vgg16-bn")) == Approx(30.94e9).epsilon(0.03));
}

TEST_CASE("Zoo ViT-B/16 forward FLOPs match the published count", "[zoo][flops]") {
  // 12 layers x (12 x 768^2 x 197 + 2 x 197^2 x 768) MACs = 17.45 G, + patch
  // projection 768 x 768 x 196 = 0.116 G => 17.56 GMACs x 2 => 35.13e9 FLOPs.
  CHECK(forward_flops(zoo("vit-b16")) == Approx(35.13e9).epsilon(0.03));
}

TEST_CASE("Zoo GPT-2 small forward FLOPs follow Kaplan et al.'s estimate", "[zoo][flops]") {
  // Kaplan et al. 2020: C_forward = 2 N + 2 n_layer n_ctx d_model per token, N the
  // non-embedding parameters 12 n_layer d^2 = 12 x 12 x 768^2 = 84,934,656.
  // Per token: 2 x 84.93M = 169.87M + 2 x 12 x 1024 x 768 = 18.87M => 188.74M;
  // x 1024 tokens => 193.3e9 FLOPs per sequence.
  const double d = 768.0;
  const double layers = 12.0;
  const double context = 1024.0;
  const double non_embedding = 12.0 * layers * d * d;
  const double kaplan = (2.0 * non_embedding + 2.0 * layers * context * d) * context;
  // The tied output projection is outside N: 2 x 768 x 50,257 x 1024 => 79.05e9.
  const double output_projection = 2.0 * d * 50'257.0 * context;
  const ModelSpec model = zoo("gpt2-small");
  CHECK(forward_flops(model) - output_projection == Approx(kaplan).epsilon(0.05));
  CHECK(model.sample_unit == "sequence");
}

TEST_CASE("Transformer-XL base counts its products over the segment and its memory", "[zoo][flops]") {
  // Per 192-token segment with 192 remembered tokens (384 keys), d 512, FFN 2048:
  //   qkv_net over the 384 tokens      2 x 384 x 512 x 1536 = 603,979,776
  //   o_net                            2 x 192 x 512 x 512  = 100,663,296
  //   FFN                          2 x 2 x 192 x 512 x 2048 = 805,306,368
  //   AC, BD and the context       3 x 2 x 192 x 384 x 512  = 226,492,416
  //   a layer 1,736,441,856; 16 layers 27,783,069,696.
  const double layers = 16.0 * (2.0 * 384 * 512 * 1536 + 2.0 * 192 * 512 * 512 + 4.0 * 192 * 512 * 2048 +
                                6.0 * 192 * 384 * 512);
  CHECK(layers == 27'783'069'696.0);
  const ModelSpec model = zoo("transformer-xl-base");
  // Gradients become ready softmax first, the tied table (its lookup's backward) last.
  REQUIRE(model.tensors.size() == 182);
  CHECK(model.tensors.front().name == "crit.out_layers_biases.0");
  CHECK(model.tensors.back().name == "word_emb.emb_layers.0.weight");
  double softmax = 0.0;
  double rest = 0.0;
  for (const auto& t : model.tensors) (t.name == "crit.out_layers_biases.0" ? softmax : rest) += t.forward_gemm_flops_per_sample;
  CHECK(rest == Approx(layers).epsilon(1e-12));
  // The adaptive softmax: the head's 20,000 words and 3 cluster tokens for all 192 tokens,
  // each tail cluster's words for its share of them. The shares follow Zipf's law over
  // WikiText-103's 267,735 ranks with the exponent that leaves its rarest word 3 of its
  // 103,227,021 training tokens; solved here by bisection.
  const int vocab = 267'735;
  const auto rarest_count = [&](double s) {
    double sum = 0.0;
    for (int r = 1; r <= vocab; ++r) sum += std::pow(r, -s);
    return 103'227'021.0 / sum * std::pow(vocab, -s);
  };
  double lo = 1.0;
  double hi = 2.0;
  for (int i = 0; i < 30; ++i) (rarest_count(0.5 * (lo + hi)) > 3.0 ? lo : hi) = 0.5 * (lo + hi);
  const double s = 0.5 * (lo + hi);
  CHECK(s == Approx(1.2754).margin(1e-4));
  double total = 0.0;
  double head = 0.0;
  double tails[3] = {0.0, 0.0, 0.0};
  for (int r = 1; r <= vocab; ++r) {
    const double p = std::pow(r, -s);
    total += p;
    if (r <= 20'000) head += p;
    else (r <= 40'000 ? tails[0] : r <= 200'000 ? tails[1] : tails[2]) += p;
  }
  CHECK(head / total == Approx(0.9705).margin(1e-4));
  const double tail_words = 20'000.0 * tails[0] / total + 160'000.0 * tails[1] / total + 67'735.0 * tails[2] / total;
  CHECK(softmax == Approx(2.0 * 512 * 192 * (20'003.0 + tail_words)).epsilon(1e-5));
}

TEST_CASE("Transformer-XL large projects each adaptive cluster and counts its longer segments", "[zoo][flops]") {
  // Per 384-token segment with 384 remembered tokens (768 keys), d 1024, FFN 4096:
  //   qkv_net  2 x 768 x 1024 x 3072 = 4,831,838,208
  //   o_net    2 x 384 x 1024 x 1024 =   805,306,368
  //   FFN  2 x 2 x 384 x 1024 x 4096 = 6,442,450,944
  //   AC, BD, context 3 x 2 x 384 x 768 x 1024 = 1,811,939,328
  //   a layer 13,891,534,848; 18 layers 250,047,627,264.
  const double layers = 18.0 * (2.0 * 768 * 1024 * 3072 + 2.0 * 384 * 1024 * 1024 + 4.0 * 384 * 1024 * 4096 +
                                6.0 * 384 * 768 * 1024);
  CHECK(layers == 250'047'627'264.0);
  const ModelSpec model = zoo("transformer-xl-large");
  CHECK(model.tensors.back().name == "word_emb.emb_layers.0.weight");
  double head = 0.0;
  double layer_products = 0.0;
  for (const auto& t : model.tensors) {
    if (t.name == "crit.out_layers_biases.0") head = t.forward_gemm_flops_per_sample;
    if (starts_with(t.name, "layers.")) layer_products += t.forward_gemm_flops_per_sample;
  }
  CHECK(layer_products == Approx(layers).epsilon(1e-12));
  // The softmax's head: every token through the head's 1,024 x 1,024 projection, then
  // against 20,003 rows: 2 x 384 x 1024 x (1024 + 20,003) = 16,535,076,864. Each tail
  // cluster: its share of the tokens (the Zipf shares the base model's test recomputes)
  // through a 1,024 x w projection, then against its words at width w:
  //   1.0032 % x 384 x 2 x (1024 x 256 + 256 x 20,000)  =  41.5 M
  //   1.7077 % x 384 x 2 x (1024 x 64 + 64 x 160,000)   = 135.2 M
  //   0.2363 % x 384 x 2 x (1024 x 16 + 16 x 67,735)    =   2.0 M
  const double tails = 2.0 * 384 *
                       (0.010032 * (1024.0 * 256 + 256.0 * 20'000) + 0.017077 * (1024.0 * 64 + 64.0 * 160'000) +
                        0.002363 * (1024.0 * 16 + 16.0 * 67'735));
  CHECK(head == Approx(2.0 * 384 * 1024 * (1024 + 20'003) + tails).epsilon(1e-12));
  CHECK(model.default_batch_per_gpu == 8.0);
}

TEST_CASE("Transformer-XL trains under Apex O2: every activation 16-bit, nothing cast", "[zoo]") {
  // NVIDIA's mixed precision for it casts the model itself to fp16, layer norms and
  // softmax included, so no tensor keeps fp32 traffic or converts on the way.
  for (const char* name : {"transformer-xl-base", "transformer-xl-large"}) {
    const ModelSpec model = zoo(name);
    for (const auto& t : model.tensors) {
      INFO(name << " " << t.name);
      CHECK(t.forward_fp32_memory_bytes_per_sample == 0.0);
      CHECK(t.forward_cast_elements_per_sample == 0.0);
    }
    CHECK(model.default_optimizer == dtperf::Optimizer::lamb);
  }
  CHECK(zoo("transformer-xl-base").default_batch_per_gpu == 32.0);
}

TEST_CASE("Matrix products over rows not aligned to 16 bytes are counted apart", "[zoo][flops]") {
  const auto misaligned = [](const ModelSpec& m) {
    double total = 0.0;
    for (const auto& t : m.tensors) total += t.forward_misaligned_gemm_flops_per_sample;
    return total;
  };
  const auto partly_aligned = [](const ModelSpec& m) {
    double total = 0.0;
    for (const auto& t : m.tensors) total += t.forward_partly_aligned_gemm_flops_per_sample;
    return total;
  };
  // GPT-2's output projection onto 50,257 tokens (odd): 2 x 768 x 50,257 x 1024 = 79.05e9
  // FLOPs per sequence, on ln_f (the operator before the tied projection); every other
  // product has dimensions of 768, 2,304 and 3,072, multiples of 8.
  const ModelSpec gpt2 = zoo("gpt2-small");
  CHECK(misaligned(gpt2) == Approx(2.0 * 768.0 * 50'257.0 * 1024.0));
  for (const auto& t : gpt2.tensors) {
    if (t.forward_misaligned_gemm_flops_per_sample > 0.0) CHECK(t.name == "ln_f.weight");
  }
  CHECK(partly_aligned(gpt2) == 0.0);
  // A vocabulary of 50,260 is a multiple of 4, not of 8: partly aligned; 50,304 aligned.
  dtperf::GptShape shape;
  shape.layers = 1;
  shape.vocab = 50'260;
  CHECK(misaligned(dtperf::gpt_model(shape)) == 0.0);
  CHECK(partly_aligned(dtperf::gpt_model(shape)) == Approx(2.0 * shape.model_dim * 50'260.0 * shape.context));
  shape.vocab = 50'304;
  CHECK(misaligned(dtperf::gpt_model(shape)) + partly_aligned(dtperf::gpt_model(shape)) == 0.0);
  // Llama's 32,000 tokens and ResNet-50's 1,000 classes are multiples of 8.
  CHECK(misaligned(zoo("llama-7b")) + partly_aligned(zoo("llama-7b")) == 0.0);
  CHECK(misaligned(zoo("resnet50")) + partly_aligned(zoo("resnet50")) == 0.0);
}

TEST_CASE("Zoo samples use the documented units and optimizers", "[zoo]") {
  CHECK(zoo("resnet50").sample_unit == "image");
  CHECK(zoo("resnet50").default_optimizer == dtperf::Optimizer::sgd_momentum);
  CHECK(zoo("vgg16-bn").default_batch_per_gpu == 32.0);
  CHECK(zoo("vit-b16").sample_unit == "image");
  CHECK(zoo("bert-large").sample_unit == "sequence");
  CHECK(zoo("llama-7b").sample_unit == "sequence");
  for (const char* name : {"transformer-big", "bert-base", "gpt2-xl", "vit-b16", "llama-7b"}) {
    INFO(name);
    CHECK(zoo(name).default_optimizer == dtperf::Optimizer::adam);
  }
}

TEST_CASE("Building a zoo model twice gives the same tensors", "[zoo]") {
  const ModelSpec a = zoo("bert-base");
  const ModelSpec b = zoo("bert-base");
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (std::size_t i = 0; i < a.tensors.size(); ++i) {
    CHECK(a.tensors[i].name == b.tensors[i].name);
    CHECK(a.tensors[i].forward_flops_per_sample == b.tensors[i].forward_flops_per_sample);
  }
}

// ---- Models by size ------------------------------------------------------------------

namespace {

// GPT-2's architecture: per layer 12 d^2 weights (QKV 3 d^2, output d^2, MLP 2 x 4 d^2)
// and 13 d biases and norms (QKV 3 d, output d, MLP 4 d + d, two LayerNorms 4 d); then
// the final LayerNorm 2 d, the tied token embedding V d and the learned positions S d.
std::int64_t gpt_formula(std::int64_t layers, std::int64_t d, std::int64_t vocab, std::int64_t seq) {
  return layers * (12 * d * d + 13 * d) + 2 * d + vocab * d + seq * d;
}

}  // namespace

TEST_CASE("GPT by size counts MosaicML's published MPT parameter counts exactly", "[zoo][sized]") {
  // llm-foundry benchmarks (validation/data/validation-s3/README.md): vocabulary 50,368,
  // context 2,048; d and layers from llm-foundry's mpt-*.yaml.
  struct Published {
    int layers;
    std::int64_t d;
    std::int64_t params;
  };
  for (const Published p : {Published{24, 1536, 760'470'528}, Published{24, 2048, 1'315'950'592},
                            Published{32, 2560, 2'651'837'440}, Published{32, 4096, 6'658'859'008},
                            Published{40, 5120, 12'853'954'560}, Published{48, 7168, 29'975'214'080},
                            Published{80, 8192, 64'862'437'376}}) {
    INFO(p.d);
    CHECK(gpt_formula(p.layers, p.d, 50368, 2048) == p.params);
    dtperf::GptShape shape;
    shape.layers = p.layers;
    shape.model_dim = p.d;
    shape.heads = p.d / 64;
    shape.ffn_dim = 4 * p.d;
    shape.context = 2048;
    shape.vocab = 50368;
    CHECK(dtperf::gpt_model(shape).total_params() == p.params);
  }
}

TEST_CASE("Llama by size counts Meta's published Llama 2 parameter counts exactly", "[zoo][sized]") {
  // Per layer: Q and output d^2 each, K and V d x kv (kv = d x kv_heads / heads), three
  // SwiGLU matrices 3 d f, two RMSNorms 2 d; then the final norm d and the untied
  // embedding and LM head 2 V d. Hugging Face meta-llama/Llama-2-{7,13,70}b-hf.
  struct Published {
    int layers;
    std::int64_t d, heads, kv_heads, ffn, params;
  };
  for (const Published p : {Published{32, 4096, 32, 32, 11008, 6'738'415'616},
                            Published{40, 5120, 40, 40, 13824, 13'015'864'320},
                            Published{80, 8192, 64, 8, 28672, 68'976'648'192}}) {
    INFO(p.d);
    const std::int64_t kv = p.d / p.heads * p.kv_heads;
    CHECK(p.layers * (2 * p.d * p.d + 2 * p.d * kv + 3 * p.d * p.ffn + 2 * p.d) + p.d + 2 * 32000 * p.d == p.params);
    dtperf::LlamaShape shape;
    shape.layers = p.layers;
    shape.model_dim = p.d;
    shape.heads = p.heads;
    shape.kv_heads = p.kv_heads;
    shape.ffn_dim = p.ffn;
    CHECK(dtperf::llama_model(shape).total_params() == p.params);
  }
}

TEST_CASE("The zoo's GPT-2 and Llama-2-7B are the sized builders at their published shapes", "[zoo][sized]") {
  const auto same_tensors = [](const ModelSpec& a, const ModelSpec& b) {
    REQUIRE(a.tensors.size() == b.tensors.size());
    for (std::size_t i = 0; i < a.tensors.size(); ++i) {
      INFO(a.tensors[i].name);
      CHECK(a.tensors[i].name == b.tensors[i].name);
      CHECK(a.tensors[i].params == b.tensors[i].params);
      CHECK(a.tensors[i].forward_flops_per_sample == b.tensors[i].forward_flops_per_sample);
      CHECK(a.tensors[i].backward_flops_per_sample == b.tensors[i].backward_flops_per_sample);
      CHECK(a.tensors[i].forward_memory_bytes_per_sample == b.tensors[i].forward_memory_bytes_per_sample);
      CHECK(a.tensors[i].forward_gemm_memory_bytes_per_sample == b.tensors[i].forward_gemm_memory_bytes_per_sample);
      CHECK(a.tensors[i].forward_fp32_memory_bytes_per_sample == b.tensors[i].forward_fp32_memory_bytes_per_sample);
      CHECK(a.tensors[i].forward_cast_elements_per_sample == b.tensors[i].forward_cast_elements_per_sample);
      CHECK(a.tensors[i].backward_extra_memory_bytes_per_sample == b.tensors[i].backward_extra_memory_bytes_per_sample);
      CHECK(a.tensors[i].backward_extra_fp32_memory_bytes_per_sample ==
            b.tensors[i].backward_extra_fp32_memory_bytes_per_sample);
      CHECK(a.tensors[i].backward_extra_cast_elements_per_sample == b.tensors[i].backward_extra_cast_elements_per_sample);
      CHECK(a.tensors[i].saved_activation_bytes_per_sample == b.tensors[i].saved_activation_bytes_per_sample);
      CHECK(a.tensors[i].saved_fixed_bytes_per_sample == b.tensors[i].saved_fixed_bytes_per_sample);
      CHECK(a.tensors[i].forward_attention_flops_per_sample == b.tensors[i].forward_attention_flops_per_sample);
      CHECK(a.tensors[i].forward_misaligned_gemm_flops_per_sample ==
            b.tensors[i].forward_misaligned_gemm_flops_per_sample);
    }
  };
  dtperf::GptShape xl;
  xl.layers = 48;
  xl.model_dim = 1600;
  xl.heads = 25;
  xl.ffn_dim = 6400;
  xl.attention = dtperf::Attention::fused;  // Hugging Face's default "sdpa"
  xl.dropout = true;
  xl.gelu = dtperf::Gelu::eager;  // GPT2Config's "gelu_new"
  same_tensors(dtperf::gpt_model(xl), zoo("gpt2-xl"));
  dtperf::LlamaShape llama;
  llama.attention = dtperf::Attention::eager;
  same_tensors(dtperf::llama_model(llama), zoo("llama-7b"));
}

TEST_CASE("Fused attention keeps no score matrix and recomputes the scores in backward", "[zoo][sized]") {
  // GPT, d 1024, 16 heads, 2,048 tokens, no dropout. Per sequence and layer the attention
  // products QK^T and AV are 2 x 2 x d FLOPs per unmasked query-key pair, n (n / 2) pairs,
  // the same in both forms; eager keeps the 16 x 2048 x 2048 softmax output (fp32), fused
  // keeps Q, K, V, O (4 d n) and a log-sum-exp per query and head (16 n).
  dtperf::GptShape shape;
  shape.layers = 1;
  shape.model_dim = 1024;
  shape.heads = 16;
  shape.ffn_dim = 4096;
  shape.context = 2048;
  shape.attention = dtperf::Attention::eager;
  const ModelSpec eager = dtperf::gpt_model(shape);
  shape.attention = dtperf::Attention::fused;
  const ModelSpec fused = dtperf::gpt_model(shape);
  const auto proj = [](const ModelSpec& m) { return tensor_named(m, "h.0.attn.c_proj.weight"); };
  const double n = 2048.0, d = 1024.0, h = 16.0;
  const double products = 2.0 * 2.0 * d * (n / 2.0) * n;
  const double softmax = 5.0 * h * (n / 2.0) * n;
  const double linear = 2.0 * d * d * n;
  const double residual = d * n;
  CHECK(proj(eager).forward_flops_per_sample == Approx(linear + products + softmax + residual));
  CHECK(proj(fused).forward_flops_per_sample == Approx(linear + products + softmax + residual));
  // Backward: the linear and the residual twice over; products 2.5 x, softmax 2 x (fused)
  // against 2 x everything (eager).
  CHECK(proj(eager).backward_flops_per_sample == Approx(2.0 * (linear + products + softmax + residual)));
  CHECK(proj(fused).backward_flops_per_sample == Approx(2.0 * (linear + residual) + 2.5 * products + 2.0 * softmax));
  // Kept (4 bytes per element): the projection's input d n; eager Q, K, V copies 3 d n and
  // the probabilities h n^2; fused Q, K, V and O 4 d n and h n.
  CHECK(proj(eager).saved_activation_bytes_per_sample == Approx(4.0 * (d * n + 3.0 * d * n + h * n * n)));
  CHECK(proj(fused).saved_activation_bytes_per_sample == Approx(4.0 * (d * n + 4.0 * d * n + h * n)));
  // The products run inside the fused kernel (a profile may price them at its own
  // efficiency): forward products, backward 2.5 x; eager attention has none.
  CHECK(proj(fused).forward_attention_flops_per_sample == Approx(products));
  CHECK(proj(fused).backward_attention_flops_per_sample == Approx(2.5 * products));
  CHECK(proj(eager).forward_attention_flops_per_sample == 0.0);
  CHECK(fused.name ==
        "gpt:layers=1,d=1024,heads=16,ffn=4096,seq=2048,vocab=50257,batch=1,attention=fused,dropout=no,gelu=fused");
}
