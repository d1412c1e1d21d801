#include "comm/allreduce_algorithms.hpp"

#include "util/text.hpp"

#include <stdexcept>
#include <vector>

namespace wulf {

namespace {

std::vector<const AllreduceAlgorithm*> rows_of(AllreduceRows rows) {
  std::vector<const AllreduceAlgorithm*> kept;
  for (const AllreduceAlgorithm& a : allreduce_table)
    if (rows == AllreduceRows::all || a.scheduled)
      kept.push_back(&a);
  return kept;
}

}  // namespace

const AllreduceAlgorithm* find_allreduce(std::string_view name) {
  for (const AllreduceAlgorithm& a : allreduce_table)
    if (a.name == name) return &a;
  return nullptr;
}

const AllreduceAlgorithm& allreduce_of(NbAlgorithm schedule) {
  for (const AllreduceAlgorithm& a : allreduce_table)
    if (a.scheduled && a.schedule == schedule) return a;
  throw std::logic_error("allreduce_of: no row runs this schedule");
}

std::string allreduce_names(AllreduceRows rows) {
  std::vector<std::string> names;
  for (const AllreduceAlgorithm* a : rows_of(rows)) names.emplace_back(a->name);
  return listed(names);
}

std::string allreduce_help(AllreduceRows rows) {
  std::vector<std::string> items;
  for (const AllreduceAlgorithm* a : rows_of(rows))
    items.push_back((a->own_only() ? "wulf's own " : "") + std::string(a->name) + " (" + std::string(a->help) + ")");
  return listed(items);
}

}  // namespace wulf
