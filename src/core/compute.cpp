#include "dtperf/compute.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "dtperf/interpolate.hpp"

namespace dtperf {

double optimizer_passes(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::sgd: return 3.0;
    case Optimizer::sgd_momentum: return 5.0;
    case Optimizer::adam: return 7.0;
    case Optimizer::lamb: return 12.0;
  }
  return 5.0;
}

double optimizer_step_s(const ComputeParams& params, Optimizer optimizer, double param_elements,
                        int param_bytes) {
  if (param_elements <= 0.0) return 0.0;
  // A fused (foreach) step is a handful of kernels regardless of the tensor count.
  return std::max(params.kernel_overhead_s,
                  optimizer_passes(optimizer) * param_elements * param_bytes / params.memory_bytes_per_s);
}

double gemm_efficiency_at(const ComputeParams& params, double flops) {
  if (flops <= 0.0) return params.gemm_efficiency;
  const auto& curve = params.efficiency_curve;
  if (!curve.empty()) return interpolate(curve, flops, Axis::log, Axis::linear);
  return params.gemm_efficiency * flops / (flops + params.half_efficiency_flops);
}

ComputeSource resolve_compute_source(const ModelSpec& model, const ComputeRequest& request) {
  if (request.source != ComputeSource::automatic) return request.source;
  if (model.has_measured_layers()) return ComputeSource::measured_layers;
  if (request.single_gpu_iteration_s || model.measured_iteration_s) {
    return ComputeSource::measured_iteration;
  }
  return ComputeSource::flops;
}

