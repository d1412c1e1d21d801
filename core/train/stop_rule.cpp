#include "train/stop_rule.hpp"

#include <cmath>
#include <sstream>

namespace wulf {

StopRule::StopRule(const TrainConfig& config, bool numerics, bool check_target, bool on_test)
    : config_(config), numerics_(numerics), check_target_(check_target), on_test_(on_test) {}

std::optional<Stop> StopRule::before_check(int iteration, const Evaluation& seen,
                                           const std::optional<Stop>& requested) const {
  if (requested && stopped_on_fault(requested->reason)) return requested;
  if (numerics_ && (!std::isfinite(seen.loss) || !std::isfinite(seen.mse))) {
    std::ostringstream why;
    why << "training diverged in iteration " << iteration << ": the training error became " << seen.loss
        << " (try a smaller --eta)";
    return Stop{StopReason::diverged, why.str()};
  }
  return std::nullopt;
}

std::optional<Stop> StopRule::after_check(const IterationRecord& record, const std::optional<Stop>& requested) {
  const int it = record.iteration;
  if (numerics_) {
    const double e = check_error(record);
    if (!std::isfinite(e))
      return Stop{StopReason::diverged, "training diverged in iteration " + std::to_string(it) +
                                            ": the check-set error is not finite (try a smaller --eta)"};
    if (!best_ || e < best_->error) best_ = BestError{it, e, record.time_s, on_test_};
    if (requested) return requested;
    if (check_target_ && config_.target_error && e <= *config_.target_error) {
      std::ostringstream why;
      why << "target error " << *config_.target_error << " reached in iteration " << it << " (" << e << ")";
      return Stop{StopReason::target_reached, why.str()};
    }
  }
  if (config_.max_seconds > 0 && record.time_s >= config_.max_seconds) {
    std::ostringstream why;
    why << "time limit of " << config_.max_seconds << " s reached in iteration " << it << not_reached();
    return Stop{StopReason::time_limit, why.str()};
  }
  if (it == config_.max_iterations)
    return Stop{StopReason::max_iterations, "ran all " + std::to_string(it) + " iterations" + not_reached()};
  return std::nullopt;
}

double StopRule::check_error(const IterationRecord& r) const {
  return on_test_ ? r.test->error(config_.metric) : r.train->error(config_.metric);
}

std::string StopRule::not_reached() const {
  if (!config_.target_error || !numerics_) return "";
  std::ostringstream why;
  why << " without reaching the target error " << *config_.target_error;
  if (best_)
    why << " (best " << best_->error << " in iteration " << best_->iteration << ", at " << best_->time_s << " s)";
  return why.str();
}

}  // namespace wulf
