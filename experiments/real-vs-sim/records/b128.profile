# this-machine-b128-digits:20x20: wulf calibrate on this-machine-b128, 20 iterations of digits:20x20 (b 128, float, bias off) and the allreduce over mpirun.
# Tm is 0: wulf's momentum step keeps dw and updates w in one pass, counted in Tu.
Tf_ms = 0.000476775786
Tb_ms = 0.000315990473
Tu_ms = 0.00161601226
Tm_ms = 0
Ts_ms = -0.000105643068
To_ms = 0.361971324
Ti_us = 6.932375
Tw_us = 0.00886849965
n = 60000
m = 10000
w = 10250
problem = digits:20x20
precision = float
