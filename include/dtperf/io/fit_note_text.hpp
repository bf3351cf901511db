// The sentences for the engine's fit notes (dtperf/fit_note.hpp), as the fit commands
// print them and as profiles keep them in their provenance.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dtperf/fit_note.hpp"

namespace dtperf {

/// One sentence, with the numbers of the note ("Intra-node latency: 1.00 us per ring
/// step = alpha 14.00 us / 2(8-1) of all_reduce on 8 ranks of one node.").
std::string fit_note_text(const FitNote& note);

/// {"kind": "...", "text": "..."} per note, for JSON reports; a run the fit does not
/// explain also carries "run" (its label) and "error" (predicted / measured - 1); a
/// parameter that fits as well elsewhere, "parameter", "value" and "other_value" (natural
/// units: s, s/B, Gbit/s, ratios).
nlohmann::json fit_notes_json(std::span<const FitNote> notes);

}  // namespace dtperf
