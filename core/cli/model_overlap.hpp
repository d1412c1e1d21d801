// `wulf model --overlap` (cli/model_overlap.cpp): its options, their scope, the command.
#pragma once

#include <boost/program_options.hpp>

#include <ostream>

namespace wulf {

boost::program_options::options_description model_overlap_options();
// Refuses an --overlap option given without --overlap.
void check_overlap_scope(const boost::program_options::variables_map& vm);
int overlap_model_command(const boost::program_options::variables_map& vm, std::ostream& out);

}  // namespace wulf
