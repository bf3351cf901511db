#include "scenario_file.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "dtperf/error.hpp"
#include "dtperf/io/json_reader.hpp"

namespace dtperf::cli {

namespace {

std::string value_text(const io::Json& value, const std::string& file, const std::string& pointer) {
  if (value.is_string()) return value.get<std::string>();
  // Unsigned first: 2^64 - 1 read as a signed integer was "-1".
  if (value.is_number_unsigned()) return std::to_string(value.get<unsigned long long>());
  if (value.is_number_integer()) return std::to_string(value.get<long long>());
  if (value.is_number()) return fmt::format("{}", value.get<double>());
  throw InputError(file, pointer, "expected a number or a string, got " + io::type_name(value));
}

}  // namespace

ScenarioArguments read_scenario_file(const CLI::App& app, const std::string& path,
                                     const std::vector<std::string>& overrides) {
  return scenario_arguments(app, io::read_json_file(path), path, overrides);
}

ScenarioArguments scenario_arguments(const CLI::App& app, const io::Json& json, const std::string& path,
                                     const std::vector<std::string>& overrides) {
  const auto overridden = [&](const std::string& name) {
    return std::any_of(overrides.begin(), overrides.end(), [&](const std::string& arg) {
      return arg == "--" + name || arg.rfind("--" + name + "=", 0) == 0;
    });
  };
  io::ObjectReader r(json, path, "");
  const std::string schema = r.string("schema");
  if (schema != "dtperf.scenario/1") {
    r.fail("schema", fmt::format("unsupported schema '{}'; this dtperf reads 'dtperf.scenario/1'", schema));
  }
  r.optional_string("description");
  const std::vector<std::string> commands = {"predict", "compare", "advise", "whatif", "collective", "sweep", "fit", "models", "profiles", "topologies"};
  const std::string command = r.choice("command", commands);
  const CLI::App* sub = app.get_subcommand(command);

  std::vector<std::string> known;
  for (const CLI::Option* option : sub->get_options()) {
    for (const auto& name : option->get_lnames()) known.push_back(name);
  }
  ScenarioArguments out;
  std::vector<std::string>& args = out.args;
  args.push_back(command);
  if (auto options = r.optional_object("options")) {
    const io::Json& object = json.at("options");
    for (const auto& [name, value] : object.items()) {
      const std::string pointer = options->pointer_of(name);
      if (std::find(known.begin(), known.end(), name) == known.end() || name == "help") {
        throw InputError(path, pointer,
                         fmt::format("'{}' is not an option of dtperf {}{}", name, command, did_you_mean(name, known)));
      }
      if (overridden(name)) continue;
      out.pointers[name] = pointer;
      if (value.is_boolean()) {
        if (value.get<bool>()) args.push_back("--" + name);
      } else if (value.is_array()) {
        for (std::size_t i = 0; i < value.size(); ++i) {
          args.push_back("--" + name);
          args.push_back(value_text(value[i], path, io::pointer_append(pointer, i)));
        }
      } else {
        args.push_back("--" + name);
        args.push_back(value_text(value, path, pointer));
      }
    }
  }
  r.finish();
  return out;
}

}  // namespace dtperf::cli
