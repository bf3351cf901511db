// dtperf: predicts distributed training iteration times. Exit codes: 0 ok, 1 failure,
// 2 bad usage or input (one message on stderr naming the file, place and reason).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <utility>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "invocation.hpp"
#include "dtperf/error.hpp"
#include "scenario_file.hpp"
#include "sources.hpp"

namespace {

constexpr const char* kRunHelp =
    "Usage: dtperf run SCENARIO.json [OPTIONS...]\n"
    "Run the command a scenario file describes (schema dtperf.scenario/1; see scenarios/).\n"
    "Options after the file are added to the file's and override them.\n";

// CLI11's messages can span lines; ours are one line.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names{"run"};
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

// A parse error as one line; unexpected arguments name the option they most resemble
// (a dash for an underscore, or a typo).
std::string parse_message(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args) {
  // "--nodes: 1 required N:[1, 1048576] missing" (an option without its value).
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    const std::string text = one_line(e.what());
    const std::size_t colon = text.find(':');
    if (colon != std::string::npos && text.ends_with("missing")) return text.substr(0, colon) + ": needs a value";
    return text;
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) return one_line(e.what());
  const CLI::App* command = nullptr;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!args.empty() && sub->get_name() == args.back()) command = sub;  // args are reversed
  }
  if (command == nullptr) return one_line(e.what());
  std::vector<std::string> known;
  for (const CLI::Option* option : command->get_options()) {
    for (const std::string& name : option->get_lnames()) known.push_back("--" + name);
  }
  for (auto it = args.rbegin(); it != args.rend(); ++it) {
    std::string word = it->substr(0, it->find('='));
    if (word.rfind("--", 0) != 0 || std::find(known.begin(), known.end(), word) != known.end()) continue;
    std::string dashed = word;
    std::replace(dashed.begin() + 2, dashed.end(), '_', '-');
    return command->get_name() + ": unknown option '" + word + "'" + dtperf::did_you_mean(dashed, known) +
           " (dtperf " + command->get_name() + " --help lists them)";
  }
  return one_line(e.what());
}

// The first option of TOKENS (the words after the command's name) given more than once
// where it takes one value: "--nodes: given twice (1, then 2); give it once". Repeatable
// options (--vary, --slow-rank: vectors) and flags are left alone. A scenario's own options
// are not checked here: the command line overrides them by design.
std::string repeated_option(const CLI::App& app, const std::string& command_name, const std::vector<std::string>& tokens) {
  const CLI::App* command = nullptr;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == command_name) command = sub;
  }
  if (command == nullptr) return "";
  std::vector<std::pair<const CLI::Option*, std::string>> seen;  // option, its first value
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    const bool is_long = token.rfind("--", 0) == 0 && token.size() > 2;
    const bool is_short = !is_long && token.size() == 2 && token[0] == '-' && std::isalpha(static_cast<unsigned char>(token[1]));
    if (!is_long && !is_short) continue;
    const std::size_t equals = token.find('=');
    const CLI::Option* option = command->get_option_no_throw(token.substr(0, equals));
    if (option == nullptr || option->get_type_size_max() == 0 || option->get_expected_min() == 0 ||
        option->get_items_expected_max() > 1 || option->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll) {
      continue;
    }
    const std::string value = equals != std::string::npos ? token.substr(equals + 1)
                              : i + 1 < tokens.size()     ? tokens[i + 1]
                                                          : "";
    for (const auto& [earlier, first_value] : seen) {
      if (earlier == option) {
        return token.substr(0, equals) + ": given twice (" + first_value + ", then " + value + "); give it once";
      }
    }
    seen.emplace_back(option, value);
  }
  return "";
}

