# this-machine-b128-digits:20x20: wulf calibrate on this-machine-b128, 20 iterations of digits:20x20 (b 128, float, bias off) and the allreduce over mpirun.
# Tm is 0: wulf's momentum step keeps dw and updates w in one pass, counted in Tu.
Tf_ms = 0.000489299685
Tb_ms = 0.000310229592
Tu_ms = 0.00160803955
Tm_ms = 0
Ts_ms = -8.01827921e-05
To_ms = 0.473390631
Ti_us = 5.597025
Tw_us = 0.00249443693
n = 60000
m = 10000
w = 10250
problem = digits:20x20
precision = float