namespace {

// The matrix products of one operator and pass: all of them, the part inside a fused
// attention kernel, and the parts over rows not aligned to 16 bytes (TensorSpec); and what
// the fused attention kernel computes beyond its part on partly filled tiles.
struct Products {
  double flops = 0.0;
  double attention_flops = 0.0;
  double misaligned_flops = 0.0;
  double partly_aligned_flops = 0.0;
  double attention_tile_flops = 0.0;
};

// Seconds of products at `rate`, never faster than `aligned_rate` (0: no rate of its own).
double at_rate_s(double flops, double rate, double aligned_rate) {
  if (flops <= 0.0) return 0.0;
  return flops / (rate > 0.0 ? std::min(rate, aligned_rate) : aligned_rate);
}

// Launch-bound roofline of one operator, as its kernels run on one stream, one after
// another (CUDA streams run their kernels in issue order): the matrix-product kernels at
// the slower of their arithmetic and their own traffic (`gemm_bytes`), then the
// elementwise and normalisation kernels at the slower of their arithmetic and the rest of
// the traffic; the sum never below the host's dispatch time (launches queue ahead of long
// kernels and hide, short kernels wait for them). Matrix products run at the efficiency
// their size reaches (`gemms`: how many equal GEMMs they split into; backward has data and
// weight gradients), elementwise FLOPs at the vector rate; the products inside a fused
// attention kernel at the fused-attention rate, where there is one, and those over
// misaligned rows at their rates (compute_params), never faster than aligned ones. A fused
// attention kernel's products on partly filled tiles are priced as its others are: at the
// fused-attention rate, or without one with the aligned products.
double roofline_s(const ComputeParams& p, double flops, Products products, double memory_bytes, double gemm_bytes,
                  double gemms) {
  const double elementwise = (flops - products.flops) / p.vector_flops_per_s;
  double products_s = 0.0;
  double rest = products.flops;
  if (p.fused_attention_flops_per_s > 0.0 && products.attention_flops > 0.0) {
    products_s += (products.attention_flops + products.attention_tile_flops) / p.fused_attention_flops_per_s;
    rest = std::max(0.0, rest - products.attention_flops);
  } else {
    rest += products.attention_tile_flops;
  }
  if (rest > 0.0) {
    const double aligned_rate = p.peak_flops_per_s * gemm_efficiency_at(p, rest / gemms);
    const double misaligned = std::min(rest, products.misaligned_flops);
    const double partly = std::min(rest - misaligned, products.partly_aligned_flops);
    products_s += at_rate_s(misaligned, p.misaligned_gemm_flops_per_s, aligned_rate) +
                  at_rate_s(partly, p.partly_aligned_gemm_flops_per_s, aligned_rate) +
                  (rest - misaligned - partly) / aligned_rate;
  }
  const double other_bytes = std::max(0.0, memory_bytes - gemm_bytes);
  return std::max(p.kernel_overhead_s, std::max(products_s, gemm_bytes / p.memory_bytes_per_s) +
                                           std::max(elementwise, other_bytes / p.memory_bytes_per_s));
}

// A time measured at batch b0 at batch b: the work grows with the samples and never
// falls below the dispatch floor (or the measured time itself, if that was below it).
double scale_to_batch(double measured_s, double floor_s, double batch_ratio) {
  return std::max(std::min(floor_s, measured_s), measured_s * batch_ratio);
}

// Activation traffic of one tensor's operator per sample, forward and backward, at the
// compute dtype's element size (TensorSpec: counted at 4 bytes, the part autocast keeps in
// fp32 stays at 4, each cast element read at one size and written at the other, once per
// pass). Backward moves twice forward's activations and each cast's gradient once, and
// whatever more (or less) autograd's own kernels move (`backward_extra_*`: split as
// forward's traffic is, its fp32 part at 4 bytes and its extra casts at both sizes).
// The matrix products' own part (`gemm_*`) runs in the compute dtype.
struct Traffic {
  double forward_bytes = 0.0;
  double backward_bytes = 0.0;
  double gemm_forward_bytes = 0.0;
  double gemm_backward_bytes = 0.0;
};

Traffic traffic_per_sample(const TensorSpec& t, double element_bytes) {
  const double gemm = t.forward_gemm_memory_bytes_per_sample * (element_bytes / 4.0);
  if (element_bytes == 4.0) {
    const double backward_extra = t.backward_extra_memory_bytes_per_sample;
    return {t.forward_memory_bytes_per_sample, 2.0 * t.forward_memory_bytes_per_sample + backward_extra, gemm,
            2.0 * gemm};
  }
  const double fp32 = t.forward_fp32_memory_bytes_per_sample;
  const double activations = (t.forward_memory_bytes_per_sample - fp32) * (element_bytes / 4.0) + fp32;
  const double casts = t.forward_cast_elements_per_sample * (4.0 + element_bytes);
  const double extra_fp32 = t.backward_extra_fp32_memory_bytes_per_sample;
  const double backward_extra = (t.backward_extra_memory_bytes_per_sample - extra_fp32) * (element_bytes / 4.0) +
                                extra_fp32 + t.backward_extra_cast_elements_per_sample * (4.0 + element_bytes);
  return {activations + casts, 2.0 * activations + casts + backward_extra, gemm, 2.0 * gemm};
}

void flops_times(const ModelSpec& model, const ComputeParams& p, double batch, ComputeTimes& out) {
  double forward = 0.0;
  double backward = 0.0;
  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    const TensorSpec& t = model.tensors[i];
    const double gemm_share =
        t.forward_flops_per_sample > 0.0 ? t.forward_gemm_flops_per_sample / t.forward_flops_per_sample : 0.0;
    const Traffic traffic = traffic_per_sample(t, p.activation_bytes_per_element);
    const Products forward_products{t.forward_gemm_flops_per_sample * batch,
                                    t.forward_attention_flops_per_sample * batch,
                                    t.forward_misaligned_gemm_flops_per_sample * batch,
                                    t.forward_partly_aligned_gemm_flops_per_sample * batch,
                                    t.forward_attention_tile_flops_per_sample * batch};
    forward += roofline_s(p, t.forward_flops_per_sample * batch, forward_products, traffic.forward_bytes * batch,
                          traffic.gemm_forward_bytes * batch, 1.0);
    // Backward's products over misaligned rows: forward's shares of its products.
    const double backward_flops = t.backward_flops_per_sample * batch;
    const double backward_gemm = gemm_share * backward_flops;
    const auto share = [&](double forward_part) {
      return t.forward_gemm_flops_per_sample > 0.0 ? backward_gemm * forward_part / t.forward_gemm_flops_per_sample
                                                   : 0.0;
    };
    const Products backward_products{backward_gemm, t.backward_attention_flops_per_sample * batch,
                                     share(t.forward_misaligned_gemm_flops_per_sample),
                                     share(t.forward_partly_aligned_gemm_flops_per_sample),
                                     t.backward_attention_tile_flops_per_sample * batch};
    const double b = roofline_s(p, backward_flops, backward_products, traffic.backward_bytes * batch,
                                traffic.gemm_backward_bytes * batch, 2.0);
    out.backward_s[i] = b;
    backward += b;
  }
  out.forward_s = forward;
  out.backward_total_s = backward;
}

}  // namespace

