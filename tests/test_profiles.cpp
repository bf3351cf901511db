// Cluster profiles: the built-ins load, and every kind of bad profile gets one message
// with the file, the JSON pointer and the reason.
#include <catch2/catch.hpp>

#include <string>

#include "dtperf/io/profile_json.hpp"
#include "dtperf/scenario.hpp"

using namespace dtperf;
using namespace dtperf::io;

namespace {

const char* kGood = R"({
  "schema": "dtperf.profile/1",
  "name": "test",
  "nodes": 2,
  "gpus_per_node": 4,
  "gpu": {"model": "X", "peak_tflops": {"fp32": 10, "bf16": 100}, "memory_bandwidth_GB_per_s": 1000},
  "intra_node": {"bandwidth_GB_per_s": 100, "latency_us": 2},
  "inter_node": {"nics_per_node": 1, "nic_gbps": 100, "latency_us": 5, "transport_efficiency": 0.9},
  "provenance": {"source": "manual"}
})";

Json good() { return Json::parse(kGood); }

// The message parse_profile gives for `json`, or "" if it parses.
std::string error_of(const Json& json) {
  try {
    parse_profile(json, "p.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("every built-in profile parses and has datasheet provenance", "[profiles]") {
  const auto& profiles = builtin_profiles();
  REQUIRE(profiles.size() == 7);
  for (const auto& p : profiles) {
    INFO(p.name);
    CHECK(p.provenance.source == "datasheet");
    CHECK(!p.provenance.references.empty());
    CHECK(p.ranks() >= 2);
  }
  const ClusterProfile p3dn = load_profile("p3dn-24xlarge");
  CHECK(p3dn.nodes == 8);
  CHECK(p3dn.gpus_per_node == 8);
  CHECK(p3dn.inter.nic_gbps == 100);
}

TEST_CASE("a profile survives a round trip through JSON", "[profiles]") {
  for (const auto& p : builtin_profiles()) {
    const ClusterProfile back = parse_profile(profile_to_json(p), "roundtrip");
    CHECK(back.name == p.name);
    CHECK(back.inter.nic_gbps == p.inter.nic_gbps);
    CHECK(back.intra.bandwidth_bytes_per_s == Approx(p.intra.bandwidth_bytes_per_s));
    CHECK(back.compute.half_efficiency_flops == Approx(p.compute.half_efficiency_flops));
    CHECK(back.compute.fused_attention_efficiency == p.compute.fused_attention_efficiency);
    CHECK(profile_to_json(back) == profile_to_json(p));
  }
}

TEST_CASE("a minimal profile gets the documented defaults", "[profiles]") {
  const ClusterProfile p = parse_profile(good(), "p.json");
  CHECK(p.intra.efficiency == 1.0);
  CHECK(p.compute.dtype == DType::fp32);
  CHECK(p.compute.gemm_efficiency == 0.7);
  CHECK_FALSE(p.compute.fused_attention_efficiency.has_value());  // as the GEMMs of its size
  CHECK(p.compute.interference_factor == 1.0);
  CHECK(p.inter.host_exchange_share == 1.0);  // processor sharing
}

TEST_CASE("a host transport's exchange share is read, range-checked and written back", "[profiles]") {
  Json j = good();
  j["inter_node"]["host_cpu_ns_per_byte"] = 8.0;
  j["inter_node"]["host_exchange_share"] = 0.25;
  const ClusterProfile p = parse_profile(j, "p.json");
  CHECK(p.inter.host_exchange_share == 0.25);
  CHECK(profile_to_json(p)["inter_node"]["host_exchange_share"] == 0.25);
  CHECK(network_params(p, 1.0, {}).host_exchange_share == 0.25);
  CHECK_FALSE(profile_to_json(parse_profile(good(), "p.json"))["inter_node"].contains("host_exchange_share"));
  j["inter_node"]["host_exchange_share"] = 1.5;
  CHECK(error_of(j) == "p.json: at /inter_node/host_exchange_share: expected a number from 0 to 1, got 1.5");
}

TEST_CASE("the shared NIC efficiency is read, range-checked and written back", "[profiles]") {
  // Two flows of one node together, over one alone: in (0, 1], 1 (no loss) unless given.
  CHECK(parse_profile(good(), "p.json").inter.shared_nic_efficiency == 1.0);
  CHECK_FALSE(profile_to_json(parse_profile(good(), "p.json"))["inter_node"].contains("shared_nic_efficiency"));
  Json k = good();
  k["inter_node"]["shared_nic_efficiency"] = 0.93;
  const ClusterProfile q = parse_profile(k, "p.json");
  CHECK(q.inter.shared_nic_efficiency == 0.93);
  CHECK(profile_to_json(q)["inter_node"]["shared_nic_efficiency"] == 0.93);
  CHECK(network_params(q, 1.0, {}).shared_nic_efficiency == 0.93);
  k["inter_node"]["shared_nic_efficiency"] = 0.0;
  CHECK(error_of(k).find("/inter_node/shared_nic_efficiency") != std::string::npos);
}

TEST_CASE("a profile names its collective library and whether its ring moves in lockstep", "[profiles]") {
  CHECK_FALSE(parse_profile(good(), "p.json").transport.lockstep_ring);
  Json j = good();
  j["transport"] = {{"library", "gloo"}, {"lockstep_ring", true}};
  const ClusterProfile p = parse_profile(j, "p.json");
  CHECK(p.transport.library == "gloo");
  CHECK(p.transport.lockstep_ring);
  CHECK(profile_to_json(p)["transport"] == j["transport"]);
  CHECK(profile_to_json(parse_profile(profile_to_json(p), "roundtrip")) == profile_to_json(p));
  CHECK(p.transport.collectives_in_flight == 0);
  j["transport"]["collectives_in_flight"] = 2;
  const ClusterProfile two = parse_profile(j, "p.json");
  CHECK(two.transport.collectives_in_flight == 2);
  CHECK(profile_to_json(two)["transport"] == j["transport"]);
}

TEST_CASE("bad profiles are rejected at the exact place", "[profiles][errors]") {
  Json j = good();
  j["transport"] = {{"lockstep", true}};
  CHECK(error_of(j).starts_with("p.json: at /transport/lockstep: unknown key 'lockstep'"));
  j = good();
  j["transport"] = {{"lockstep_ring", "yes"}};
  CHECK(error_of(j).starts_with("p.json: at /transport/lockstep_ring: expected"));
  j = good();
  j["transport"] = {{"collectives_in_flight", 0}};
  CHECK(error_of(j) == "p.json: at /transport/collectives_in_flight: expected an integer from 1 to 64, got 0");

  j = good();
  j["nodes"] = 0;
  CHECK(error_of(j) == "p.json: at /nodes: expected an integer from 1 to 1048576, got 0");

  j = good();
  j["inter_node"]["nic_gbps"] = -100;
  CHECK(error_of(j) == "p.json: at /inter_node/nic_gbps: expected a number from 0.001 to 100000, got -100");
  // Physical ranges (limits.hpp): 1e-300 Gbit/s gave infinite times, 1e308 TFLOP/s none.
  j = good();
  j["inter_node"]["nic_gbps"] = 1e-300;
  CHECK(error_of(j) == "p.json: at /inter_node/nic_gbps: expected a number from 0.001 to 100000, got 1e-300");
  j = good();
  j["gpu"]["peak_tflops"]["fp32"] = 1e308;
  CHECK(error_of(j) == "p.json: at /gpu/peak_tflops/fp32: expected a number from 1e-06 to 1e+06, got 1e+308");
  // A bound that {:g} would round is written in full: 1 MiB is 1/1024 GiB = 0.0009765625, and
  // "from 0.000976562" would name a minimum that is itself refused.
  j = good();
  j["gpu"]["memory_GiB"] = 0.000976562;
  CHECK(error_of(j) == "p.json: at /gpu/memory_GiB: expected a number from 0.0009765625 to 1048576, got 0.000976562");
  j = good();
  j["compute"]["interference_factor"] = 1e308;
  CHECK(error_of(j) == "p.json: at /compute/interference_factor: expected a number from 1 to 10, got 1e+308");

  j = good();
  j["inter_node"]["transport_efficiency"] = 1.5;
  CHECK(error_of(j) == "p.json: at /inter_node/transport_efficiency: expected a number from 1e-06 to 1, got 1.5");

  j = good();
  j["gpus_per_node"] = "eight";
  CHECK(error_of(j) == "p.json: at /gpus_per_node: expected an integer from 1 to 1024, got a string");

  j = good();
  j["nodes"] = 2.5;
  CHECK(error_of(j) == "p.json: at /nodes: expected an integer from 1 to 1048576, got 2.5");

  // Counts beyond the limits are refused, not narrowed to 32 bits (2^32 nodes became 0).
  j = good();
  j["nodes"] = 4294967296LL;
  CHECK(error_of(j) == "p.json: at /nodes: expected an integer from 1 to 1048576, got 4294967296");
  j = good();
  j["inter_node"]["nics_per_node"] = 4294967296LL;
  CHECK(error_of(j) == "p.json: at /inter_node/nics_per_node: expected an integer from 1 to 1024, got 4294967296");
  j = good();
  j["nodes"] = 18446744073709551615ULL;
  CHECK(error_of(j) ==
        "p.json: at /nodes: expected an integer from 1 to 1048576, got 18446744073709551615 (over the limit)");
  // Subnormal magnitudes overflow once divided into.
  j = good();
  j["compute"]["memory_efficiency"] = 5e-324;
  CHECK(error_of(j) == "p.json: at /compute/memory_efficiency: expected a number from 1e-06 to 1, got 5e-324");

  j = good();
  j["intra_node"].erase("latency_us");
  CHECK(error_of(j) == "p.json: at /intra_node/latency_us: missing required field 'latency_us'");

  j = good();
  j["inter_node"]["nic_gpbs"] = 100;
  CHECK(error_of(j).starts_with("p.json: at /inter_node/nic_gpbs: unknown key 'nic_gpbs' (did you mean 'nic_gbps'?)"));

  j = good();
  j["provenance"]["source"] = "guess";
  CHECK(error_of(j).starts_with("p.json: at /provenance/source: unknown value 'guess'"));

  j = good();
  j["schema"] = "dtperf.profile/9";
  CHECK(error_of(j) == "p.json: at /schema: unsupported schema 'dtperf.profile/9'; this dtperf reads 'dtperf.profile/1'");

  j = good();
  j["compute"] = {{"dtype", "tf32"}};
  CHECK(error_of(j) == "p.json: at /compute/dtype: the default dtype 'tf32' has no peak in /gpu/peak_tflops");

  j = good();
  j["gpu"]["peak_tflops"] = Json::object();
  CHECK(error_of(j) == "p.json: at /gpu/peak_tflops: give the peak of at least one dtype (fp32, tf32, fp16, bf16, fp8)");

  j = good();
  j["calibration"] = {{"collectives", {{{"collective", "all_reduce"}, {"ranks", 8}, {"nodes", 1},
                                        {"points_bytes_us", {{8, 10}, {4, 12}}}}}}};
  CHECK(error_of(j) == "p.json: at /calibration/collectives/0/points_bytes_us/1: points must be sorted by strictly increasing size");

  CHECK(error_of(Json::array()) == "p.json: at (root): expected an object, got an array");
}

TEST_CASE("malformed JSON is reported with line and column", "[profiles][errors]") {
  try {
    parse_json_text("{\n  \"nodes\": 2,\n  \"gpus\": ,\n}", "broken.json");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.file() == "broken.json");
    CHECK(e.where() == "line 3, column 11");
    CHECK(e.reason().starts_with("malformed JSON: "));
  }
}

TEST_CASE("unknown profile names list the built-ins and suggest one", "[profiles][errors]") {
  try {
    load_profile("dgx-a10");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("unknown profile 'dgx-a10' (did you mean 'dgx-a100'?)") != std::string::npos);
  }
  CHECK_THROWS_WITH(load_profile("/nonexistent/x.json"), "/nonexistent/x.json: cannot open the file for reading");
}

