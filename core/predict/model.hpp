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

}  // namespace wulf
