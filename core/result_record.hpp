// The machine-readable record every run writes (DESIGN.md, "Result record"): the keys
// config, history, final and phases, plus the software versions under config.versions.
#pragma once

#include "json.hpp"
#include "trainer.hpp"

#include <array>
#include <span>
#include <vector>

namespace wulf {

Json versions_json();
Json evaluation_json(const Evaluation& e);
// history, final and phases of a run, added to record; per_rank: every rank's phase times
// (rank 0's are r.phases too).
void add_train_result(Json& record, const TrainResult& r, std::size_t parameters, ErrorMetric metric,
                      const std::vector<PhaseTimes>& per_rank);

// PhaseTimes as a flat array, to gather them from the ranks, and back.
std::array<double, 10> phase_array(const PhaseTimes& p);
PhaseTimes phase_times(std::span<const double> a);

}  // namespace wulf
