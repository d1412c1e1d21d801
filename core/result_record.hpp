// The machine-readable record every run writes (DESIGN.md, "Result record"): the keys
// config, history, final and phases, plus the software versions under config.versions.
#pragma once

#include "json.hpp"
#include "comm.hpp"
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

// One rank's phase times as a record object.
Json phases_json(const PhaseTimes& p);
// Every rank's phase times, gathered at rank 0 (empty elsewhere): a collective.
std::vector<PhaseTimes> gather_phases(Comm& comm, const PhaseTimes& mine);

}  // namespace wulf
