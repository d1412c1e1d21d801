# messner-digits: seed 000's measured time constants of the digits example on
# Messner, Table III (Messner), milliseconds (per pattern for Tf, Tb, Ts; per update for Tu, Tm;
# per iteration for To), and Table V's allreduce constants Ti, Tw (microseconds, see
# shared/seeds/README.md). Read by `wulf train --compute calibrated --profile messner-digits`.
Tf_ms = 0.26
Tb_ms = 0.27
Tu_ms = 0.92
Tm_ms = 0.058
Ts_ms = 0.003
To_ms = 40218.1
Ti_us = 515.25
Tw_us = 0.23
# The problem's sizes, seed 000 Table IV: training and test patterns, weights (no bias).
n = 60000
m = 10000
w = 54912
problem = digits
