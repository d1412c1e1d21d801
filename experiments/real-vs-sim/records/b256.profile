# this-machine-b256-digits:20x20: wulf calibrate on this-machine-b256, 20 iterations of digits:20x20 (b 256, float, bias off) and the allreduce over mpirun.
# Tm is 0: wulf's momentum step keeps dw and updates w in one pass, counted in Tu.
Tf_ms = 0.000486403107
Tb_ms = 0.000314630158
Tu_ms = 0.00185516851
Tm_ms = 0
Ts_ms = -0.000111026975
To_ms = 0.377372309
Ti_us = 15.4239
Tw_us = 0.00901734355
n = 60000
m = 10000
w = 10250
problem = digits:20x20
precision = float
