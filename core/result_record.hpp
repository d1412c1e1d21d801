// The machine-readable record every run writes (DESIGN.md, "Result record"): the keys
// config, history, final and phases, plus the software versions under config.versions.
#pragma once

#include "json.hpp"
#include "trainer.hpp"

namespace wulf {

Json versions_json();
Json evaluation_json(const Evaluation& e);
// history, final and phases of one sequential run, added to record.
void add_train_result(Json& record, const TrainResult& r, std::size_t parameters, ErrorMetric metric);

}  // namespace wulf
