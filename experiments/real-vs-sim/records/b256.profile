# this-machine-b256-digits:20x20: wulf calibrate on this-machine-b256, 20 iterations of digits:20x20 (b 256, float, bias off) and the allreduce over mpirun.
# Tm is 0: wulf's momentum step keeps dw and updates w in one pass, counted in Tu.
Tf_ms = 0.000821801935
Tb_ms = 0.000459502093
Tu_ms = 0.00352597043
Tm_ms = 0
Ts_ms = -0.000233658567
To_ms = 0.308584153
Ti_us = 3.715975
Tw_us = 0.00960159512
n = 60000
m = 10000
w = 10250
problem = digits:20x20
precision = float