TEST_CASE("a fitted profile's compute scales: one model's alone, several models' for any", "[profiles][runs_fit]") {
  const auto with_fit = [](const Json& fit) {
    Json j = good();
    j["runs_fit"] = fit;
    return j;
  };
  const Json one = {{"models", {"resnet50"}}, {"forward_scale", 2.0}, {"backward_scale", 2.0}, {"runs", 3},
                    {"rms_error", 0.01}};
  const ClusterProfile p = parse_profile(with_fit(one), "p.json");
  CHECK(p.runs_fit->applies_to("resnet50"));
  CHECK_FALSE(p.runs_fit->applies_to("vgg16"));
  Json several = one;
  several["models"] = {"resnet50", "vgg16"};
  CHECK(parse_profile(with_fit(several), "p.json").runs_fit->applies_to("gpt2-xl"));
  // Profiles written before runs could mix models name one model.
  Json legacy = one;
  legacy.erase("models");
  legacy["model"] = "resnet50";
  CHECK(parse_profile(with_fit(legacy), "p.json").runs_fit->models == std::vector<std::string>{"resnet50"});
  CHECK(profile_to_json(parse_profile(with_fit(legacy), "p.json"))["runs_fit"]["models"] == Json({"resnet50"}));
  Json both = one;
  both["model"] = "resnet50";
  CHECK(error_of(with_fit(both)) == "p.json: at /runs_fit/models: give the models the runs trained (models: [...])");
  Json empty = one;
  empty["models"] = Json::array();
  CHECK(error_of(with_fit(empty)) == "p.json: at /runs_fit/models: at least one model");
}

