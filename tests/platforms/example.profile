# A calibration profile for wulf's tests (--compute calibrated): seed 000's per-pattern
# phase times in milliseconds, here Table II's Bat Cave row for the function example.
Tf_ms = 0.22   # forward pass, per pattern
Tb_ms = 0.41   # backward pass, per pattern
Tu_ms = 0.07   # weight update, per update
Tm_ms = 0.04   # copy of the weights for momentum, per update (sequential program only)
Ts_ms = 0.001  # error of a test pattern, per pattern
To_ms = 30.9   # overhead, per iteration
