# messner-function: seed 000's measured time constants of the function example on
# Messner, Table III (Messner), milliseconds (per pattern for Tf, Tb, Ts; per update for Tu, Tm;
# per iteration for To), and Table V's allreduce constants Ti, Tw (microseconds, see
# shared/seeds/README.md). Read by `wulf train --compute calibrated --profile messner-function`.
Tf_ms = 0.12
Tb_ms = 0.2
Tu_ms = 0.03
Tm_ms = 0.003
Ts_ms = 0.002
To_ms = 17.7
Ti_us = 515.25
Tw_us = 0.23
# The problem's sizes, seed 000 Table IV: training and test patterns, weights (no bias).
n = 1024
m = 128
w = 16768
problem = function
