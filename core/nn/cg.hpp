// Polak-Ribiere conjugate gradient with a line search that brackets the minimum by the sign
// of the directional derivative (seed 002 section 4.2), written against plain numbers and
// vectors so that it runs on analytic functions as well as on a net spread over ranks.
//
// Along a direction d from the weights w the line search sees only
//   f'(s) = grad f(w + s d) . d,
// the slope of the error at step s. Seed 002 brackets the minimum "since only the sign of
// the inner product of the gradient with the search direction is required": starting at s0
// it doubles s while f'(s) < 0, or halves it while the first probe already lies past the
// minimum (f'(s0) >= 0), until f'(a) < 0 <= f'(b) with b = 2a (or a = 0 when halving ran out).
// Then it refines by quadratic interpolation: the quadratic whose derivative is the line
// through (a, f'(a)) and (b, f'(b)) has its minimum where that line crosses zero,
//   s* = a - f'(a) (b - a) / (f'(b) - f'(a)),
// which lies in (a, b] because f'(a) < 0 <= f'(b). For a quadratic f, f' is linear and the
// first s* is the exact minimiser.
#pragma once

#include <Eigen/Core>

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace wulf {

// Inner product of T vectors summed in double, in index order: the same bits on every rank
// and engine (the strategy's slopes and Polak-Ribiere's products both use it).
template <class T>
double dot_in_order(std::span<const T> x, std::span<const T> y) {
  double sum = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sum += static_cast<double>(x[i]) * static_cast<double>(y[i]);
  return sum;
}

// The settings of --strategy cg (wulf train --help names them --cg-* and --load-balance, --chunk).
struct CgConfig {
  double initial_step = 1.0;    // s0 of the first line search; later ones start at the previous step
  int max_expansions = 30;      // doublings or halvings of s in search of a sign change of f'
  int refinements = 2;          // quadratic interpolations in the bracket (>= 1); all but the last are probed
  double flat_tolerance = 0.0;  // |f'(0)| <= this is a flat direction (0: only an exactly zero slope)
  // --numerics off, where nothing can be searched: the mean line-search probes per
  // iteration to charge (a real run's line_search_probes over its iterations). 0: the
  // fewest a search takes, `refinements`.
  double time_only_probes = 0.0;
  // Load balancing (seed 002 section 6.2): rank 0 only polls; the other ranks step through
  // their patterns `chunk` at a time and stop once this fraction of the training set has
  // been consumed over all of them. 0: off (every rank, rank 0 too, takes its whole share).
  double load_balance = 0.0;
  std::size_t chunk = 64;
};

enum class LineSearchStatus {
  ok,
  flat,        // f'(0) is zero or within the flat tolerance: nothing to gain along d
  rising,      // f'(0) > 0: d goes uphill
  no_bracket,  // f' kept its sign through every allowed doubling
  not_finite,  // f' was NaN or infinite at a probe
};
std::string_view to_string(LineSearchStatus s);

struct LineSearchResult {
  LineSearchStatus status = LineSearchStatus::ok;
  double step = 0;               // the accepted step (status ok), else 0
  double lower = 0, upper = 0;   // the last bracket [a, b]: f'(a) < 0 <= f'(b)
  int probes = 0;                // evaluations of f' (f'(0) not counted: the caller had it)
  int expansions = 0;            // doublings and halvings of s
  std::string detail;            // why it failed, for people
};

// f'(s) for a step s > 0 along the direction.
using SlopeFn = std::function<double(double step)>;

// The line search above, from slope0 = f'(0) and a first step s0 > 0. Never calls slope
// when f'(0) already refuses the direction (flat, rising or not finite).
LineSearchResult line_search(double slope0, double s0, const SlopeFn& slope, const CgConfig& config);

// The direction state of Polak-Ribiere CG over n parameters of type T (float or double;
// inner products are summed in double):
//   beta = max(0, g . (g - g_prev) / g_prev . g_prev),   d = -g + beta d_prev,
// restarting with d = -g on the first step, when g_prev . g_prev is 0, and when the result
// is no descent direction (g . d >= 0). The max(0, .) restarts by itself when successive
// gradients stop being conjugate (Nocedal and Wright's PR+).
template <class T>
class PolakRibiere {
 public:
  using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;

  struct Update {
    double beta = 0;
    double slope = 0;     // f'(0) = g . d of the new direction
    bool restarted = false;  // d = -g although a previous direction existed
  };

  // The next direction from the gradient g (n) at the current weights.
  Update next(std::span<const T> g);
  // The direction of the last next() (n values).
  std::span<T> direction() { return {d_.data(), static_cast<std::size_t>(d_.size())}; }

 private:
  Vector g_prev_;  // (n) gradient of the previous step; empty before the first
  Vector d_;       // (n) the direction
};

extern template class PolakRibiere<float>;
extern template class PolakRibiere<double>;

// A differentiable function of n variables (the tests' analytic functions): returns f(w)
// and writes grad f(w) into g (n).
class Objective {
 public:
  virtual ~Objective() = default;
  virtual double evaluate(const Eigen::VectorXd& w, Eigen::VectorXd& g) = 0;
};

struct CgRun {
  int iterations = 0;          // CG steps taken
  bool converged = false;      // |grad f| <= the tolerance
  LineSearchStatus status = LineSearchStatus::ok;  // of the line search that ended the run, if one did
  std::string detail;
  double value = 0;            // f at the final w
  int probes = 0, restarts = 0;
};

// Polak-Ribiere CG from w (in place) for at most max_iterations steps, stopping early when
// |grad f| <= gradient_tolerance or a line search fails (w stays at the last good point).
// The same composition as --strategy cg, on one process.
CgRun minimize(Objective& f, Eigen::VectorXd& w, const CgConfig& config, int max_iterations,
               double gradient_tolerance);

}  // namespace wulf
