// `--model gpt:layers=24,d=2048,seq=2048` and `llama:...`: a decoder-only language model
// described by its shape (zoo.hpp: GptShape, LlamaShape). Keys are comma-separated
// key=value pairs; layers and d are required, every other key has the default below.
//   gpt:   layers, d, heads (d / 64), ffn (4 d), seq (1024), vocab (50257), batch (1),
//          attention (fused), dropout (no), gelu (fused; eager: Hugging Face's "gelu_new",
//          which GPT-2 runs, eight operators of its own)
//   llama: layers, d, heads (d / 128), kv_heads (heads), ffn (the Llama rule: 8 d / 3
//          rounded up to a multiple of 256), seq (4096), vocab (32000), batch (1),
//          attention (fused), elementwise (eager: Hugging Face's RMS norm, SwiGLU and rotary
//          embedding in PyTorch operators; fused: one kernel each)
// Defaults follow the papers' own sizes: GPT-2 (Radford et al. 2019) uses 64-wide heads,
// a 4 d MLP, a 1,024-token context and a 50,257-token vocabulary; Llama 2 (Touvron et al.
// 2023) 128-wide heads, SwiGLU of 2/3 x 4 d rounded up to 256 (11,008 at d 4096, 13,824
// at d 5120), 4,096 tokens and 32,000 tokens of vocabulary.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dtperf/error.hpp"
#include "dtperf/io/model_files.hpp"
#include "dtperf/limits.hpp"
#include "dtperf/zoo.hpp"

namespace dtperf::io {
namespace {

class ShapeKeys {
 public:
  ShapeKeys(std::string spec, std::string_view family, std::vector<std::string> allowed)
      : spec_(std::move(spec)), allowed_(std::move(allowed)) {
    const std::string body = spec_.substr(family.size() + 1);
    std::size_t start = 0;
    while (start <= body.size()) {
      const std::size_t comma = std::min(body.find(',', start), body.size());
      const std::string pair = body.substr(start, comma - start);
      const std::size_t eq = pair.find('=');
      if (pair.empty() || eq == std::string::npos || eq == 0 || eq + 1 == pair.size()) {
        fail(fmt::format("'{}' is not key=value (keys: {})", pair, join_names(allowed_)));
      }
      const std::string key = pair.substr(0, eq);
      if (std::find(allowed_.begin(), allowed_.end(), key) == allowed_.end()) {
        fail(fmt::format("unknown key '{}'{}; keys: {}", key, did_you_mean(key, allowed_), join_names(allowed_)));
      }
      if (!values_.emplace(key, pair.substr(eq + 1)).second) fail(fmt::format("'{}' given twice", key));
      start = comma + 1;
    }
  }

  [[noreturn]] void fail(const std::string& reason) const { throw InputError::in_input("model", spec_ + ": " + reason); }

  std::optional<std::int64_t> integer(const std::string& key, std::int64_t low, std::int64_t high) const {
    const auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    const std::string& text = it->second;
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc::result_out_of_range) {
      fail(fmt::format("{}={} is out of range: it must be from {} to {}", key, text, low, high));
    }
    if (error != std::errc() || end != text.data() + text.size()) {
      fail(fmt::format("{}={} is not a whole number", key, text));
    }
    if (value < low || value > high) {
      fail(fmt::format("{}={} is out of range: it must be from {} to {}", key, value, low, high));
    }
    return value;
  }

  std::int64_t required(const std::string& key, std::int64_t low, std::int64_t high) const {
    if (auto v = integer(key, low, high)) return *v;
    fail(fmt::format("give {}=", key));
  }

  double batch() const {
    const auto it = values_.find("batch");
    if (it == values_.end()) return 1.0;
    const std::string& text = it->second;
    double value = 0.0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
      fail(fmt::format("batch={} is not a number", text));
    }
    if (!limits::kSamples.contains(value)) {
      fail(fmt::format("batch={} is out of range: it must be from {:g} to {:g}", it->second, limits::kSamples.low,
                       limits::kSamples.high));
    }
    return value;
  }

  template <typename E>
  std::optional<E> choice(const std::string& key) const {
    const auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    if (auto value = parse_name<E>(it->second)) return value;
    const std::vector<std::string> names = names_of<E>();
    fail(fmt::format("{}={}: expected one of {}", key, it->second, join_names(names)));
  }

