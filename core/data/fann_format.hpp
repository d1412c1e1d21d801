// FANN's plain-text data format, as read by fann_read_train_from_file: a header
// "num_patterns num_inputs num_outputs", then for each pattern its inputs and its outputs
// (FANN writes the header on a line of its own and each pattern on two; like FANN's reader,
// any whitespace separates numbers here, the header's included).
#pragma once

#include "util/errors.hpp"
#include "data/dataset.hpp"

#include <string>
#include <vector>

namespace wulf {

// Labels are left empty: the format does not say whether a set is a classifier. Throws
// InputError naming the file for: a file that cannot be opened; a header that is not three
// non-negative integers; a zero count; a token that is not a finite float (with its line);
// more or fewer numbers than the header promises.
// target_lines, if given, gets the line of each pattern's first target (for messages about
// a pattern's targets).
Dataset read_fann(const std::string& path, std::vector<int>* target_lines = nullptr);

// Writes inputs on one line and outputs on the next with %.9g, which round-trips any float.
// The file appears whole or not at all (write_file_atomically). Throws
// InputError if the file cannot be written or the set could not be read back (no patterns,
// inputs or outputs, or a non-finite value).
void write_fann(const std::string& path, const Dataset& d);

}  // namespace wulf
