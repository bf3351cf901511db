// Models from files: per-layer timing logs, JSON layer files, reduction-cost logs, and
// the message each kind of bad file gets.
#include <catch2/catch.hpp>

#include <string>

#include "dtperf/error.hpp"
#include "dtperf/io/model_files.hpp"

using namespace dtperf;
using namespace dtperf::io;

namespace {

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a timing log gives tensors in backward order with their waits", "[model_files][log]") {
  const ModelSpec m = parse_timing_log("comment\n1\n3\n100.5,4000\n-2,8\n20,4096\n", "x.bk.log");
  CHECK(m.name == "x");
  REQUIRE(m.tensors.size() == 3);
  CHECK(m.tensors[0].params == 1000);
  CHECK(m.tensors[0].measured_backward_s.value() == Approx(100.5e-6));
  CHECK(m.tensors[1].measured_backward_s.value() == 0.0);  // negative waits count as 0
  CHECK(m.total_params() == 1000 + 2 + 1024);
  CHECK(m.has_measured_layers());
}

TEST_CASE("a timing log's declared counts cost nothing until its lines are there", "[model_files]") {
  // 10^12 tensors declared: over the limit, refused at the count (it used to end in
  // bad_alloc). The limit declared, two lines given: the truncation is found at line 5
  // without allocating for the count.
  CHECK(error_of([] { parse_timing_log("c\n1\n1000000000000\n1,4\n", "big.bk.log"); }) ==
        "big.bk.log: line 3: 1000000000000 tensors is over the limit of 262144 per model");
  CHECK(error_of([] { parse_timing_log("c\n1\n262144\n1,4\n", "big.bk.log"); }) ==
        "big.bk.log: line 5: truncated: expected 262144 tensors x 1 batches, the data ends at tensor 2 of "
        "batch 1");
  CHECK(error_of([] { parse_timing_log("c\n1000000000000\n1\n1,4\n", "many.bk.log"); }) ==
        "many.bk.log: line 5: truncated: expected 1 tensors x 1000000000000 batches, the data ends at tensor 1 of "
        "batch 2");
}

TEST_CASE("several batches in a timing log are averaged", "[model_files][log]") {
  const ModelSpec m = parse_timing_log("c\n2\n2\n10,8\n20,8\n30,8\n40,8\n", "two.log");
  CHECK(m.tensors[0].measured_backward_s.value() == Approx(20e-6));
  CHECK(m.tensors[1].measured_backward_s.value() == Approx(30e-6));
}

TEST_CASE("bad timing logs name the line and the reason", "[model_files][log][errors]") {
  CHECK(error_of([] { parse_timing_log("c\n1\n3\n1,4\n2,4\n", "t.log"); }) ==
        "t.log: line 6: truncated: expected 3 tensors x 1 batches, the data ends at tensor 3 of batch 1");
  CHECK(error_of([] { parse_timing_log("c\n1\n", "t.log"); }) ==
        "t.log: line 3: truncated: a timing log starts with a comment line, the number of batches and the number of tensors");
  CHECK(error_of([] { parse_timing_log("c\n1\n1\n1.5;4\n", "t.log"); }) ==
        "t.log: line 4: expected 'wait_us,bytes', got '1.5;4'");
  CHECK(error_of([] { parse_timing_log("c\n1\n1\nabc,4\n", "t.log"); }) == "t.log: line 4: wait_us 'abc' is not a number");
  CHECK(error_of([] { parse_timing_log("c\n1\n1\n1e308,4\n", "t.log"); }) ==
        "t.log: line 4: wait_us 1e308 is outside [-1e+10, 1e+10]");
  CHECK(error_of([] { parse_reduction_log("1e308,1\n", "r.log"); }) ==
        "r.log: line 1: bytes 1e308 is outside [1, 1.1259e+15]");
  CHECK(error_of([] { parse_reduction_log("8,1e308\n", "r.log"); }) ==
        "r.log: line 1: seconds 1e308 is outside [0, 10000]");
  CHECK(error_of([] { parse_iteration_times("1\n1e308\n", "t.txt"); }) ==
        "t.txt: line 2: iteration time 1e308 is outside [1e-09, 1e+10]");
  CHECK(error_of([] { parse_timing_log("c\n1\n1\n1,0\n", "t.log"); }) == "t.log: line 4: bytes must be positive, got 0");
  CHECK(error_of([] { parse_timing_log("c\n1\n1\n1,-8\n", "t.log"); }) == "t.log: line 4: bytes must be positive, got -8");
  CHECK(error_of([] { parse_timing_log("c\n1\n1\n1,6\n", "t.log"); }) ==
        "t.log: line 4: 6 bytes is not a whole number of 4-byte (fp32) gradients");
  CHECK(error_of([] { parse_timing_log("c\nx\n1\n1,4\n", "t.log"); }) == "t.log: line 2: number of batches 'x' is not an integer");
  CHECK(error_of([] { parse_timing_log("c\n1\n0\n", "t.log"); }) == "t.log: line 3: number of tensors must be positive, got 0");
  CHECK(error_of([] { parse_timing_log("c\n1\n1\n1,4\n2,4\n", "t.log"); }) ==
        "t.log: line 5: unexpected data after the 1 declared tensors");
  CHECK(error_of([] { parse_timing_log("c\n2\n1\n1,4\n2,8\n", "t.log"); }) ==
        "t.log: line 5: tensor 1 has 8 bytes here but 4 bytes in the first batch");
}

