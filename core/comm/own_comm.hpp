// The communicator the strategies see when a run's reduce, broadcast or gather is wulf's own
// (comm/staged_reduce, comm/tree_collectives): those calls are made of point-to-point
// messages, everything else is the wrapped communicator's. Those messages travel on a
// duplicate of the wrapped communicator (Comm::duplicate_for_schedules), as an MPI library's
// collectives keep a context of their own: a strategy's receive from any source (cg's
// master) never takes a message of a collective that a rank further on has already entered.
#pragma once

#include "comm/comm.hpp"
#include "comm/nb_allreduce.hpp"
#include "comm/staged_reduce.hpp"
#include "comm/tree_collectives.hpp"

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace wulf {

// A run's choices of reduce, bcast and gather, by the names of --reduce and --bcast and the
// gather's algorithm; those that are not wulf's own leave the call to the MPI library.
// The allreduce is wulf's own where it is hierarchical or hierarchical-rabenseifner (over
// rank_nodes) or rings (over rank_rings) (comm/nb_allreduce), and redbcast where
// composed_redbcast says so (redbcast_runs_the_runs).
struct OwnCollectives {
  std::string reduce = "default", bcast = "default", gather = "default";
  std::string allreduce = "default";
  std::vector<int> rank_nodes{};  // hierarchical's layout: rank r's node at r
  std::vector<std::vector<int>> rank_rings{};  // rings': each ring's ranks in order
  // redbcast as the run's reduce to rank 0, then its bcast from rank 0 (each wulf's own or the
  // library's, as the run chose them), in place of the library's own redbcast.
  bool composed_redbcast = false;
  bool own_allreduce() const { return is_own_blocking_allreduce(allreduce); }
  bool any() const {
    return is_point_to_point_reduce(reduce) || is_own_bcast(bcast) || is_own_gather(gather) || own_allreduce() ||
           composed_redbcast;
  }
};

// Whether Open MPI's redbcast under mpirun runs the run's reduce and bcast: its
// nonoverlapping allreduce calls the communicator's reduce to rank 0 and bcast from rank 0,
// which run the algorithms forced on coll_tuned, so both must be Open MPI's (a number to
// force: every bcast wulf runs, every reduce but wulf's own wulf-binomial and four-stage;
// test collective_choice.redbcast_runs_the_runs_where_both_have_open_mpis_number); where
// the reduce is wulf's own only, or a run leaves them to the library (default), Open MPI
// runs its own choice inside. SMPI's redbcast calls SMPI's reduce and bcast, its default
// ones where the run's are wulf's (its default reduce: the root receives from every rank at
// once), so under smpirun wulf composes redbcast of the run's two where this holds.
inline bool redbcast_runs_the_runs(std::string_view reduce, std::string_view bcast) {
  return reduce != "default" && bcast != "default" && reduce != "wulf-binomial" && reduce != "four-stage";
}

class OwnCollectivesComm final : public Comm {
 public:
  // layout: four-stage's; scratch: where the reduces of unread data receive
  // (PointToPointReduce::set_unread_storage).
  OwnCollectivesComm(Comm& inner, const OwnCollectives& own, ReduceLayout layout,
                     PointToPointReduce::ScratchSource scratch = {})
      : inner_(inner),
        own_(inner.duplicate_for_schedules()),
        bcast_tree_(own_bcast_tree(own.bcast)),
        scatter_allgather_(own.bcast == "scatter-allgather"),
        split_bintree_(own.bcast == "split-bintree"),
        own_gather_(is_own_gather(own.gather)),
        own_allreduce_(own.own_allreduce()),
        composed_redbcast_(own.composed_redbcast),
        allreduce_(own_allreduce_ ? parse_nb_algorithm(own.allreduce, "--allreduce") : NbAlgorithm::ring),
        layout_{own.rank_nodes, own.rank_rings},
        unread_scratch_(scratch) {
    if (is_point_to_point_reduce(own.reduce))
      reduce_.emplace(*own_, own.reduce, std::move(layout), std::move(scratch));
  }
  // The reducer of wulf's own reduce; nullptr where the reduce is the library's.
  const PointToPointReduce* reducer() const { return reduce_ ? &*reduce_ : nullptr; }

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  double now() const override { return inner_.now(); }
  void set_time_dilation(double d) override {
    inner_.set_time_dilation(d);
    own_->set_time_dilation(d);
  }
  void set_unread_storage(const void* begin, std::size_t bytes) override {
    inner_.set_unread_storage(begin, bytes);
    own_->set_unread_storage(begin, bytes);
    if (reduce_) reduce_->set_unread_storage(begin, bytes);
    unread_.set(begin, bytes);
  }
  void barrier() override { inner_.barrier(); }
  void allreduce_sum(std::span<float> d) override { allreduce(d); }
  void allreduce_sum(std::span<double> d) override { allreduce(d); }
  std::span<float> allreduce_sum_anywhere(std::span<float> d) override {
    if (own_allreduce_ || composed_redbcast_) return allreduce(d), d;
    return inner_.allreduce_sum_anywhere(d);
  }
  std::span<double> allreduce_sum_anywhere(std::span<double> d) override {
    if (own_allreduce_ || composed_redbcast_) return allreduce(d), d;
    return inner_.allreduce_sum_anywhere(d);
  }
  void lend_spare_storage(void* begin, std::size_t bytes) override { inner_.lend_spare_storage(begin, bytes); }
  void reduce_sum(std::span<float> d, int root) override { reduce(d, root); }
  void reduce_sum(std::span<double> d, int root) override { reduce(d, root); }
  void bcast(std::span<float> d, int root) override { bcast_(d, root); }
  void bcast(std::span<double> d, int root) override { bcast_(d, root); }
  void allgather(std::span<const float> s, std::span<float> r) override { inner_.allgather(s, r); }
  void allgather(std::span<const double> s, std::span<double> r) override { inner_.allgather(s, r); }
  void gather(std::span<const double> s, std::span<double> r, int root) override { gather_(s, r, root); }
  void gather(std::span<const float> s, std::span<float> r, int root) override { gather_(s, r, root); }
  void scatter(std::span<const float> s, std::span<float> r, int root) override { inner_.scatter(s, r, root); }
  void scatterv(std::span<const float> s, std::span<const int> c, std::span<float> r, int root) override {
    inner_.scatterv(s, c, r, root);
  }
  void send(std::span<const float> d, int dest) override { inner_.send(d, dest); }
  void send(std::span<const double> d, int dest) override { inner_.send(d, dest); }
  int recv(std::span<float> d, int source) override { return inner_.recv(d, source); }
  int recv(std::span<double> d, int source) override { return inner_.recv(d, source); }
  void recv_all(std::span<const std::span<float>> d, std::span<const int> s) override { inner_.recv_all(d, s); }
  void recv_all(std::span<const std::span<double>> d, std::span<const int> s) override { inner_.recv_all(d, s); }
  int irecv(std::span<float> d, int source, int tag) override { return inner_.irecv(d, source, tag); }
  int irecv(std::span<double> d, int source, int tag) override { return inner_.irecv(d, source, tag); }
  std::size_t wait(int ticket) override { return inner_.wait(ticket); }
  void send_all(std::span<const float> d, std::span<const int> dests) override { inner_.send_all(d, dests); }
  void send_all(std::span<const double> d, std::span<const int> dests) override { inner_.send_all(d, dests); }
  int isend(std::span<const float> d, int dest, int tag) override { return inner_.isend(d, dest, tag); }
  int isend(std::span<const double> d, int dest, int tag) override { return inner_.isend(d, dest, tag); }
  bool test(int ticket) override { return inner_.test(ticket); }
  std::unique_ptr<Comm> split(int color, int key) override { return inner_.split(color, key); }
  std::unique_ptr<Comm> duplicate_for_schedules() override { return inner_.duplicate_for_schedules(); }
  void set_sim_messages(SimMessages how, std::size_t handshake_bytes) override {
    inner_.set_sim_messages(how, handshake_bytes);
  }
  std::vector<std::string> hosts() override { return inner_.hosts(); }
  [[noreturn]] void abort(const std::string& message, int code) override {
    inner_.abort(message, code);
    std::terminate();  // not reached: abort does not return
  }

 private:
  // The hierarchical allreduce of one value type: its schedule, made once for a count (a
  // strategy sums the same gradient block after block), and what its steps receive.
  template <class T>
  struct OwnSum {
    std::unique_ptr<NbAllreduce<T>> sum;
    std::size_t n = 0;
    bool add = false;
    T* shared = nullptr;  // the scratch source's, or none: scratch
    std::vector<T> scratch;
  };
  // The hierarchical allreduce, blocking: its schedule started and waited out at once. Sums
  // nobody reads (--numerics off) receive into the scratch source's memory, which simulated
  // ranks share, as wulf's reduces do.
  template <class T>
  void allreduce(std::span<T> d) {
    if (composed_redbcast_) {  // as Open MPI's nonoverlapping: MPI_IN_PLACE at every rank
      reduce(d, 0);
      return bcast_(d, 0);
    }
    if (!own_allreduce_) return inner_.allreduce_sum(d);
    OwnSum<T>& own = own_sum<T>();
    const bool add = !unread_.holds(d.data(), d.size_bytes());
    if (!own.sum || own.n != d.size() || own.add != add) {
      own.sum = std::make_unique<NbAllreduce<T>>(*own_, allreduce_, d.size(), add, 1, layout_);
      own.n = d.size(), own.add = add;
      own.shared = nullptr;
      if (!add && unread_scratch_) own.shared = static_cast<T*>(unread_scratch_(own.sum->scratch_values() * sizeof(T)));
      own.scratch.assign(own.shared ? 0 : own.sum->scratch_values(), T(0));
    }
    own.sum->start(d, own.shared ? std::span<T>(own.shared, own.sum->scratch_values()) : std::span<T>(own.scratch));
    own.sum->finish();
  }
  template <class T>
  OwnSum<T>& own_sum() {
    if constexpr (std::is_same_v<T, float>) return sum_float_;
    else return sum_double_;
  }
  template <class T>
  void reduce(std::span<T> d, int root) {
    if (reduce_) return reduce_->reduce_sum(d, root);
    inner_.reduce_sum(d, root);
  }
  template <class T>
  void bcast_(std::span<T> d, int root) {
    if (bcast_tree_ && size() > 1) return tree_bcast(*own_, d, root, *bcast_tree_);
    if (scatter_allgather_) return scatter_allgather_bcast(*own_, d, root);
    if (split_bintree_) return split_bintree_bcast(*own_, d, root);
    inner_.bcast(d, root);
  }
  template <class T>
  void gather_(std::span<const T> s, std::span<T> r, int root) {
    if (own_gather_) return linear_sync_gather(*own_, s, r, root);
    inner_.gather(s, r, root);
  }

  Comm& inner_;
  std::unique_ptr<Comm> own_;                 // the duplicate the own collectives' messages use
  std::optional<PointToPointReduce> reduce_;  // wulf's own reduce, or none: the library's
  const Tree* bcast_tree_;                    // wulf's own bcast's tree, or none
  bool scatter_allgather_;                    // or its scatter-allgather
  bool split_bintree_;                        // or its split binary tree
  bool own_gather_;
  bool own_allreduce_;                        // a hierarchical allreduce, or the library's
  bool composed_redbcast_;                    // redbcast as reduce_sum, then bcast
  NbAlgorithm allreduce_;                     // which, where it is wulf's own
  NbLayout layout_;
  UnreadRange unread_;
  PointToPointReduce::ScratchSource unread_scratch_;
  OwnSum<float> sum_float_;
  OwnSum<double> sum_double_;
};

}  // namespace wulf


