# messner-encoder: seed 000's measured time constants of the encoder example on
# Messner, Table III (Messner), milliseconds (per pattern for Tf, Tb, Ts; per update for Tu, Tm;
# per iteration for To), and Table V's allreduce constants Ti, Tw (microseconds, see
# shared/seeds/README.md). Read by `wulf train --compute calibrated --profile messner-encoder`.
Tf_ms = 0.07
Tb_ms = 0.09
Tu_ms = 0.01
Tm_ms = 0.001
Ts_ms = 0.013
To_ms = 9.4
Ti_us = 515.25
Tw_us = 0.23
# The problem's sizes, seed 000 Table IV: training and test patterns, weights (no bias).
n = 256
m = 0
w = 4096
problem = encoder
