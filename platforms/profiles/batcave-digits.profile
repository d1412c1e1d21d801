# batcave-digits: seed 000's measured time constants of the digits example on
# Batcave, Table II (Bat Cave), milliseconds (per pattern for Tf, Tb, Ts; per update for Tu, Tm;
# per iteration for To), and Table V's allreduce constants Ti, Tw (microseconds, see
# shared/seeds/README.md). Read by `wulf train --compute calibrated --profile batcave-digits`.
Tf_ms = 1.37
Tb_ms = 1.33
Tu_ms = 0.66
Tm_ms = 0.22
Ts_ms = 0.003
To_ms = 314529.2
Ti_us = 365.868
Tw_us = 0.798
# The problem's sizes, seed 000 Table IV: training and test patterns, weights (no bias).
n = 60000
m = 10000
w = 54912
problem = digits