TEST_CASE("a fitted profile's parameter boxes are the fit's own", "[profiles][runs_fit][errors]") {
  // launch_overhead is fitted linearly in us (unit 1e-6), searched over [0, 10^4] us: a
  // band drawn from another unit or box would put it where the fit never could.
  const auto with_parameter = [](const Json& parameter) {
    Json j = good();
    j["runs_fit"] = {{"models", {"resnet50"}}, {"forward_scale", 1.0}, {"backward_scale", 1.0}, {"runs", 3},
                     {"rms_error", 0.01},
                     {"uncertainty", {{"model_sigma", 0.02}, {"parameters", {parameter}}, {"covariance", {{0.25}}}}}};
    return j;
  };
  const Json launch = {{"name", "launch_overhead"}, {"log", false}, {"unit", 1e-6}, {"u", 50.0}, {"low_u", 0.0},
                       {"high_u", 1e4}};
  CHECK(parse_profile(with_parameter(launch), "p.json").runs_fit->parameters.size() == 1);
  Json unit = launch;
  unit["unit"] = 1e30;
  CHECK(error_of(with_parameter(unit)) ==
        "p.json: at /runs_fit/uncertainty/parameters/0/unit: launch_overhead is fitted in units of 1e-06, got 1e+30");
  Json below = launch;
  below["low_u"] = -1e15;
  CHECK(error_of(with_parameter(below)) ==
        "p.json: at /runs_fit/uncertainty/parameters/0/low_u: launch_overhead is searched from 0, got -1000000000000000");
  Json above = launch;
  above["high_u"] = 2e4;
  CHECK(error_of(with_parameter(above)) ==
        "p.json: at /runs_fit/uncertainty/parameters/0/high_u: launch_overhead is searched up to 10000, got 20000");
  Json logged = launch;
  logged["log"] = true;  // and inside the log coordinate's range, so that only the form is wrong
  logged["u"] = 1.0;
  logged["high_u"] = 5.0;
  CHECK(error_of(with_parameter(logged)) ==
        "p.json: at /runs_fit/uncertainty/parameters/0/log: launch_overhead is fitted linearly");
  Json unknown = launch;
  unknown["name"] = "warp_speed";
  CHECK(error_of(with_parameter(unknown)) ==
        "p.json: at /runs_fit/uncertainty/parameters/0/name: 'warp_speed' is not a parameter fit --runs fits");
}
