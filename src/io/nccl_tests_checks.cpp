// The checks every nccl-tests log goes through, text or JSON (rules in nccl_tests.hpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "dtperf/error.hpp"
#include "dtperf/fit.hpp"
#include "nccl_tests_checks.hpp"

namespace dtperf::io::detail {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kSlack = 1e-9;  // relative, for floating-point noise in the bounds
constexpr int kMaxRanks = 1 << 24;

const std::vector<std::string> kCollectives = {"all_reduce", "all_gather", "reduce_scatter", "sendrecv",
                                               "alltoall",   "broadcast",  "reduce"};

struct Interval {
  double lo = 0.0;
  double hi = kInfinity;
};

// What the true algbw can be, given the printed time.
std::optional<Interval> algbw_bounds(double bytes, const ReadResult& r) {
  const double t = r.value.time_us;
  const double h = r.time_half_us;
  if (!(t - h > 0.0)) return std::nullopt;  // time printed too coarsely to say
  return Interval{bytes / ((t + h) * 1e3) * (1.0 - kSlack), bytes / ((t - h) * 1e3) * (1.0 + kSlack)};
}

// What busbw / algbw can be, given the printed time and busbw.
Interval factor_bounds(double bytes, const ReadResult& r) {
  const auto alg = algbw_bounds(bytes, r);
  if (!alg) return {};
  const double b = r.value.busbw_GB_per_s;
  const double h = r.busbw_half;
  return {std::max(0.0, b - h) / alg->hi, (b + h) / alg->lo};
}

const char* group_name(bool out_of_place) { return out_of_place ? "out-of-place" : "in-place"; }

template <typename F>
void for_each_result(const ReadRow& row, F&& f) {
  if (row.out_of_place) f(*row.out_of_place, true);
  if (row.in_place) f(*row.in_place, false);
}

void check_row(const ReadRow& row, const ReadRow& first, const ReadRow* previous, const std::string& file) {
  if (row.type != first.type) {
    throw InputError(file, row.where, fmt::format("type '{}' differs from '{}' on {}: one dtype per log", row.type,
                                                  first.type, first.where));
  }
  if (row.redop != first.redop) {
    throw InputError(file, row.where, fmt::format("reduction '{}' differs from '{}' on {}: one reduction per log",
                                                  row.redop, first.redop, first.where));
  }
  if (previous != nullptr && row.bytes <= previous->bytes) {
    throw InputError(file, row.where,
                     fmt::format("size {} B does not increase over {} B on {} (two runs in one log?)", row.bytes,
                                 previous->bytes, previous->where));
  }
  for_each_result(row, [&](const ReadResult& r, bool out_of_place) {
    if (!(r.value.time_us > 0.0)) {
      throw InputError(file, row.where,
                       fmt::format("{} time {:g} us is not a measurement", group_name(out_of_place), r.value.time_us));
    }
    if (r.value.wrong && *r.value.wrong != 0) {
      throw InputError(file, row.where,
                       fmt::format("{} wrong elements in the {} result: the measurement is invalid", *r.value.wrong,
                                   group_name(out_of_place)));
    }
    const auto alg = algbw_bounds(row.bytes, r);
    const double a = r.value.algbw_GB_per_s;
    if (alg && (a + r.algbw_half < alg->lo || a - r.algbw_half > alg->hi)) {
      throw InputError(file, row.where,
                       fmt::format("{} algbw {:g} GB/s is not size / time = {} B / {:g} us = {:.4g} GB/s",
                                   group_name(out_of_place), a, row.bytes, r.value.time_us,
                                   row.bytes / (r.value.time_us * 1e3)));
    }
  });
}

const char* factor_formula(const std::string& collective) {
  if (collective == "all_reduce") return "2(n-1)/n";
  if (collective == "all_gather" || collective == "reduce_scatter" || collective == "alltoall") return "(n-1)/n";
  return "1";
}

Stated<std::string> decide_collective(const std::vector<ReadRow>& rows, const ReadFacts& facts,
                                      const std::string& file) {
  if (facts.collective) {
    const auto& c = *facts.collective;
    if (std::find(kCollectives.begin(), kCollectives.end(), c.value) == kCollectives.end()) {
      throw InputError(file, c.where,
                       fmt::format("collective '{}' is not supported; dtperf reads {}", c.value, join_names(kCollectives)));
    }
    return c;
  }
  // Only all_reduce has busbw > algbw.
  for (const auto& row : rows) {
    bool above = false;
    for_each_result(row, [&](const ReadResult& r, bool) { above = above || factor_bounds(row.bytes, r).lo > 1.0; });
    if (above) return {"all_reduce", row.where, "busbw > algbw"};
  }
  throw InputError(file, "",
                   "cannot tell which collective (all_reduce, all_gather, reduce_scatter, alltoall or sendrecv) the "
                   "log measures: it names no nccl-tests program (e.g. all_reduce_perf)")
      .needing("collective");
}

// The one rank count that every row's busbw / algbw allows, or an error.
Stated<int> infer_ranks(const std::vector<ReadRow>& rows, const std::string& collective, const std::string& file) {
  const double scale = collective == "all_reduce" ? 2.0 : 1.0;  // factor = scale (1 - 1/n)
  if (std::string(factor_formula(collective)) == "1") {
    throw InputError(file, "",
                     fmt::format("cannot tell the number of ranks: the log states none (no '# total_ranks:' or '#  "
                                 "Rank' lines) and {}'s busbw equals its algbw for any number",
                                 collective))
        .needing("ranks");
  }
  Interval all;
  for (const auto& row : rows) {
    for_each_result(row, [&](const ReadResult& r, bool out_of_place) {
      const Interval f = factor_bounds(row.bytes, r);
      all.lo = std::max(all.lo, f.lo);
      all.hi = std::min(all.hi, f.hi);
      if (all.lo > all.hi) {
        throw InputError(file, row.where,
                         fmt::format("{} busbw / algbw does not match the rows before it: no single number of ranks "
                                     "fits them all",
                                     group_name(out_of_place)));
      }
    });
  }
  // n >= 1 / (1 - lo / scale) and n <= 1 / (1 - hi / scale).
  const auto bound = [&](double f) { return f >= scale ? kInfinity : 1.0 / (1.0 - f / scale); };
  const double n_lo = std::max(2.0, std::ceil(bound(all.lo) - 1e-9));
  const double n_hi = std::min(static_cast<double>(kMaxRanks), std::floor(bound(all.hi) + 1e-9));
  if (n_lo == n_hi) return {static_cast<int>(n_lo), "", "busbw / algbw"};
  const std::string fits = n_lo > n_hi ? "fits no whole number of ranks"
                           : n_hi >= kMaxRanks
                               ? fmt::format("fits any number of ranks from {}", n_lo)
                               : fmt::format("fits {} to {} ranks", n_lo, n_hi);
  throw InputError(file, "",
                   fmt::format("cannot tell the number of ranks: the log states none (no '# total_ranks:' or '#  Rank' "
                               "lines) and busbw / algbw {}",
                               fits))
      .needing("ranks");
}

void check_factor(const std::vector<ReadRow>& rows, const std::string& collective, const Stated<int>& ranks,
                  const std::string& file) {
  const double factor = *bus_factor(collective, ranks.value);
  for (const auto& row : rows) {
    for_each_result(row, [&](const ReadResult& r, bool out_of_place) {
      const Interval f = factor_bounds(row.bytes, r);
      if (factor < f.lo || factor > f.hi) {
        throw InputError(file, row.where,
                         fmt::format("{} busbw / algbw = {:.4f} does not match {} on {} ranks ({}), which needs {} = "
                                     "{:.4f}",
                                     group_name(out_of_place),
                                     r.value.busbw_GB_per_s / (row.bytes / (r.value.time_us * 1e3)), collective,
                                     ranks.value, ranks.source, factor_formula(collective), factor));
      }
    });
  }
}

NcclTestsResult value_of(const ReadResult& r) { return r.value; }

// A run that stopped early (a crash, a time limit) or a log cut after a row: the table
// ends short of the sizes the run's parameter line asks for, and nccl-tests' closing line
// is missing. A log with its closing line is whole as the run left it; one without a
// parameter line (a table pasted alone) cannot be told from an excerpt and is read as is.
void check_complete(const std::vector<ReadRow>& rows, const ReadFacts& facts, const std::string& file) {
  if (!facts.sweep || facts.closed) return;
  double largest = 0.0;
  const ReadRow* last = nullptr;
  for (const auto& r : rows) {
    if (r.bytes >= largest) {
      largest = r.bytes;
      last = &r;
    }
  }
  const Sweep& sweep = *facts.sweep;
  if (!sweep.ends_short(largest)) return;
  throw InputError(file, facts.end_where,
                   fmt::format("truncated: the table ends at {:.0f} B ({}), short of the {:.0f} B that the run's "
                               "parameters ({}: minBytes {:.0f}, maxBytes {:.0f}, step {}{:.0f}) ask for, and the log "
                               "has no closing '# Avg bus bandwidth' line: the run stopped early or the log was cut",
                               largest, last->where, sweep.last_bytes(), sweep.where, sweep.min_bytes, sweep.max_bytes,
                               sweep.factor ? "x" : "+", sweep.step));
}

}  // namespace