  std::optional<bool> yes_no(const std::string& key) const {
    const auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    if (it->second == "yes") return true;
    if (it->second == "no") return false;
    fail(fmt::format("{}={}: expected yes or no", key, it->second));
  }

 private:
  std::string spec_;
  std::vector<std::string> allowed_;
  std::map<std::string, std::string> values_;
};

using limits::kMaxLayers;
using limits::kMaxTokens;
using limits::kMaxWidth;

// The heads given, or d / head_width where d is a multiple of it; they must divide d.
std::int64_t heads_of(const ShapeKeys& keys, std::int64_t d, std::int64_t head_width) {
  const auto given = keys.integer("heads", 1, kMaxWidth);
  if (!given && d % head_width != 0) {
    keys.fail(fmt::format("d={} is not a multiple of {}: give heads=", d, head_width));
  }
  const std::int64_t heads = given.value_or(d / head_width);
  if (d % heads != 0) keys.fail(fmt::format("heads={} does not divide d={}", heads, d));
  return heads;
}

GptShape gpt_shape(const ShapeKeys& keys) {
  GptShape s;
  s.layers = static_cast<int>(keys.required("layers", 1, kMaxLayers));
  s.model_dim = keys.required("d", 1, kMaxWidth);
  s.heads = heads_of(keys, s.model_dim, 64);
  s.ffn_dim = keys.integer("ffn", 1, kMaxWidth * 8).value_or(4 * s.model_dim);
  s.context = keys.integer("seq", 1, kMaxTokens).value_or(1024);
  s.vocab = keys.integer("vocab", 1, kMaxTokens).value_or(50257);
  s.batch_per_gpu = keys.batch();
  s.attention = keys.choice<Attention>("attention").value_or(Attention::fused);
  s.dropout = keys.yes_no("dropout").value_or(false);
  s.gelu = keys.choice<Gelu>("gelu").value_or(Gelu::fused);
  return s;
}

LlamaShape llama_shape(const ShapeKeys& keys) {
  LlamaShape s;
  s.layers = static_cast<int>(keys.required("layers", 1, kMaxLayers));
  s.model_dim = keys.required("d", 1, kMaxWidth);
  s.heads = heads_of(keys, s.model_dim, 128);
  s.kv_heads = keys.integer("kv_heads", 1, kMaxWidth).value_or(s.heads);
  if (s.heads % s.kv_heads != 0) keys.fail(fmt::format("kv_heads={} does not divide heads={}", s.kv_heads, s.heads));
  constexpr std::int64_t kMultipleOf = 256;
  const std::int64_t swiglu = (8 * s.model_dim + 2) / 3;  // ceil(8 d / 3)
  s.ffn_dim = keys.integer("ffn", 1, kMaxWidth * 8).value_or((swiglu + kMultipleOf - 1) / kMultipleOf * kMultipleOf);
  s.context = keys.integer("seq", 1, kMaxTokens).value_or(4096);
  s.vocab = keys.integer("vocab", 1, kMaxTokens).value_or(32000);
  s.batch_per_gpu = keys.batch();
  s.attention = keys.choice<Attention>("attention").value_or(Attention::fused);
  s.elementwise = keys.choice<Elementwise>("elementwise").value_or(Elementwise::eager);
  return s;
}

// The shape limits keep every tensor within kMaxParams and the sum within int64; a whole
// model is also held to kMaxModelParams, as a model file is.
ModelSpec within_limits(ModelSpec model, const ShapeKeys& keys) {
  if (model.total_params() > limits::kMaxModelParams) {
    keys.fail(fmt::format("{:.3g} parameters is more than {:g}, the limit for a model",
                          static_cast<double>(model.total_params()), static_cast<double>(limits::kMaxModelParams)));
  }
  return model;
}

}  // namespace

std::optional<ModelSpec> sized_model(const std::string& spec) {
  if (spec.starts_with("gpt:")) {
    const ShapeKeys keys(spec, "gpt", {"layers", "d", "heads", "ffn", "seq", "vocab", "batch", "attention", "dropout",
                                         "gelu"});
    return within_limits(gpt_model(gpt_shape(keys)), keys);
  }
  if (spec.starts_with("llama:")) {
    const ShapeKeys keys(spec, "llama",
                         {"layers", "d", "heads", "kv_heads", "ffn", "seq", "vocab", "batch", "attention", "elementwise"});
    return within_limits(llama_model(llama_shape(keys)), keys);
  }
  return std::nullopt;
}

}  // namespace dtperf::io
