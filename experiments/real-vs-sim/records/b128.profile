# this-machine-b128-digits:20x20: wulf calibrate on this-machine-b128, 20 iterations of digits:20x20 (b 128, float, bias off) and the allreduce over mpirun.
# Tm is 0: wulf's momentum step keeps dw and updates w in one pass, counted in Tu.
Tf_ms = 0.000901732606
Tb_ms = 0.000576889353
Tu_ms = 0.0027160887
Tm_ms = 0
Ts_ms = -0.000143314509
To_ms = 0.762077908
Ti_us = 7.25345
Tw_us = 0.00879404321
n = 60000
m = 10000
w = 10250
problem = digits:20x20
precision = float