namespace {

// compute_times up to the scales: what the model, the request and the rates give.
void unscaled_compute_times(const ModelSpec& model, const ComputeParams& p, const ComputeRequest& request,
                            ComputeTimes& out) {
  const double batch = request.batch_per_gpu;
  out.source = resolve_compute_source(model, request);
  out.optimizer_s = optimizer_step_s(p, request.optimizer,
                                     static_cast<double>(model.total_params()), model.param_bytes);
  const std::optional<double> measured_iteration =
      request.single_gpu_iteration_s ? request.single_gpu_iteration_s : model.measured_iteration_s;
  const double measured_batch = request.measured_batch_per_gpu.value_or(
      model.measured_batch_per_gpu.value_or(batch));
  const double ratio = batch / measured_batch;
  const std::size_t n = model.tensors.size();

  switch (out.source) {
    case ComputeSource::flops:
    case ComputeSource::automatic:
      flops_times(model, p, batch, out);
      break;

    case ComputeSource::measured_layers: {
      if (!model.has_measured_layers()) {
        throw std::invalid_argument("the model has no measured per-layer times");
      }
      double measured_backward = 0.0;
      double backward = 0.0;
      std::optional<double> retimed_optimizer;
      for (std::size_t i = 0; i < n; ++i) {
        const double t0 = model.tensors[i].measured_backward_s.value_or(0.0);
        measured_backward += t0;
        out.backward_s[i] = scale_to_batch(t0, p.kernel_overhead_s, ratio);
        backward += out.backward_s[i];
      }
      double forward0 = measured_backward / 2.0;  // backward is about twice forward
      if (model.measured_forward_s) {
        forward0 = *model.measured_forward_s;
        // An iteration time given with the request (measured elsewhere, e.g. with every
        // rank of a node computing at once) re-times the whole measured profile.
        if (request.single_gpu_iteration_s && model.measured_optimizer_s) {
          const double k = *request.single_gpu_iteration_s /
                           (forward0 + measured_backward + *model.measured_optimizer_s);
          forward0 *= k;
          backward = 0.0;
          for (std::size_t i = 0; i < n; ++i) backward += (out.backward_s[i] *= k);
          retimed_optimizer = *model.measured_optimizer_s * k;
        }
      } else if (measured_iteration) {
        const double optimizer0 = optimizer_step_s(
            p, request.optimizer, static_cast<double>(model.total_params()), model.param_bytes);
        forward0 = *measured_iteration - measured_backward - optimizer0;
        if (forward0 <= 0.0) {
          throw std::invalid_argument(
              fmt::format("the measured iteration time ({:.4g} ms) is shorter than the measured "
                      "backward pass plus the optimizer step ({:.4g} ms)",
                      *measured_iteration * 1e3, (measured_backward + optimizer0) * 1e3));
        }
      }
      out.backward_total_s = backward;
      out.forward_s = scale_to_batch(forward0, p.kernel_overhead_s * n, ratio);
      // A measured optimizer step (with the optimizer it was measured with) replaces the
      // memory-bound estimate; it does not grow with the batch.
      if (model.measured_optimizer_s && request.optimizer == model.default_optimizer) {
        out.optimizer_s = retimed_optimizer.value_or(*model.measured_optimizer_s);
      }
      break;
    }

    case ComputeSource::measured_iteration: {
      if (!measured_iteration) {
        throw std::invalid_argument("no measured single-GPU iteration time was given");
      }
      double total_flops = 0.0;
      for (const auto& t : model.tensors) {
        total_flops += t.forward_flops_per_sample + t.backward_flops_per_sample;
      }
      if (total_flops <= 0.0) {
        throw std::invalid_argument("the model has no FLOPs to spread the measured time over");
      }
      const double optimizer0 = optimizer_step_s(
          p, request.optimizer, static_cast<double>(model.total_params()), model.param_bytes);
      const double compute0 = *measured_iteration - optimizer0;
      if (compute0 <= 0.0) {
        throw std::invalid_argument("the measured iteration time is shorter than the optimizer step");
      }
      double forward = 0.0;
      double backward = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        const TensorSpec& t = model.tensors[i];
        const double f0 = compute0 * t.forward_flops_per_sample / total_flops;
        const double b0 = compute0 * t.backward_flops_per_sample / total_flops;
        forward += scale_to_batch(f0, p.kernel_overhead_s, ratio);
        out.backward_s[i] = scale_to_batch(b0, p.kernel_overhead_s, ratio);
        backward += out.backward_s[i];
      }
      out.forward_s = forward;
      out.backward_total_s = backward;
      break;
    }
  }
}

