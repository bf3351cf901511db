#include "dtperf/io/columns.hpp"

namespace dtperf::io {

Json cell_json(const Cell& cell) {
  struct Visit {
    Json operator()(std::monostate) const { return nullptr; }
    Json operator()(double x) const { return x; }
    Json operator()(std::int64_t x) const { return x; }
    Json operator()(bool x) const { return x; }
    Json operator()(const std::string& x) const { return x; }
  };
  return std::visit(Visit{}, cell);
}

std::string cell_text(const Cell& cell, const Shown& shown) {
  struct Visit {
    const Shown& shown;
    std::string operator()(std::monostate) const { return "-"; }
    std::string operator()(double x) const {
      return fixed(shown.divides ? x / shown.factor : x * shown.factor, shown.decimals);
    }
    std::string operator()(std::int64_t x) const { return std::to_string(x); }
    std::string operator()(bool x) const { return x ? "yes" : "no"; }
    std::string operator()(const std::string& x) const { return x; }
  };
  return std::visit(Visit{shown}, cell);
}

}  // namespace dtperf::io
