/* FANN 2.2's RPROP (iRprop-, fann_train_epoch) from given starting weights, for the
 * comparison with wulf train --learning rprop (experiments/rprop-fann/README.md).
 *
 *   fann_rprop TRAIN.data WEIGHTS EPOCHS [TEST.data|-] [WEIGHTS_OUT]
 *
 * WEIGHTS is a wulf weights file (wulf train --epochs 0 --weights-out): its layer sizes
 * make the net, its values become FANN's connection weights. The net is FANN_SIGMOID in
 * every layer (steepness 0.5: 1 / (1 + exp(-x)), as wulf's sigmoid), trained with FANN's
 * defaults for RPROP except the error function, which is set to FANN_ERRORFUNC_LINEAR
 * (wulf's mse loss; FANN's default tanh error function scales the output errors).
 * Prints one CSV line per epoch: epoch, FANN's MSE of the epoch (fann_train_epoch's: measured
 * during the pass, before its one update), the training set's and the test set's MSE after
 * the update (fann_test_data; the test column is empty without a test set); epoch 0 is the
 * starting net. Double precision (doublefann). WEIGHTS_OUT receives the trained weights, one
 * per line in wulf's order (the values of a wulf weights file). */
#include <doublefann.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, const char *detail) {
  fprintf(stderr, "fann_rprop: %s: %s\n", what, detail);
  exit(2);
}

/* Reads a wulf weights file: the layer sizes, whether it has biases, and the values. */
static double *read_weights(const char *path, unsigned *layers, unsigned *n_layers, int *bias, unsigned *count) {
  FILE *f = fopen(path, "r");
  if (!f) die(path, "cannot open it");
  char line[4096];
  double *values = NULL;
  unsigned have = 0;
  int in_values = 0;
  *n_layers = 0, *bias = 1, *count = 0;
  while (fgets(line, sizeof line, f)) {
    if (in_values) {
      if (have == *count) die(path, "more values than its header says");
      values[have++] = strtod(line, NULL);
    } else if (strncmp(line, "layers ", 7) == 0) {
      char *p = line + 7, *end;
      for (unsigned long v; (v = strtoul(p, &end, 10)), end != p; p = end) layers[(*n_layers)++] = (unsigned)v;
    } else if (strncmp(line, "parameters ", 11) == 0) {
      *count = (unsigned)strtoul(line + 11, NULL, 10);
      values = calloc(*count, sizeof *values);
    } else if (strncmp(line, "layout ", 7) == 0) {
      *bias = strstr(line, "no biases") == NULL;
    } else if (strncmp(line, "values", 6) == 0) {
      in_values = 1;
    }
  }
  fclose(f);
  if (!values || have != *count || *n_layers < 2) die(path, "not a whole wulf weights file");
  return values;
}

/* FANN's connection i runs from neuron `from` to neuron `to`, numbered over all layers
 * with each layer's bias neuron last; wulf's buffer holds per layer W (n_l x n_{l-1},
 * column-major) then b. Sets FANN's weights from w (to_fann) or w from FANN's. */
static void map_weights(struct fann *ann, const unsigned *layers, unsigned n_layers, double *w, unsigned count,
                        int to_fann) {
  const unsigned total = fann_get_total_connections(ann);
  struct fann_connection *c = calloc(total, sizeof *c);
  fann_get_connection_array(ann, c);
  unsigned first[64], offset[64], used = 0;  /* first neuron of each layer; wulf offset of layer l */
  for (unsigned l = 0, n = 0; l < n_layers; ++l) first[l] = n, n += layers[l] + 1;
  for (unsigned l = 1; l < n_layers; ++l) offset[l] = used, used += layers[l] * (layers[l - 1] + 1);
  if (used != count) die("weights", "the file's values do not make a net with biases of its layers");
  for (unsigned i = 0; i < total; ++i) {
    unsigned l = 1;
    while (l + 1 < n_layers && c[i].to_neuron >= first[l + 1]) ++l;
    const unsigned j = c[i].to_neuron - first[l], k = c[i].from_neuron - first[l - 1];
    const unsigned at = k == layers[l - 1] ? offset[l] + layers[l] * layers[l - 1] + j  /* bias */
                                           : offset[l] + k * layers[l] + j;
    if (to_fann)
      c[i].weight = w[at];
    else
      w[at] = c[i].weight;
  }
  if (to_fann) fann_set_weight_array(ann, c, total);
  free(c);
}

int main(int argc, char **argv) {
  if (argc < 4 || argc > 6) die("usage", "fann_rprop TRAIN.data WEIGHTS EPOCHS [TEST.data|-] [WEIGHTS_OUT]");
  unsigned layers[64], n_layers, count;
  int bias;
  double *w = read_weights(argv[2], layers, &n_layers, &bias, &count);
  if (!bias) die(argv[2], "FANN nets have biases; save the weights of a net with --bias on");
  struct fann_train_data *train = fann_read_train_from_file(argv[1]);
  const int has_test = argc >= 5 && strcmp(argv[4], "-") != 0;
  struct fann_train_data *test = has_test ? fann_read_train_from_file(argv[4]) : NULL;
  if (!train || (has_test && !test)) die("data", "FANN could not read it");
  struct fann *ann = fann_create_standard_array(n_layers, layers);
  fann_set_activation_function_hidden(ann, FANN_SIGMOID);
  fann_set_activation_function_output(ann, FANN_SIGMOID);
  fann_set_training_algorithm(ann, FANN_TRAIN_RPROP);
  fann_set_train_error_function(ann, FANN_ERRORFUNC_LINEAR);
  map_weights(ann, layers, n_layers, w, count, 1);
  const int epochs = atoi(argv[3]);
  printf("epoch,pass_mse,train_mse,test_mse\n");
  printf("0,,%.9g,", (double)fann_test_data(ann, train));
  if (test) printf("%.9g", (double)fann_test_data(ann, test));
  printf("\n");
  for (int e = 1; e <= epochs; ++e) {
    const double mse = fann_train_epoch(ann, train);
    printf("%d,%.9g,%.9g,", e, mse, (double)fann_test_data(ann, train));
    if (test) printf("%.9g", (double)fann_test_data(ann, test));
    printf("\n");
  }
  if (argc == 6) {
    map_weights(ann, layers, n_layers, w, count, 0);
    FILE *out = fopen(argv[5], "w");
    if (!out) die(argv[5], "cannot write it");
    for (unsigned i = 0; i < count; ++i) fprintf(out, "%.17g\n", w[i]);
    if (fclose(out) != 0) die(argv[5], "cannot write it");
  }
  fann_destroy(ann);
  fann_destroy_train(train);
  if (test) fann_destroy_train(test);
  free(w);
  return 0;
}
