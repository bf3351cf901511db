// Memory per GPU: each part's arithmetic on a hand-built model, recomputation's segments,
// 16-bit activations, and a configuration that does not fit is reported and never advised.
#include <catch2/catch.hpp>

#include <cmath>

#include "dtperf/analysis/advice.hpp"
#include "dtperf/compute.hpp"
#include "dtperf/error.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/io/render.hpp"
#include "dtperf/memory.hpp"
#include "dtperf/zoo.hpp"

using namespace dtperf;
using Catch::Matchers::WithinRel;

namespace {

// GPT-2 small as validation/activation_memory.py writes it out in PyTorch: attention as
// PyTorch operators (eager), the score matrices kept for backward.
ModelSpec gpt2_small_eager() {
  GptShape s;  // GPT-2 small's dimensions are the defaults
  s.batch_per_gpu = 8;
  s.attention = Attention::eager;
  s.dropout = true;
  return gpt_model(s);
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Four operators, listed in backward order as a model file lists them; 1,000 parameters
// each; saved activations 100, 200, 300, 400 bytes per sample and a 10-byte mask on the
// first.
ModelSpec four_operators() {
  ModelSpec m;
  m.name = "four";
  m.param_bytes = 4;
  for (int i = 0; i < 4; ++i) {
    TensorSpec t;
    t.name = "t" + std::to_string(i);
    t.params = 1000;
    t.forward_flops_per_sample = 1e6;
    t.backward_flops_per_sample = 2e6;
    t.saved_activation_bytes_per_sample = 100.0 * (i + 1);
    m.tensors.push_back(t);
  }
  m.tensors[0].saved_fixed_bytes_per_sample = 10.0;
  return m;
}

ClusterProfile v100_cluster() { return io::load_profile("p3dn-24xlarge"); }

}  // namespace

TEST_CASE("each part of the memory breakdown, by hand", "[memory]") {
  const ModelSpec m = four_operators();
  ComputeRequest request;
  request.batch_per_gpu = 8;
  request.optimizer = Optimizer::adam;
  const MemoryBreakdown b =
      memory_per_gpu(m, v100_cluster(), DType::fp32, request, ReplicaScheme::allreduce, AllReduceOptions{});
  // 4,000 parameters: fp32 weights 16,000 B, gradients 16,000 B, Adam's two moments 32,000 B.
  CHECK(b.weights_bytes == 16000.0);
  CHECK(b.gradients_bytes == 16000.0);
  CHECK(b.optimizer_bytes == 32000.0);
  // Saved per sample 100 + 200 + 300 + 400 + 10 = 1,010 B, x 8 samples.
  CHECK(b.activations_bytes == 8080.0);
  // DDP buckets hold a copy of every gradient.
  CHECK(b.comm_buffers_bytes == 16000.0);
  CHECK(b.reserve_bytes == kGiB);
  CHECK(b.total_bytes() == 16000.0 * 3 + 32000.0 + 8080.0 + kGiB);
  CHECK(b.capacity_bytes == 32.0 * kGiB);  // Tesla V100-SXM2-32GB
  CHECK(b.fits());

  SECTION("16-bit compute halves the activations, not the mask") {
    const MemoryBreakdown h =
        memory_per_gpu(m, v100_cluster(), DType::fp16, request, ReplicaScheme::allreduce, AllReduceOptions{});
    CHECK(h.activations_bytes == 8.0 * (1000.0 / 2.0 + 10.0));
  }
  SECTION("SGD keeps no state, momentum one fp32 vector") {
    request.optimizer = Optimizer::sgd;
    CHECK(memory_per_gpu(m, v100_cluster(), DType::fp32, request, ReplicaScheme::gossip, {}).optimizer_bytes == 0.0);
    request.optimizer = Optimizer::sgd_momentum;
    CHECK(memory_per_gpu(m, v100_cluster(), DType::fp32, request, ReplicaScheme::gossip, {}).optimizer_bytes == 16000.0);
  }
  SECTION("Horovod's fusion buffer is capped at its size") {
    AllReduceOptions horovod;
    horovod.bucketing = Bucketing::horovod;
    horovod.fusion_buffer_bytes = 4096.0;
    CHECK(memory_per_gpu(m, v100_cluster(), DType::fp32, request, ReplicaScheme::allreduce, horovod)
              .comm_buffers_bytes == 4096.0);
  }
}

TEST_CASE("recomputation keeps segment inputs and one segment", "[memory][recompute]") {
  const ModelSpec m = four_operators();
  // ceil(sqrt(4)) = 2 operators per segment: {t0, t1} and {t2, t3} in backward order.
  // Forward reaches t1 first in {t0, t1} (saved 200) and t3 first in {t2, t3} (400):
  // checkpoints 600; the larger segment is t2 + t3 = 700; 1,300 in all (of 1,010 without:
  // on four operators checkpointing saves nothing, as sqrt(n) segments only pay on deep models).
  CHECK(saved_bytes_per_sample(m, 1.0, false) == 1010.0);
  CHECK(saved_bytes_per_sample(m, 1.0, true) == 1300.0);

  const ModelSpec gpt2 = gpt2_small_eager();
  const double full = saved_bytes_per_sample(gpt2, 1.0, false);
  const double recomputed = saved_bytes_per_sample(gpt2, 1.0, true);
  // 148 tensors, 13 segments of 12: 2.19 GB per sequence without, 0.54 GB with (the
  // segment holding the 206 MB log-softmax of the 50,257-word head is the largest).
  CHECK_THAT(full, WithinRel(2.195e9, 0.001));
  CHECK_THAT(recomputed, WithinRel(0.536e9, 0.001));
  // The zoo's gpt2-small runs attention in one fused kernel (Hugging Face's default "sdpa"):
  // per token and layer it keeps Q, K, V, the output and 12 log-sum-exps (4 x 768 + 12 =
  // 3,084 floats) instead of Q, K, V and the dropped and undropped probabilities
  // (3 x 768 + 2 x 12 x 1,024 = 26,880 floats) and the probabilities' mask (12,288 bytes):
  // 107,472 bytes less per token and layer, x 1,024 tokens x 12 layers = 1,320,615,936.
  // Its MLP runs Hugging Face's gelu_new as PyTorch operators, which keep 3 x 3,072 floats
  // a token more than one GELU kernel does (zoo/llm.cpp): 36,864 bytes x 1,024 x 12 =
  // 452,984,832 back.
  const double fused = saved_bytes_per_sample(*zoo_model("gpt2-small"), 1.0, false);
  CHECK(full - fused == 1'320'615'936.0 - 452'984'832.0);
}

TEST_CASE("recomputation costs one more forward pass in backward", "[memory][recompute]") {
  const ModelSpec model = *zoo_model("resnet50");
  ComputeParams params;
  params.peak_flops_per_s = 100e12;
  params.memory_bytes_per_s = 1e12;
  std::vector<double> plain(model.tensors.size()), again(model.tensors.size());
  ComputeRequest request;
  ComputeTimes a{plain};
  compute_times(model, params, request, a);
  request.recompute_activations = true;
  ComputeTimes b{again};
  compute_times(model, params, request, b);
  CHECK_THAT(b.forward_s, WithinRel(a.forward_s, 1e-12));
  CHECK_THAT(b.backward_total_s, WithinRel(a.backward_total_s + a.forward_s, 1e-12));
  CHECK_THAT(b.iteration_s(), WithinRel(a.iteration_s() + a.forward_s, 1e-12));
}

TEST_CASE("a model that does not fit is reported and never advised", "[memory][advice]") {
  // Llama-2-7B with Adam: 6.74 G parameters x (4 weights + 4 gradients + 8 Adam + 4 DDP
  // buckets) = 135 GB before any activation, on 80 GiB H100s.
  static const ModelSpec llama = *zoo_model("llama-7b");
  Setup s;
  s.cluster = io::load_profile("dgx-h100");
  s.model = &llama;
  s.dtype = DType::bf16;
  Evaluator e(s);
  const SchemeOutcome ar = e.evaluate_on(e.setup().cluster, Scheme::allreduce());
  CHECK_FALSE(ar.memory.fits());
  CHECK(ar.memory.total_bytes() > 6.7e9 * 20.0);
  const Advice advice = advise(e);
  CHECK_FALSE(advice.best.has_value());
  CHECK(advice.verdict == Verdict::does_not_fit);
  // Every scheme needs the same here: one caveat lists them all.
  int reported = 0;
  for (const Caveat& c : advice.caveats) {
    if (c.kind != Caveat::Kind::does_not_fit) continue;
    ++reported;
    CHECK(c.schemes.size() == advice.candidates.size() + 1);
  }
  CHECK(reported == 1);
  CHECK(io::compare_table({ar}).find("does not fit in GPU memory (80 GiB): all-reduce needs") != std::string::npos);
  CHECK(io::memory_line(ar.memory).find("DOES NOT FIT") != std::string::npos);
}

TEST_CASE("GPT-2 small (eager attention) fits a V100 at its default batch and the parts add up", "[memory]") {
  static const ModelSpec gpt2 = gpt2_small_eager();
  Setup s;
  s.cluster = v100_cluster();
  s.model = &gpt2;
  Evaluator e(s);
  const MemoryBreakdown m = e.evaluate_on(e.setup().cluster, Scheme::gossip("ring")).memory;
  const double params = static_cast<double>(s.model->total_params());
  CHECK(m.weights_bytes == 4.0 * params);
  CHECK(m.optimizer_bytes == 8.0 * params);  // GPT-2 trains with Adam
  CHECK(m.comm_buffers_bytes == 4.0 * params);  // the parameters a gossip step exchanges
  // 8 sequences x 2.19 GB (validation/activation_memory.py measures 2.196 GB in PyTorch).
  CHECK_THAT(m.activations_bytes, WithinRel(8.0 * 2.195e9, 0.01));
  CHECK(m.fits() == (m.total_bytes() <= 32.0 * kGiB));
}

TEST_CASE("fp8 runs matrix products at the GPU's fp8 peak and keeps 16-bit memory", "[memory][fp8]") {
  // A GPT of d 4096 on one DGX H100 node: bf16 989.4 TFLOPS, fp8 1,978.9 TFLOPS dense
  // (the H100 SXM datasheet). Memory is the same as bf16's (Transformer Engine keeps
  // activations and weights in 16 bits outside the GEMMs); forward speeds up by less than
  // 2x, the elementwise work not being matrix products.
  const ModelSpec model = gpt_model([] {
    GptShape s;
    s.layers = 4;
    s.model_dim = 4096;
    s.heads = 32;
    s.ffn_dim = 16384;
    s.context = 2048;
    return s;
  }());
  Setup s;
  s.cluster = io::load_profile("dgx-h100");
  s.cluster.nodes = 1;
  s.model = &model;
  s.dtype = DType::bf16;
  Evaluator bf16(s);
  s.dtype = DType::fp8;
  Evaluator fp8(s);
  const SchemeOutcome a = bf16.evaluate(Scheme::allreduce());
  const SchemeOutcome b = fp8.evaluate(Scheme::allreduce());
  CHECK(b.memory.total_bytes() == a.memory.total_bytes());
  CHECK(b.iteration.forward_s < a.iteration.forward_s);
  CHECK(b.iteration.forward_s > 0.5 * a.iteration.forward_s);
  // A GPU without an fp8 peak refuses it.
  s.cluster = io::load_profile("dgx-a100");
  s.cluster.nodes = 1;
  Evaluator a100(s);
  CHECK_THROWS_AS(a100.evaluate(Scheme::allreduce()), InputError);
}
