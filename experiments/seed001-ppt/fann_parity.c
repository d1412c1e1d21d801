/* FANN's own speed on seed 001's net: 8-100-1 sigmoid, learning rate 0.1, momentum 0.3,
 * trained on FANN's parity8.train (256 patterns) incrementally and in batch, as seed 001's
 * code did with FANN. Prints microseconds per trained pattern on this machine.
 *   gcc -O2 fann_parity.c -o /tmp/fann_parity -lfann -lm && /tmp/fann_parity [epochs]
 * (Debian's libfann-dev: -lfann is floatfann, single precision.) */
#include <fann.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
  const unsigned epochs = argc > 1 ? (unsigned)atoi(argv[1]) : 2000;
  struct fann_train_data *data =
      fann_read_train_from_file("/usr/share/doc/libfann-dev/examples/datasets/parity8.train");
  if (!data) return 1;
  const enum fann_train_enum algorithms[] = {FANN_TRAIN_INCREMENTAL, FANN_TRAIN_BATCH};
  const char *names[] = {"incremental", "batch"};
  for (int a = 0; a < 2; ++a) {
    struct fann *ann = fann_create_standard(3, 8, 100, 1);
    fann_set_activation_function_hidden(ann, FANN_SIGMOID);
    fann_set_activation_function_output(ann, FANN_SIGMOID);
    fann_set_training_algorithm(ann, algorithms[a]);
    fann_set_learning_rate(ann, 0.1f);
    fann_set_learning_momentum(ann, 0.3f);
    fann_randomize_weights(ann, -2, 2);
    const double t0 = now();
    float mse = 0;
    for (unsigned e = 0; e < epochs; ++e) mse = fann_train_epoch(ann, data);
    const double s = now() - t0;
    printf("FANN %-11s %u epochs x %u patterns: %.3f s, %.2f us per pattern (%u weights, MSE %.4f)\n", names[a],
           epochs, fann_length_train_data(data), s, 1e6 * s / ((double)epochs * fann_length_train_data(data)),
           fann_get_total_connections(ann), mse);
    fann_destroy(ann);
  }
  fann_destroy_train(data);
  return 0;
}