TEST_CASE("a JSON layer file gives a model", "[model_files][json]") {
  const ModelSpec m = parse_layer_json(R"({
    "schema": "dtperf.model/1", "name": "mlp", "sample_unit": "image", "batch_per_gpu": 64,
    "optimizer": "adam", "measured": {"single_gpu_iteration_ms": 12.5, "batch_per_gpu": 64},
    "layers": [
      {"name": "fc2.weight", "params": 1000, "forward_gflop_per_sample": 0.002},
      {"name": "fc1.weight", "params": 50000, "forward_gflop_per_sample": 0.1, "backward_gflop_per_sample": 0.15,
       "forward_memory_MB_per_sample": 0.5}
    ]})",
                                       "mlp.json");
  CHECK(m.name == "mlp");
  CHECK(m.default_batch_per_gpu == 64);
  CHECK(m.default_optimizer == Optimizer::adam);
  CHECK(m.measured_iteration_s.value() == Approx(12.5e-3));
  REQUIRE(m.tensors.size() == 2);
  CHECK(m.tensors[0].backward_flops_per_sample == Approx(4e6));  // default: 2 x forward
  CHECK(m.tensors[1].backward_flops_per_sample == Approx(0.15e9));
  CHECK(m.tensors[1].forward_memory_bytes_per_sample == Approx(0.5e6));
  // A layer is one operator, a GEMM unless its kind says otherwise: all its traffic is the GEMM's.
  CHECK(m.tensors[1].forward_gemm_memory_bytes_per_sample == Approx(0.5e6));
  CHECK(!m.has_measured_layers());
}

TEST_CASE("a model file's measurements are held to their physical ranges", "[model_files][json][errors]") {
  const auto parse = [](const std::string& measured) {
    return error_of([&] {
      parse_layer_json(R"({"schema": "dtperf.model/1", "name": "m", "layers": [{"params": 10}], "measured": )" +
                           measured + "}",
                       "m.json");
    });
  };
  // 1e308 ms made the compute-anchoring loop run without end; a batch of 1e-300 made the
  // per-sample time infinite.
  CHECK(parse(R"({"single_gpu_iteration_ms": 1e308})") ==
        "m.json: at /measured/single_gpu_iteration_ms: expected a number from 1e-06 to 1e+07, got 1e+308");
  CHECK(parse(R"({"single_gpu_iteration_ms": 10, "batch_per_gpu": 1e-300})") ==
        "m.json: at /measured/batch_per_gpu: expected a number from 1e-06 to 1e+09, got 1e-300");
}

TEST_CASE("bad layer files are rejected at the exact place", "[model_files][json][errors]") {
  const auto parse = [](const std::string& layers) {
    return error_of([&] {
      parse_layer_json(R"({"schema": "dtperf.model/1", "name": "m", "layers": )" + layers + "}", "m.json");
    });
  };
  CHECK(parse("[]") == "m.json: at /layers: a model needs at least one layer");
  CHECK(parse(R"([{"params": 0}])") == "m.json: at /layers/0/params: expected an integer from 1 to 1000000000000000, got 0");
  CHECK(parse(R"([{"params": 10, "forward_gflop_per_sample": -1}])") ==
        "m.json: at /layers/0/forward_gflop_per_sample: expected a number from 0 to 1e+09, got -1");
  CHECK(parse(R"([{"params": 10, "backward_us": 5}, {"params": 10}])") ==
        "m.json: at /layers/1/backward_us: give backward_us for every layer or for none (layer 0 has it)");
  CHECK(parse(R"([{"parms": 10}])") == "m.json: at /layers/0/params: missing required field 'params' (is 'parms' a typo?)");
  CHECK(parse(R"({"params": 10})") == "m.json: at /layers: expected an array, got an object");
  CHECK(error_of([] { parse_layer_json(R"({"schema": "dtperf.model/1", "layers": []})", "m.json"); }) ==
        "m.json: at /name: missing required field 'name'");
}

TEST_CASE("reduction-cost logs are bytes,seconds lines in increasing size", "[model_files][reduction]") {
  const auto points = parse_reduction_log("40,1e-05\n80,2e-05\n", "add.log");
  REQUIRE(points.size() == 2);
  CHECK(points[1].second == 2e-5);
  CHECK(error_of([] { parse_reduction_log("80,1\n40,1\n", "add.log"); }) ==
        "add.log: line 2: sizes must increase from line to line");
  CHECK(error_of([] { parse_reduction_log("", "add.log"); }) == "add.log: no 'bytes,seconds' lines found");
}

