// The stopping rule of a run (run.hpp), checked after every iteration, in this order:
//   before the check pass  a fault the strategy found; running errors NaN or infinite
//   after it               the check error NaN or infinite; the strategy's own stop;
//                          --target-error; --max-seconds; --epochs
// The first three are faults (the run keeps the last good weights). The rule also keeps
// the lowest check error so far, which a run that ends without reaching its target quotes.
#pragma once

#include "train/trainer.hpp"

#include <optional>
#include <string>

namespace wulf {

// Why a run ends, with the sentence for people.
struct Stop {
  StopReason reason = StopReason::max_iterations;
  std::string detail;
};

class StopRule {
 public:
  // numerics off: there are no errors to check, only the clock and the iteration count.
  // check_target off: --target-error is the strategy's to apply. on_test: the test set is
  // the check set (else the training set is).
  StopRule(const TrainConfig& config, bool numerics, bool check_target, bool on_test);

  // After the strategy's iteration, before the check pass: requested if it is a fault,
  // else diverged if the errors seen while training (summed over the ranks) are not finite.
  std::optional<Stop> before_check(int iteration, const Evaluation& seen, const std::optional<Stop>& requested) const;
  // After the check pass of record (its errors and time_s): whether the run ends here.
  // requested, the strategy's own stop, counts only with the arithmetic on.
  std::optional<Stop> after_check(const IterationRecord& record, const std::optional<Stop>& requested);

  // The lowest finite check error of the records after_check saw (none without numerics).
  const std::optional<BestError>& best() const { return best_; }

 private:
  double check_error(const IterationRecord& r) const;
  // " without reaching the target error ..." where a target was given, else "".
  std::string not_reached() const;

  const TrainConfig& config_;
  const bool numerics_, check_target_, on_test_;
  std::optional<BestError> best_;
};

}  // namespace wulf
