#include "predict/model.hpp"
#include "util/errors.hpp"

#include "data/dataset.hpp"

#include <cmath>

namespace wulf {

ModelConstants model_constants(const Profile& p, double n, double m, double w) {
  ModelConstants c;
  c.Tf = p.Tf, c.Tb = p.Tb, c.Tu = p.Tu, c.Tm = p.Tm, c.Ts = p.Ts, c.To = p.To;
  c.Ti = p.Ti, c.Tw = p.Tw, c.Ta = p.Ta;
  c.n = n > 0 ? n : p.n;
  c.m = m > 0 ? m : p.m;
  c.w = w > 0 ? w : p.w;
  if (!p.has_ti_tw) throw InputError("--profile " + p.name + ": the model needs Ti_us and Tw_us (seed 000 Table V)");
  if (!(c.n > 0) || !(c.w > 0) || c.m < 0)
    throw InputError("--profile " + p.name + ": the model needs the problem's n and w (give --n, --m, --w)");
  return c;
}

double model_allreduce(const ModelConstants& c, int p) {
  return c.Tw * c.w * std::ceil(std::log2(static_cast<double>(p))) + c.Ti;
}

double model_sequential(const ModelConstants& c, double b) {
  return (c.n + c.m) * c.Tf + c.n * c.Tb + c.n / b * (c.Tu + c.Tm) + c.m * c.Ts + c.To;
}

double model_parallel(const ModelConstants& c, int p, double b) {
  const double pp = static_cast<double>(p);
  return ((c.n + c.m) * c.Tf + c.n * c.Tb + c.m * c.Ts) / pp + c.n / b * (model_allreduce(c, p) + c.Tu) + c.To;
}

double model_speedup(const ModelConstants& c, int p, double b) { return model_sequential(c, b) / model_parallel(c, p, b); }

double model_efficiency(const ModelConstants& c, int p, double b) { return model_speedup(c, p, b) / p; }

double model_averaging(const ModelConstants& c, int p, double b, double a) {
  const double pp = static_cast<double>(p);
  return (c.n + c.m) * c.Tf / pp + c.n * c.Tb / pp + c.n / b * (c.Tu + c.Tm) + c.n / a * (c.Ta + model_allreduce(c, p)) +
         c.m * c.Ts / pp + c.To;
}

LineFit least_squares(const std::vector<double>& x, const std::vector<double>& t) {
  const double n = static_cast<double>(x.size());
  double sx = 0, st = 0, sxx = 0, sxt = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sx += x[i], st += t[i], sxx += x[i] * x[i], sxt += x[i] * t[i];
  const double det = n * sxx - sx * sx;
  if (x.size() < 2 || det <= 0) throw InputError("the allreduce fit needs at least two different w ceil(log2 p)");
  LineFit f;
  f.slope = (n * sxt - sx * st) / det;
  f.intercept = (st - f.slope * sx) / n;
  for (std::size_t i = 0; i < x.size(); ++i) f.residuals.push_back(t[i] - (f.slope * x[i] + f.intercept));
  return f;
}

}  // namespace wulf
