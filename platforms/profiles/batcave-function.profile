# batcave-function: seed 000's measured time constants of the function example on
# Batcave, Table II (Bat Cave), milliseconds (per pattern for Tf, Tb, Ts; per update for Tu, Tm;
# per iteration for To), and Table V's allreduce constants Ti, Tw (microseconds, see
# shared/seeds/README.md). Read by `wulf train --compute calibrated --profile batcave-function`.
Tf_ms = 0.22
Tb_ms = 0.41
Tu_ms = 0.07
Tm_ms = 0.04
Ts_ms = 0.001
To_ms = 30.9
Ti_us = 365.868
Tw_us = 0.798
# The problem's sizes, seed 000 Table IV: training and test patterns, weights (no bias).
n = 1024
m = 128
w = 16768
problem = function
