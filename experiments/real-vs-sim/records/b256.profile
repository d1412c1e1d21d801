# this-machine-b256-digits:20x20: wulf calibrate on this-machine-b256, 20 iterations of digits:20x20 (b 256, float, bias off) and the allreduce over mpirun.
# Tm is 0: wulf's momentum step keeps dw and updates w in one pass, counted in Tu.
Tf_ms = 0.000529796492
Tb_ms = 0.000316934343
Tu_ms = 0.00179269553
Tm_ms = 0
Ts_ms = -0.000132985817
To_ms = 0.290907035
Ti_us = 5.42815
Tw_us = 0.00854463554
n = 60000
m = 10000
w = 10250
problem = digits:20x20
precision = float
