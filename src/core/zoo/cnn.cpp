// Convolutional networks of the zoo, as torchvision defines them: 224x224 RGB input,
// 1000 classes, one image per sample.
//
// Tensor names follow torchvision's named_parameters(); the tensors are built in
// forward order and returned reversed (fc / classifier first, conv1 / features.0
// last). Parameter-free operators are attached as follows:
//  - ReLU to the batch norm (or, without batch norm, the convolution or linear)
//    whose output it reads; max pooling likewise to the operator before it.
//  - A bottleneck's residual add and the ReLU after it to that block's bn3.
//  - Global average pooling and the softmax cross-entropy loss to fc.weight.
// Batch-norm running statistics are buffers, not parameters.
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "builder.hpp"

namespace dtperf::zoo {
namespace {

constexpr std::int64_t kImageSide = 224;
constexpr std::int64_t kClasses = 1000;
constexpr double kCnnBatchPerGpu = 32.0;

ModelBuilder image_model_builder() {
  return ModelBuilder("image", kCnnBatchPerGpu, Optimizer::sgd_momentum);
}

// ReLU keeps its output for backward, which is the next convolution's input: the map it
// returns is marked kept.
Work relu(FeatureMap map) {
  return elementwise(map.elements(), kReluFlopsPerElement, 2.0) + keeps(map.elements());
}
FeatureMap after_relu(FeatureMap map) {
  map.kept = true;
  return map;
}

// ---- ResNet ---------------------------------------------------------------------

constexpr std::int64_t kBottleneckExpansion = 4;

// torchvision Bottleneck (stride on the 3x3 convolution, "ResNet v1.5").
FeatureMap bottleneck(ModelBuilder& builder, const std::string& prefix, FeatureMap input,
                      std::int64_t planes, std::int64_t stride) {
  const std::int64_t out_channels = planes * kBottleneckExpansion;
  FeatureMap x = conv2d(builder, prefix + ".conv1", input, planes, 1, 1, 0, false).map;
  input.kept = true;  // the shortcut convolution reads the tensor conv1 keeps
  builder.attach(batch_norm2d(builder, prefix + ".bn1", x), relu(x));
  x = conv2d(builder, prefix + ".conv2", after_relu(x), planes, 3, stride, 1, false).map;
  builder.attach(batch_norm2d(builder, prefix + ".bn2", x), relu(x));
  x = conv2d(builder, prefix + ".conv3", after_relu(x), out_channels, 1, 1, 0, false).map;
  const std::size_t bn3 = batch_norm2d(builder, prefix + ".bn3", x);
  if (stride != 1 || input.channels != out_channels) {
    const FeatureMap shortcut =
        conv2d(builder, prefix + ".downsample.0", input, out_channels, 1, stride, 0, false).map;
    batch_norm2d(builder, prefix + ".downsample.1", shortcut);
  }
  builder.attach(bn3, elementwise(x.elements(), 1.0, 3.0) + relu(x));
  return after_relu(x);
}

// Blocks per stage: {3, 4, 6, 3} for ResNet-50, {3, 4, 23, 3} for ResNet-101.
ModelSpec resnet(const std::array<int, 4>& blocks_per_stage) {
  ModelBuilder builder = image_model_builder();
  const FeatureMap image{3, kImageSide, kImageSide};
  const ConvOutput conv1 = conv2d(builder, "conv1", image, 64, 7, 2, 3, false);
  builder.attach(conv1.weight_index, casts(image.elements()));  // the fp32 image, under autocast
  FeatureMap x = conv1.map;
  const std::size_t bn1 = batch_norm2d(builder, "bn1", x);
  const FeatureMap pooled = pool2d_output(x, 3, 2, 1);
  builder.attach(bn1, relu(x) + pool2d(x, pooled, 3) + max_pool_indices(pooled));
  x = pooled;

  const std::array<std::int64_t, 4> planes{64, 128, 256, 512};
  for (std::size_t stage = 0; stage < planes.size(); ++stage) {
    const std::string layer = "layer" + std::to_string(stage + 1);
    for (int block = 0; block < blocks_per_stage[stage]; ++block) {
      const std::int64_t stride = (stage > 0 && block == 0) ? 2 : 1;
      x = bottleneck(builder, layer + "." + std::to_string(block), x, planes[stage], stride);
    }
  }

  const std::size_t fc = linear(builder, "fc", x.channels, kClasses, 1.0);
  const FeatureMap global{x.channels, 1, 1};
  builder.attach(fc, pool2d(x, global, x.height) + softmax_cross_entropy(kClasses, 1.0));
  return std::move(builder).finish();
}

// ---- VGG ------------------------------------------------------------------------

constexpr std::int64_t kMaxPool = 0;
// torchvision configuration "D": channels of each 3x3 convolution, kMaxPool for a
// 2x2 max pooling.
constexpr std::array<std::int64_t, 18> kVgg16Layers{
    64, 64, kMaxPool, 128, 128, kMaxPool, 256, 256, 256, kMaxPool,
    512, 512, 512, kMaxPool, 512, 512, 512, kMaxPool};
constexpr std::int64_t kVggHidden = 4096;
constexpr std::int64_t kVggPooledSide = 7;

// features.N: convolution, [batch norm], ReLU and pooling modules, numbered in order.
FeatureMap vgg_features(ModelBuilder& builder, bool batch_norm) {
  FeatureMap x{3, kImageSide, kImageSide};
  int module = 0;
  std::size_t last = 0;
  for (const std::int64_t channels : kVgg16Layers) {
    const std::string prefix = "features." + std::to_string(module);
    if (channels == kMaxPool) {
      const FeatureMap pooled = pool2d_output(x, 2, 2, 0);
      builder.attach(last, pool2d(x, pooled, 2) + max_pool_indices(pooled));
      x = pooled;
      module += 1;
      continue;
    }
    const ConvOutput conv = conv2d(builder, prefix, x, channels, 3, 1, 1, true);
    if (module == 0) builder.attach(conv.weight_index, casts(x.elements()));  // the fp32 image, under autocast
    x = conv.map;
    last = conv.weight_index;
    if (batch_norm) last = batch_norm2d(builder, "features." + std::to_string(module + 1), x);
    builder.attach(last, relu(x));
    x = after_relu(x);
    module += batch_norm ? 3 : 2;
  }
  return x;
}

// classifier: Linear, ReLU, Dropout, Linear, ReLU, Dropout, Linear. Each ReLU keeps its
// output and each dropout its mask; the next linear keeps the dropout's output.
void vgg_classifier(ModelBuilder& builder, FeatureMap features) {
  const std::int64_t flattened = features.channels * kVggPooledSide * kVggPooledSide;
  const auto hidden = static_cast<double>(kVggHidden);
  const Work hidden_relu = elementwise(hidden, 1.0, 2.0) + keeps(hidden) + dropout_mask(hidden);
  builder.attach(linear(builder, "classifier.0", flattened, kVggHidden, 1.0), hidden_relu);
  builder.attach(linear(builder, "classifier.3", kVggHidden, kVggHidden, 1.0), hidden_relu);
  builder.attach(linear(builder, "classifier.6", kVggHidden, kClasses, 1.0),
                 softmax_cross_entropy(kClasses, 1.0));
}

ModelSpec vgg16(bool batch_norm) {
  ModelBuilder builder = image_model_builder();
  // At 224x224 the features are already 7x7, so the adaptive average pooling
  // is an identity.
  vgg_classifier(builder, vgg_features(builder, batch_norm));
  return std::move(builder).finish();
}

}  // namespace

ModelSpec build_resnet50() { return resnet({3, 4, 6, 3}); }
ModelSpec build_resnet101() { return resnet({3, 4, 23, 3}); }
ModelSpec build_vgg16() { return vgg16(false); }
ModelSpec build_vgg16_bn() { return vgg16(true); }

}  // namespace dtperf::zoo
