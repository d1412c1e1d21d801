# batcave-encoder: seed 000's measured time constants of the encoder example on
# Batcave, Table II (Bat Cave), milliseconds (per pattern for Tf, Tb, Ts; per update for Tu, Tm;
# per iteration for To), and Table V's allreduce constants Ti, Tw (microseconds, see
# shared/seeds/README.md). Read by `wulf train --compute calibrated --profile batcave-encoder`.
Tf_ms = 0.12
Tb_ms = 0.16
Tu_ms = 0.01
Tm_ms = 0.01
Ts_ms = 0.023
To_ms = 28.4
Ti_us = 365.868
Tw_us = 0.798
# The problem's sizes, seed 000 Table IV: training and test patterns, weights (no bias).
n = 256
m = 0
w = 4096
problem = encoder