NcclTestsLog finish_log(std::vector<ReadRow> rows, ReadFacts facts, const std::string& file,
                        const NcclTestsOptions& options) {
  std::erase_if(rows, [](const ReadRow& r) { return r.bytes == 0.0; });
  if (rows.empty()) {
    throw InputError(file, facts.end_where,
                     "no data rows: expected nccl-tests' table (size, count, type, redop, root, then time, algbw, "
                     "busbw and #wrong out-of-place and in-place)");
  }
  for (std::size_t i = 0; i < rows.size(); ++i) check_row(rows[i], rows[0], i > 0 ? &rows[i - 1] : nullptr, file);
  check_complete(rows, facts, file);
  if (facts.out_of_bounds && facts.out_of_bounds->value > 0) {
    throw InputError(file, facts.out_of_bounds->where,
                     fmt::format("nccl-tests reports {} out-of-bounds values: the measurement is invalid",
                                 facts.out_of_bounds->value));
  }
  ReadFacts stated = facts;
  if (options.collective) {
    // The command line says what the log itself cannot (nccl-tests prints no program name).
    std::string name = collective_of_program(*options.collective);
    if (name.empty()) name = *options.collective;
    if (facts.collective && facts.collective->value != name) {
      throw InputError(file, facts.collective->where,
                       fmt::format("the log says '{}' but the collective given is '{}'", facts.collective->value, name));
    }
    stated.collective = Stated<std::string>{name, "", "given"};
  }
  const Stated<std::string> collective = decide_collective(rows, stated, file);
  Stated<int> ranks;
  if (options.ranks) {
    ranks = {*options.ranks, "", "given"};
  } else if (facts.ranks) {
    ranks = *facts.ranks;
  } else {
    ranks = infer_ranks(rows, collective.value, file);
  }
  if (ranks.value < 2) {
    throw InputError(file, ranks.where, fmt::format("{} rank(s): a single rank communicates nothing", ranks.value));
  }
  check_factor(rows, collective.value, ranks, file);
  std::optional<Stated<int>> nodes = facts.nodes;
  if (options.nodes) nodes = Stated<int>{*options.nodes, "", "given"};
  if (nodes && (nodes->value < 1 || ranks.value % nodes->value != 0)) {
    throw InputError(file, nodes->where,
                     fmt::format("{} ranks ({}) do not split evenly over {} nodes ({})", ranks.value, ranks.source,
                                 nodes->value, nodes->source));
  }
  NcclTestsLog log;
  log.collective = collective.value;
  log.ranks = ranks.value;
  log.ranks_source = ranks.source;
  log.nodes = nodes ? nodes->value : 0;
  log.dtype = rows.front().type;
  log.redop = rows.front().redop;
  log.gpu = facts.gpu;
  for (const auto& r : rows) {
    NcclTestsRow row;
    row.line = r.line;
    row.bytes = r.bytes;
    row.count = r.count;
    if (r.out_of_place) row.out_of_place = value_of(*r.out_of_place);
    if (r.in_place) row.in_place = value_of(*r.in_place);
    log.rows.push_back(row);
  }
  return log;
}

double Sweep::last_bytes() const {
  if (factor) {
    double size = min_bytes;
    while (size * step <= max_bytes) size *= step;  // step >= 2: at most 50 steps below 1 PiB
    return size;
  }
  return min_bytes + std::floor((max_bytes - min_bytes) / step) * step;
}

bool Sweep::ends_short(double largest) const {
  const double last = last_bytes();
  return factor ? largest * std::sqrt(step) < last : largest + 0.5 * step < last;
}

double half_unit(const std::string& printed) {
  const auto e = printed.find_first_of("eE");
  const std::string mantissa = printed.substr(0, e);
  const int exponent = e == std::string::npos ? 0 : std::atoi(printed.c_str() + e + 1);
  const auto dot = mantissa.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(mantissa.size() - dot - 1);
  return 0.5 * std::pow(10.0, exponent - decimals);
}

std::string collective_of_program(const std::string& token) {
  std::string name = token.substr(token.find_last_of('/') == std::string::npos ? 0 : token.find_last_of('/') + 1);
  if (name.ends_with("_mpi")) name.resize(name.size() - 4);
  if (!name.ends_with("_perf") || name.size() <= 5) return "";
  name.resize(name.size() - 5);
  return name;
}

}  // namespace dtperf::io::detail