// An output (-o, --plot) that is also one of the command's inputs would overwrite what it
// reads: "-o: in.txt is also an input of this command; write the output elsewhere". Every
// other word that names an existing file counts as an input (the scenario file included).
std::string output_onto_input(const std::vector<std::string>& words, const std::string& scenario) {
  std::vector<std::pair<std::string, std::string>> outputs;  // option, path
  std::vector<std::size_t> output_values;
  for (std::size_t i = 0; i < words.size(); ++i) {
    for (const std::string option : {"-o", "--output", "--plot"}) {
      if (words[i] == option && i + 1 < words.size()) {
        outputs.emplace_back(option, words[i + 1]);
        output_values.push_back(i + 1);
      } else if (words[i].rfind(option + "=", 0) == 0) {
        outputs.emplace_back(option, words[i].substr(option.size() + 1));
        output_values.push_back(i);
      }
    }
  }
  // Two outputs onto one file: the second would replace the first (and a failure of either
  // would leave the other's half-committed file in its place).
  for (std::size_t a = 0; a < outputs.size(); ++a) {
    for (std::size_t b = a + 1; b < outputs.size(); ++b) {
      std::error_code error_a, error_b;
      const auto path_a = std::filesystem::weakly_canonical(outputs[a].second, error_a);
      const auto path_b = std::filesystem::weakly_canonical(outputs[b].second, error_b);
      if (!error_a && !error_b && path_a == path_b && outputs[a].first != outputs[b].first) {
        return outputs[b].first + ": " + outputs[b].second + " is also the " + outputs[a].first +
               " output; give each output its own file";
      }
    }
  }
  std::vector<std::string> inputs;
  if (!scenario.empty()) inputs.push_back(scenario);
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (std::find(output_values.begin(), output_values.end(), i) != output_values.end()) continue;
    const std::size_t equals = words[i].rfind("--", 0) == 0 ? words[i].find('=') : std::string::npos;
    inputs.push_back(equals == std::string::npos ? words[i] : words[i].substr(equals + 1));
  }
  for (const auto& [option, path] : outputs) {
    for (const std::string& input : inputs) {
      std::error_code error;
      if (std::filesystem::equivalent(path, input, error) && !error) {
        return option + ": " + path + " is also an input of this command; write the output elsewhere";
      }
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "dtperf: how long one training iteration takes on your cluster, where the time goes, and\n"
      "whether decentralized (gossip) training would be faster."};
  app.require_subcommand(1);
  app.set_version_flag("--version", dtperf::cli::kToolVersion);
  // Options given twice (a scenario file's, then the command line's) keep the last.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.footer("dtperf run SCENARIO.json [OPTIONS...] runs a scenario file (see scenarios/).");
  dtperf::cli::add_predict_command(app);
  dtperf::cli::add_compare_command(app);
  dtperf::cli::add_advise_command(app);
  dtperf::cli::add_whatif_command(app);
  dtperf::cli::add_collective_command(app);
  dtperf::cli::add_sweep_command(app);
  dtperf::cli::add_merge_command(app);
  dtperf::cli::add_fit_command(app);
  dtperf::cli::add_models_command(app);
  dtperf::cli::add_profiles_command(app);
  dtperf::cli::add_topologies_command(app);
  std::string scenario;  // the scenario file being run, if any
  dtperf::cli::ValueSources sources;  // where option values came from, for messages
  std::vector<std::string> args(argv + 1, argv + argc);
  dtperf::cli::record_invocation(args, !args.empty() && args.front() == "run" && args.size() > 1 ? args[1] : "");
  if (!args.empty() && !args.front().empty() && args.front().front() != '-') {
    const std::vector<std::string> names = command_names(app);
    if (std::find(names.begin(), names.end(), args.front()) == names.end()) {
      std::cerr << "dtperf: error: unknown command '" << dtperf::cli::printable(args.front().substr(0, 40)) << "'"
                << dtperf::did_you_mean(args.front(), names) << "; commands: " << dtperf::join_names(names) << "\n";
      return 2;
    }
  }
  // The words the user typed after the command's name (after the scenario file for run).
  std::vector<std::string> given(args.empty() ? args.begin() : args.begin() + 1, args.end());
  try {
    if (!args.empty() && args.front() == "run") {
      const bool help = args.size() >= 2 && (args[1] == "--help" || args[1] == "-h");
      // The file comes first: an option there (run --nodes 2) or an empty name is no file.
      if (args.size() < 2 || args[1].empty() || (args[1].front() == '-' && !help)) {
        std::cerr << "dtperf: error: run: give a scenario file first: dtperf run SCENARIO.json [OPTIONS...] "
                     "(dtperf run --help)\n";
        return 2;
      }
      if (help) {
        std::cout << kRunHelp;
        return 0;
      }
      scenario = args[1];
      const std::vector<std::string> overrides(args.begin() + 2, args.end());
      dtperf::cli::ScenarioArguments expanded = dtperf::cli::read_scenario_file(app, scenario, overrides);
      sources = dtperf::cli::ValueSources(scenario, expanded.pointers, overrides);
      expanded.args.insert(expanded.args.end(), overrides.begin(), overrides.end());
      args = std::move(expanded.args);
      given = overrides;
    }
    if (const std::string onto = output_onto_input(args, scenario); !onto.empty()) {
      std::cerr << "dtperf: error: " << dtperf::cli::printable(onto) << "\n";
      return 2;
    }
    // The command line's own options, once each (a scenario's are overridden by design).
    if (const std::string repeated = repeated_option(app, args.empty() ? "" : args.front(), given);
        !repeated.empty()) {
      std::cerr << "dtperf: error: " << dtperf::cli::printable(repeated) << "\n";
      return 2;
    }
    std::reverse(args.begin(), args.end());  // CLI11 takes them last to first
    std::vector<std::string> consumed = args;  // and consumes them
    app.parse(consumed);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string text = parse_message(app, e, args);
    std::string message = sources.message(text);
    // A message about the command as a whole, in a scenario: the file is where it was said.
    if (!scenario.empty() && message == text && text.rfind("--", 0) != 0) message = scenario + ": " + text;
    std::cerr << "dtperf: error: " << dtperf::cli::printable(message) << "\n";
    return 2;
  } catch (const dtperf::InputError& e) {
    std::cerr << "dtperf: error: " << dtperf::cli::printable(sources.message(e)) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dtperf: internal error: " << dtperf::cli::printable(e.what()) << "\n";
    return 1;
  }
  return 0;
}