// The rest of compute_times: the fitted scales, recomputation and accumulation.
void scale_compute_times(const ComputeParams& p, const ComputeRequest& request, ComputeTimes& out) {
  const std::size_t n = out.backward_s.size();
  const double forward_scale = p.compute_scale * p.forward_scale;
  const double backward_scale = p.compute_scale * p.backward_scale;
  if (forward_scale != 1.0) out.forward_s *= forward_scale;
  if (backward_scale != 1.0) {
    for (std::size_t i = 0; i < n; ++i) out.backward_s[i] *= backward_scale;
    out.backward_total_s *= backward_scale;
  }
  // Recomputation runs forward once more inside backward, segment by segment: each tensor's
  // gradient is ready later by its share of that forward (taken as its share of backward,
  // since both scale with the operator's work).
  if (request.recompute_activations && out.backward_total_s > 0.0) {
    const double stretch = 1.0 + out.forward_s / out.backward_total_s;
    for (std::size_t i = 0; i < n; ++i) out.backward_s[i] *= stretch;
    out.backward_total_s *= stretch;
  }
  out.accumulation_s = (request.accumulation_steps - 1) * (out.forward_s + out.backward_total_s);
}

// The fields of ComputeParams that unscaled_compute_times reads, the others at their
// defaults: the scales (applied after), contention and the fixed overheads (read by the
// engines, not here).
ComputeParams unscaled_key(const ComputeParams& p) {
  ComputeParams key = p;
  const ComputeParams defaults;
  key.interference_factor = defaults.interference_factor;
  key.comm_interference_factor = defaults.comm_interference_factor;
  key.iteration_overhead_s = defaults.iteration_overhead_s;
  key.cross_node_overhead_s = defaults.cross_node_overhead_s;
  key.runs_on_host = defaults.runs_on_host;
  key.compute_scale = defaults.compute_scale;
  key.forward_scale = defaults.forward_scale;
  key.backward_scale = defaults.backward_scale;
  return key;
}

}  // namespace

void compute_times(const ModelSpec& model, const ComputeParams& p, const ComputeRequest& request,
                   ComputeTimes& out) {
  unscaled_compute_times(model, p, request, out);
  scale_compute_times(p, request, out);
}

void ComputeTimesCache::get(const ModelSpec& model, const ComputeParams& params, const ComputeRequest& request,
                            ComputeTimes& out) {
  const ComputeParams key = unscaled_key(params);
  if (model_ != &model || key_ != key || request_ != request) {
    model_ = nullptr;  // until compute_times returns (it may throw)
    unscaled_backward_s_.resize(model.tensors.size());
    unscaled_ = out;
    unscaled_.backward_s = unscaled_backward_s_;
    unscaled_compute_times(model, params, request, unscaled_);
    model_ = &model;
    key_ = key;
    request_ = request;
  }
  const std::span<double> buffer = out.backward_s;
  std::copy(unscaled_backward_s_.begin(), unscaled_backward_s_.end(), buffer.begin());
  out = unscaled_;
  out.backward_s = buffer;
  scale_compute_times(params, request, out);
}

}  // namespace dtperf
