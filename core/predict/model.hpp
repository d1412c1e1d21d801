// Seed 000's run-time model of one iteration (section V-A), for any n, m, w, b, a and p:
//   (3) sequential   Ts(b)    = (n+m) Tf + n Tb + n/b (Tu + Tm) + m Ts + To
//   (4) allreduce    Tr(p)    = Tw w ceil(log2 p) + Ti
//   (5)/(6) parallel Tp(p,b)  = 1/p ((n+m) Tf + n Tb + m Ts) + n/b (Tr(p) + Tu) + To
//   (7) speedup      S(p,b)   = Ts(b) / Tp(p,b)
//   (8) efficiency   E(p,b)   = S(p,b) / p
//   (9) averaging    Ta(p,b,a) = 1/p (n+m) Tf + 1/p n Tb + n/b (Tu + Tm) + n/a (Ta + Tr(p))
//                                + 1/p m Ts + To
// All times in seconds. Equation (9) is written as the paper prints it: the local updates
// are counted n/b times and the averagings n/a times per iteration.
#pragma once

#include "util/errors.hpp"
#include "comm/compute.hpp"

#include <vector>

namespace wulf {

struct ModelConstants {
  double Tf = 0, Tb = 0, Tu = 0, Tm = 0, Ts = 0, To = 0;  // seconds, Tables II/III
  double Ti = 0, Tw = 0;                                  // seconds, Table V
  double Ta = 0;                                          // seconds, eq. (9)
  double n = 0, m = 0, w = 0;                             // Table IV
};

// From a profile; throws InputError naming what the model needs that the profile lacks
// (Ti/Tw, n/m/w), unless given here as overrides (a value > 0 replaces the profile's).
ModelConstants model_constants(const Profile& p, double n = 0, double m = 0, double w = 0);

double model_allreduce(const ModelConstants& c, int p);                        // (4)
double model_sequential(const ModelConstants& c, double b);                    // (3)
double model_parallel(const ModelConstants& c, int p, double b);               // (5), (6)
double model_speedup(const ModelConstants& c, int p, double b);                // (7)
double model_efficiency(const ModelConstants& c, int p, double b);             // (8)
double model_averaging(const ModelConstants& c, int p, double b, double a);    // (9)

// The least-squares line t = slope x + intercept through the points (x[i], t[i]), and each
// point's residual: how seed 000's Table V fits Ti and Tw (x = w ceil(log2 p)). Throws
// InputError with fewer than two different x.
struct LineFit {
  double slope = 0, intercept = 0;
  std::vector<double> residuals;
};
LineFit least_squares(const std::vector<double>& x, const std::vector<double>& t);

// Seed 000's Table VII: the predicted speedup of one iteration of the function example on
// Bat Cave, at p = 2, 4, 8 (rows) and b = 16, 32, 64, 128 (columns).
inline constexpr int kTableVIIProcs[] = {2, 4, 8};
inline constexpr int kTableVIIBlocks[] = {16, 32, 64, 128};
inline constexpr double kTableVII[3][4] = {{0.57, 0.87, 1.20, 1.48}, {0.36, 0.64, 1.09, 1.67}, {0.26, 0.48, 0.88, 1.54}};
// Its Table V: the recursive-doubling allreduce's constants on Bat Cave, seconds.
inline constexpr double kTableVTi = 365.868e-6, kTableVTw = 0.798e-6;

}  // namespace wulf
