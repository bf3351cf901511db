// The zoo registry: one entry per built-in model with its published parameter count.
// The build functions (cnn.cpp, transformer.cpp, llm.cpp) compute the tensors and the
// training defaults; the registry adds the name, description and citation.
#include "dtperf/zoo.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "builder.hpp"

namespace dtperf {
namespace {

struct ModelInfo {
  const char* name;
  const char* description;
  const char* citation;
  std::int64_t published_params;
  ModelSpec (*build_tensors)();
};

// WMT Transformers: fairseq with a joined 32,768-token BPE dictionary
// (--nwordssrc 32768 --nwordstgt 32768 --joined-dictionary, as in fairseq's
// scaling_nmt WMT'16 En-De recipe), --share-all-embeddings and sinusoidal positions.
// With d the model width and f the FFN width, an encoder layer holds
//   4(d^2 + d) attention + 2d norm + (d f + f) + (f d + d) FFN + 2d norm,
// a decoder layer that plus a cross-attention 4(d^2 + d) and its 2d norm:
//   base (d 512, f 2048):  encoder layer 3,152,384, decoder layer 4,204,032;
//     6 x 3,152,384 + 6 x 4,204,032 = 44,138,496, + 32,768 x 512 = 16,777,216
//     -> 60,915,712.
//   big (d 1024, f 4096): encoder layer 12,596,224, decoder layer 16,796,672;
//     6 x 12,596,224 + 6 x 16,796,672 = 176,357,376, + 32,768 x 1024 = 33,554,432
//     -> 209,911,808.
// The paper's "65M" and "213M" were counted with its ~37,000-token shared vocabulary
// in tensor2tensor. The formula above with 37,000 tokens gives 63,082,496 and
// 214,245,376: the layers are the same, the difference is the embedding table (and,
// for the base model, the paper's rounding and implementation details).
constexpr std::int64_t kTransformerBaseParams = 60'915'712;
constexpr std::int64_t kTransformerBigParams = 209'911'808;

// Transformer-XL base (NVIDIA DeepLearningExamples, wt103_base.yaml; transformer_xl.cpp): no
// count is published for it, so the count is the implementation's. With d 512, FFN 2048 and
// WikiText-103's 267,735 words, a layer holds 512 x 1,536 (qkv_net) + 512 x 512 (r_net) +
// 512 x 512 (o_net) + 2 x 512 (norm) + 512 x 2,048 + 2,048 + 2,048 x 512 + 512 (FFN) + 2 x 512
// (norm) = 3,412,480; 16 layers 54,599,680, + the table 267,735 x 512 = 137,080,320 (also the
// softmax's weight), + r_w_bias and r_r_bias 2 x 8 x 64 = 1,024, + the softmax's own
// 267,735 biases and its 3 cluster tokens' 3 x 512 weights and 3 biases = 269,274
// -> 191,950,298.
constexpr std::int64_t kTransformerXlBaseParams = 191'950'298;
// Transformer-XL large (wt103_large.yaml): d 1024, FFN 4096, 18 layers of 1,024 x 3,072 +
// 2 x 1,024 x 1,024 + 2 x 2,048 + 1,024 x 4,096 + 4,096 + 4,096 x 1,024 + 1,024 =
// 13,640,704 -> 245,532,672; the adaptive input's tables 20,000 x 1,024 + 20,000 x 256 +
// 160,000 x 64 + 67,735 x 16 = 36,923,760 (the softmax's too) and projections 1,024 x
// (1,024 + 256 + 64 + 16) = 1,392,640 (the softmax's tails' too); r_w_bias and r_r_bias
// 2 x 16 x 64 = 2,048; the softmax's own head projection 1,024 x 1,024 = 1,048,576, its
// biases 267,735 and cluster tokens 3 x 1,024 + 3 = 3,075 -> 285,170,506.
constexpr std::int64_t kTransformerXlLargeParams = 285'170'506;

constexpr std::array<ModelInfo, 16> kModels{{
    {"resnet50", "ResNet-50 (v1.5), 224x224 image, 1000 classes; sample = image",
     "He et al. 2016, Deep Residual Learning for Image Recognition; torchvision resnet50",
     25'557'032, &zoo::build_resnet50},
    {"resnet101", "ResNet-101 (v1.5), 224x224 image, 1000 classes; sample = image",
     "He et al. 2016, Deep Residual Learning for Image Recognition; torchvision resnet101",
     44'549'160, &zoo::build_resnet101},
    {"vgg16", "VGG-16 (configuration D), 224x224 image, 1000 classes; sample = image",
     "Simonyan & Zisserman 2015, Very Deep Convolutional Networks; torchvision vgg16",
     138'357'544, &zoo::build_vgg16},
    {"vgg16-bn", "VGG-16 with batch norm, 224x224 image, 1000 classes; sample = image",
     "Simonyan & Zisserman 2015, Very Deep Convolutional Networks; torchvision vgg16_bn",
     138'365'992, &zoo::build_vgg16_bn},
    {"transformer-base",
     "Transformer base (6+6 layers, d 512), WMT14 En-De, joined 32,768-token BPE vocabulary, "
     "shared embeddings, 32-token sentences; sample = source+target token",
     "Vaswani et al. 2017, Attention Is All You Need; fairseq transformer_wmt_en_de with "
     "--share-all-embeddings and a 32,768-token joined dictionary",
     kTransformerBaseParams, &zoo::build_transformer_base},
    {"transformer-big",
     "Transformer big (6+6 layers, d 1024), WMT14 En-De, joined 32,768-token BPE vocabulary, "
     "shared embeddings, 32-token sentences; sample = source+target token",
     "Vaswani et al. 2017, Attention Is All You Need; fairseq "
     "transformer_vaswani_wmt_en_de_big with --share-all-embeddings and a 32,768-token "
     "joined dictionary",
     kTransformerBigParams, &zoo::build_transformer_big},
    {"bert-base", "BERT-base encoder and pooler (12 layers, d 768); sample = 512-token sequence",
     "Devlin et al. 2019, BERT; Hugging Face BertModel bert-base-uncased", 109'482'240,
     &zoo::build_bert_base},
    {"bert-large",
     "BERT-large encoder and pooler (24 layers, d 1024); sample = 512-token sequence",
     "Devlin et al. 2019, BERT; Hugging Face BertModel bert-large-uncased", 335'141'888,
     &zoo::build_bert_large},
    {"gpt2-small", "GPT-2 small (12 layers, d 768), tied LM head; sample = 1024-token sequence",
     "Radford et al. 2019, Language Models are Unsupervised Multitask Learners; Hugging Face "
     "gpt2",
     124'439'808, &zoo::build_gpt2_small},
    {"gpt2-medium",
     "GPT-2 medium (24 layers, d 1024), tied LM head; sample = 1024-token sequence",
     "Radford et al. 2019, Language Models are Unsupervised Multitask Learners; Hugging Face "
     "gpt2-medium",
     354'823'168, &zoo::build_gpt2_medium},
    {"gpt2-large",
     "GPT-2 large (36 layers, d 1280), tied LM head; sample = 1024-token sequence",
     "Radford et al. 2019, Language Models are Unsupervised Multitask Learners; Hugging Face "
     "gpt2-large",
     774'030'080, &zoo::build_gpt2_large},
    {"gpt2-xl", "GPT-2 XL (48 layers, d 1600), tied LM head; sample = 1024-token sequence",
     "Radford et al. 2019, Language Models are Unsupervised Multitask Learners; Hugging Face "
     "gpt2-xl",
     1'557'611'200, &zoo::build_gpt2_xl},
    {"vit-b16", "ViT-B/16, 224x224 image (197 tokens), 1000 classes; sample = image",
     "Dosovitskiy et al. 2021, An Image is Worth 16x16 Words; torchvision vit_b_16",
     86'567'656, &zoo::build_vit_b16},
    {"llama-7b",
     "Llama-2-7B (32 layers, d 4096, SwiGLU 11008, RMSNorm, untied LM head); "
     "sample = 4096-token sequence",
     "Touvron et al. 2023, Llama 2: Open Foundation and Fine-Tuned Chat Models; Hugging Face "
     "LlamaForCausalLM meta-llama/Llama-2-7b-hf",
     6'738'415'616, &zoo::build_llama_7b},
    {"transformer-xl-base",
     "Transformer-XL base (16 layers, d 512, relative attention over 192 tokens and 192 remembered), "
     "WikiText-103 word level (267,735 words), tied adaptive softmax; sample = 192-token segment",
     "Dai et al. 2019, Transformer-XL: Attentive Language Models Beyond a Fixed-Length Context; NVIDIA "
     "DeepLearningExamples PyTorch/LanguageModeling/Transformer-XL (mem_transformer.py, wt103_base.yaml)",
     kTransformerXlBaseParams, &zoo::build_transformer_xl_base},
    {"transformer-xl-large",
     "Transformer-XL large (18 layers, d 1024, relative attention over 384 tokens and 384 remembered), "
     "WikiText-103 word level (267,735 words), tied adaptive input and softmax; sample = 384-token segment",
     "Dai et al. 2019, Transformer-XL: Attentive Language Models Beyond a Fixed-Length Context; NVIDIA "
     "DeepLearningExamples PyTorch/LanguageModeling/Transformer-XL (mem_transformer.py, wt103_large.yaml)",
     kTransformerXlLargeParams, &zoo::build_transformer_xl_large},
}};

template <std::size_t Index>
ModelSpec build_model() {
  const ModelInfo& info = kModels[Index];
  ModelSpec model = info.build_tensors();
  model.name = info.name;
  model.description = info.description;
  model.citation = info.citation;
  return model;
}

template <std::size_t... Index>
constexpr std::array<ZooEntry, sizeof...(Index)> make_entries(
    std::index_sequence<Index...> /*indices*/) {
  return {{ZooEntry{kModels[Index].name, kModels[Index].description, kModels[Index].citation,
                    kModels[Index].published_params, &build_model<Index>}...}};
}

constexpr std::array<ZooEntry, kModels.size()> kEntries =
    make_entries(std::make_index_sequence<kModels.size()>{});

}  // namespace

std::span<const ZooEntry> model_zoo() { return kEntries; }

std::optional<ModelSpec> zoo_model(const std::string& name) {
  for (const ZooEntry& entry : kEntries) {
    if (name == entry.name) return entry.build();
  }
  return std::nullopt;
}

}  // namespace dtperf
