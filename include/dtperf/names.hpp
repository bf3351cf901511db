#pragma once
// The names of an enum's values, written once beside the enum and used alike by parsing
// (command line, profiles, runs and scenario files), help texts (the lists of accepted
// values) and reports:
//
//   enum class DType : std::uint8_t { fp32, tf32, fp16, bf16 };
//   template <> struct EnumNames<DType> {
//     static constexpr Named<DType> table[] = {{DType::fp32, "fp32"}, ...};
//   };
//   name_of(DType::bf16)          -> "bf16"
//   parse_name<DType>("bf16")     -> DType::bf16  (std::nullopt for an unknown name)
//   names_of<DType>()             -> {"fp32", "tf32", "fp16", "bf16"}
//
// A value may have aliases (older or common spellings) after its name: they parse, and
// are never printed or listed.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dtperf {

template <class E>
struct Named {
  E value;
  const char* name;
  bool alias = false;  // parsed, never printed or listed
};

/// Specialised beside each enum with `static constexpr Named<E> table[]`.
template <class E>
struct EnumNames;

/// The printed name of a value ("?" for a value outside the table).
template <class E>
constexpr const char* name_of(E value) {
  for (const Named<E>& n : EnumNames<E>::table) {
    if (n.value == value && !n.alias) return n.name;
  }
  return "?";
}

/// The value of a name or alias; std::nullopt when there is none.
template <class E>
constexpr std::optional<E> parse_name(std::string_view name) {
  for (const Named<E>& n : EnumNames<E>::table) {
    if (name == n.name) return n.value;
  }
  return std::nullopt;
}

/// Every printed name, in the table's order (aliases left out): for help texts,
/// "expected one of" messages and the command line's accepted values.
template <class E>
std::vector<std::string> names_of() {
  std::vector<std::string> names;
  for (const Named<E>& n : EnumNames<E>::table) {
    if (!n.alias) names.emplace_back(n.name);
  }
  return names;
}

}  // namespace dtperf
