#include "nn/cg.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace wulf {

std::string_view to_string(LineSearchStatus s) {
  switch (s) {
    case LineSearchStatus::ok: return "ok";
    case LineSearchStatus::flat: return "flat";
    case LineSearchStatus::rising: return "rising";
    case LineSearchStatus::no_bracket: return "no_bracket";
    case LineSearchStatus::not_finite: return "not_finite";
  }
  return "?";
}

namespace {

std::string number(double v) {
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

LineSearchResult failed(LineSearchResult r, LineSearchStatus status, std::string detail) {
  r.status = status;
  r.step = 0;
  r.detail = std::move(detail);
  return r;
}

}  // namespace

LineSearchResult line_search(double slope0, double s0, const SlopeFn& slope, const CgConfig& config) {
  if (!(s0 > 0) || !std::isfinite(s0)) throw std::invalid_argument("line_search: the first step must be positive");
  LineSearchResult r;
  if (!std::isfinite(slope0))
    return failed(r, LineSearchStatus::not_finite, "the slope f'(0) along the direction is " + number(slope0));
  if (slope0 > 0)
    return failed(r, LineSearchStatus::rising, "the direction rises: f'(0) = " + number(slope0) + " > 0");
  if (std::abs(slope0) <= config.flat_tolerance)
    return failed(r, LineSearchStatus::flat,
                  "the direction is flat: f'(0) = " + number(slope0) +
                      (config.flat_tolerance > 0 ? ", within the flat tolerance " + number(config.flat_tolerance)
                                                 : std::string()));

  // One probe of f' at s; false when it is not finite.
  double fs = 0;
  auto probe = [&](double s) {
    fs = slope(s);
    ++r.probes;
    return std::isfinite(fs);
  };
  auto not_finite = [&](double s) {
    return failed(r, LineSearchStatus::not_finite, "the slope f'(s) is " + number(fs) + " at step s = " + number(s));
  };

  // Bracket: f'(a) < 0 <= f'(b), judged by the sign of f' alone. A slope of exactly 0 at
  // s > 0 counts as past the minimum: in floating point it is a plateau where every unit
  // has saturated (all derivatives 0) far more often than the minimum itself.
  double a = 0, fa = slope0, b = s0, fb = 0;
  if (!probe(s0)) return not_finite(s0);
  if (fs < 0) {
    // Still going down at s0: double until f' turns.
    double s = s0;
    while (fs < 0) {
      a = s, fa = fs;
      if (r.expansions == config.max_expansions || !std::isfinite(2 * s)) {
        r.lower = a;
        return failed(r, LineSearchStatus::no_bracket,
                      "no minimum along the direction: f'(s) is still negative at s = " + number(s) + " after " +
                          std::to_string(r.expansions) + " doublings of s (raise --cg-expansions or --cg-step)");
      }
      s *= 2;
      ++r.expansions;
      if (!probe(s)) return not_finite(s);
    }
    b = s, fb = fs;
  } else {
    // s0 is already past the minimum: halve while the probe stays past it, so that the
    // bracket is [s, 2 s] rather than [0, s0] when s0 overshoots by far. If halving runs
    // out, [0, b] is still a bracket, f'(0) being negative.
    fb = fs;
    while (r.expansions < config.max_expansions) {
      const double half = b / 2;
      ++r.expansions;
      if (!probe(half)) return not_finite(half);
      if (fs < 0) {
        a = half, fa = fs;
        break;
      }
      b = half, fb = fs;
    }
  }

  // Refine: the zero of the secant of f' through the bracket's ends; all but the last
  // interpolated step are probed and replace the end of the bracket with the same sign.
  const int refinements = std::max(1, config.refinements);
  for (int i = 1;; ++i) {
    // fb - fa > 0, so a < s <= b; s = b only when f'(b) = 0, a plateau as likely as the
    // minimum (above), and then the middle of the bracket is the safer guess.
    double s = a - fa * (b - a) / (fb - fa);
    if (fb == 0) s = a + (b - a) / 2;
    if (i >= refinements) {
      r.step = s;
      break;
    }
    if (!probe(s)) return not_finite(s);
    if (fs < 0)
      a = s, fa = fs;
    else
      b = s, fb = fs;
  }
  r.lower = a, r.upper = b;
  return r;
}

namespace {

template <class T>
double dot(const T* x, const T* y, std::size_t n) {
  return dot_in_order(std::span<const T>(x, n), std::span<const T>(y, n));
}

}  // namespace

template <class T>
typename PolakRibiere<T>::Update PolakRibiere<T>::next(std::span<const T> g_span) {
  const auto n = static_cast<Eigen::Index>(g_span.size());
  Eigen::Map<const Vector> g(g_span.data(), n);
  const std::size_t count = g_span.size();
  Update u;
  const bool first = g_prev_.size() != n || d_.size() != n;
  if (!first) {
    const double gp_gp = dot(g_prev_.data(), g_prev_.data(), count);
    if (gp_gp > 0) {
      // g . (g - g_prev), term by term in double.
      double num = 0;
      for (std::size_t i = 0; i < count; ++i)
        num += static_cast<double>(g_span[i]) * (static_cast<double>(g_span[i]) - static_cast<double>(g_prev_[i]));
      u.beta = std::max(0.0, num / gp_gp);
    }
  }
  if (u.beta > 0) {
    d_ = -g + static_cast<T>(u.beta) * d_;
    u.slope = dot(g_span.data(), d_.data(), count);
    if (!(u.slope < 0)) u.beta = 0;  // not downhill: start again from steepest descent
  }
  if (u.beta == 0) {
    d_ = -g;
    u.slope = dot(g_span.data(), d_.data(), count);
  }
  u.restarted = !first && u.beta == 0;
  g_prev_ = g;
  return u;
}

template class PolakRibiere<float>;
template class PolakRibiere<double>;

CgRun minimize(Objective& f, Eigen::VectorXd& w, const CgConfig& config, int max_iterations,
               double gradient_tolerance) {
  const Eigen::Index n = w.size();
  Eigen::VectorXd g(n), probe_g(n), probe_w(n);
  CgRun run;
  run.value = f.evaluate(w, g);
  PolakRibiere<double> pr;
  double s0 = config.initial_step;
  while (run.iterations < max_iterations && g.norm() > gradient_tolerance) {
    const auto u = pr.next(std::span<const double>(g.data(), static_cast<std::size_t>(n)));
    run.restarts += u.restarted;
    const Eigen::Map<const Eigen::VectorXd> d(pr.direction().data(), n);
    const SlopeFn slope = [&](double s) {
      probe_w = w + s * d;
      f.evaluate(probe_w, probe_g);
      return probe_g.dot(d);
    };
    const LineSearchResult ls = line_search(u.slope, s0, slope, config);
    run.probes += ls.probes;
    if (ls.status != LineSearchStatus::ok) {
      run.status = ls.status;
      run.detail = ls.detail;
      break;
    }
    w += ls.step * d;
    s0 = ls.step;
    run.value = f.evaluate(w, g);
    ++run.iterations;
  }
  run.converged = g.norm() <= gradient_tolerance;
  return run;
}

}  // namespace wulf