TEST_CASE("unknown model names suggest a built-in one", "[model_files][errors]") {
  CHECK(error_of([] { load_model("resnet-50"); }).find("unknown model 'resnet-50' (did you mean 'resnet50'?)") !=
        std::string::npos);
}

TEST_CASE("Models by size: defaults, canonical names and one clear error per bad key", "[model_files][sized]") {
  // The 1.3B GPT: d 2048 -> 32 heads of 64, FFN 8192; 24 x (12 d^2 + 13 d) + 2 d + 50,257 d
  // + 2,048 d = 1,315,723,264 parameters.
  const ModelSpec gpt = load_model("gpt:layers=24,d=2048,seq=2048");
  CHECK(gpt.name == "gpt:layers=24,d=2048,heads=32,ffn=8192,seq=2048,vocab=50257,batch=1,attention=fused,dropout=no,gelu=fused");
  CHECK(gpt.total_params() == 1'315'723'264);
  // Llama's FFN rule: ceil(8 x 5120 / 3) = 13,654 -> 13,824 (next multiple of 256), as
  // Llama-2-13B; 40 heads of 128.
  const ModelSpec llama = load_model("llama:layers=40,d=5120");
  CHECK(llama.name == "llama:layers=40,d=5120,heads=40,kv_heads=40,ffn=13824,seq=4096,vocab=32000,batch=1,attention=fused,"
                      "elementwise=eager");
  CHECK(llama.total_params() == 13'015'864'320);
  CHECK(load_model("gpt:layers=2,d=128,batch=2.5").default_batch_per_gpu == 2.5);
  CHECK(error_of([] { load_model("gpt:layers=24"); }) == "model: gpt:layers=24: give d=");
  CHECK(error_of([] { load_model("gpt:layers=0,d=64"); }) ==
        "model: gpt:layers=0,d=64: layers=0 is out of range: it must be from 1 to 10000");
  CHECK(error_of([] { load_model("gpt:layers=99999999999999999999,d=64"); }) ==
        "model: gpt:layers=99999999999999999999,d=64: layers=99999999999999999999 is out of range: it must be from 1 "
        "to 10000");
  CHECK(error_of([] { load_model("gpt:layers=+2,d=64"); }) == "model: gpt:layers=+2,d=64: layers=+2 is not a whole number");
  CHECK(error_of([] { load_model("gpt:layers=2,d= 64"); }) == "model: gpt:layers=2,d= 64: d= 64 is not a whole number");
  CHECK(error_of([] { load_model("gpt:layers=2,d=100"); }) ==
        "model: gpt:layers=2,d=100: d=100 is not a multiple of 64: give heads=");
  CHECK(error_of([] { load_model("gpt:layers=2,d=128,heads=3"); }) ==
        "model: gpt:layers=2,d=128,heads=3: heads=3 does not divide d=128");
  CHECK(error_of([] { load_model("gpt:layers=2,d=128,layer=3"); }).starts_with(
      "model: gpt:layers=2,d=128,layer=3: unknown key 'layer' (did you mean 'layers'?); keys: layers, d,"));
  CHECK(error_of([] { load_model("gpt:layers=2,d=128,d=256"); }) == "model: gpt:layers=2,d=128,d=256: 'd' given twice");
  CHECK(error_of([] { load_model("gpt:layers=2,d=1e3"); }) == "model: gpt:layers=2,d=1e3: d=1e3 is not a whole number");
  CHECK(error_of([] { load_model("gpt:layers=2,d=128,"); }) ==
        "model: gpt:layers=2,d=128,: '' is not key=value (keys: layers, d, heads, ffn, seq, vocab, batch, attention, "
        "dropout, gelu)");
  CHECK(error_of([] { load_model("gpt:layers=2,d=128,attention=flash"); }) ==
        "model: gpt:layers=2,d=128,attention=flash: attention=flash: expected one of eager, fused");
  CHECK(error_of([] { load_model("gpt:layers=2,d=128,gelu=tanh"); }) ==
        "model: gpt:layers=2,d=128,gelu=tanh: gelu=tanh: expected one of fused, eager");
  CHECK(error_of([] { load_model("llama:layers=2,d=256,elementwise=liger"); }) ==
        "model: llama:layers=2,d=256,elementwise=liger: elementwise=liger: expected one of eager, fused");
  CHECK(error_of([] { load_model("llama:layers=2,d=256,heads=2,kv_heads=3"); }) ==
        "model: llama:layers=2,d=256,heads=2,kv_heads=3: kv_heads=3 does not divide heads=2");
  CHECK(error_of([] { load_model("gpt:layers=2,d=128,batch=0"); }) ==
        "model: gpt:layers=2,d=128,batch=0: batch=0 is out of range: it must be from 1e-06 to 1e+09");
}
