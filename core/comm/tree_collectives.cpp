#include "comm/tree_collectives.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <utility>

namespace wulf {

namespace {

int lowest_bit(int v) { return v & -v; }
int highest_bit(int v) {
  int b = 1;
  while (b <= v / 2) b <<= 1;
  return b;
}

// The links over shifted ranks v (root 0); tree_links shifts them back.
TreeLinks shifted_links(Tree tree, int v, int p) {
  TreeLinks t;
  switch (tree) {
    case Tree::chain:
      if (v > 0) t.parent = v - 1;
      if (v + 1 < p) t.children.push_back(v + 1);
      break;
    case Tree::binary: {
      // v's level L holds 2^L - 1 .. 2^(L+1) - 2; its children lie 2^L and 2^(L+1) on.
      int delta = 1;
      while (v >= 2 * delta - 1) delta *= 2;
      for (const int child : {v + delta, v + 2 * delta})
        if (child < p) t.children.push_back(child);
      // Of v - delta/2 and v - delta, the parent is the one on the level above.
      if (v > 0) t.parent = v - delta / 2 <= delta - 2 ? v - delta / 2 : v - delta;
      break;
    }
    case Tree::binomial:
      if (v > 0) t.parent = v - highest_bit(v);
      for (int m = v == 0 ? 1 : 2 * highest_bit(v); v + m < p; m *= 2) t.children.push_back(v + m);
      break;
    case Tree::in_order_binomial:
      if (v > 0) t.parent = v - lowest_bit(v);
      for (int m = 1; (v == 0 || m < lowest_bit(v)) && v + m < p; m *= 2) t.children.push_back(v + m);
      break;
    case Tree::knomial: {
      constexpr int radix = 4;
      int span = 1;  // the largest power of the radix that divides v (all of them at the root)
      while (span < p && (v % (span * radix)) == 0) span *= radix;
      if (v > 0) t.parent = v / (span * radix) * (span * radix);
      for (int m = span / radix; m > 0; m /= radix)
        for (int j = 1; j < radix; ++j)
          if (v + m * j < p) t.children.push_back(v + m * j);
      break;
    }
  }
  return t;
}

}  // namespace

template <class T>
void add_into(std::span<T> data, const T* from) {
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  const auto n = static_cast<Eigen::Index>(data.size());
  Eigen::Map<Array>(data.data(), n) += Eigen::Map<const Array>(from, n);
}

TreeLinks tree_links(Tree tree, int rank, int size, int root) {
  const auto unshift = [&](int v) { return (v + root) % size; };
  TreeLinks t = shifted_links(tree, (rank - root + size) % size, size);
  if (t.parent >= 0) t.parent = unshift(t.parent);
  for (int& c : t.children) c = unshift(c);
  return t;
}

namespace {

constexpr std::array<std::pair<std::string_view, Tree>, 5> bcast_trees{{
    {"chain", Tree::chain}, {"pipeline", Tree::chain}, {"bintree", Tree::binary},
    {"binomial", Tree::binomial}, {"knomial", Tree::knomial},
}};
constexpr std::array<std::pair<std::string_view, Tree>, 4> reduce_trees{{
    {"chain", Tree::chain}, {"pipeline", Tree::chain}, {"binary", Tree::binary}, {"binomial", Tree::in_order_binomial},
}};

template <std::size_t N>
const Tree* tree_named(const std::array<std::pair<std::string_view, Tree>, N>& trees, std::string_view name) {
  for (const auto& [n, tree] : trees)
    if (n == name) return &tree;
  return nullptr;
}

}  // namespace

const Tree* own_bcast_tree(std::string_view name) { return tree_named(bcast_trees, name); }
const Tree* own_reduce_tree(std::string_view name) { return tree_named(reduce_trees, name); }
bool is_own_bcast(std::string_view name) {
  return own_bcast_tree(name) || name == "scatter-allgather" || name == "split-bintree";
}
bool is_own_gather(std::string_view name) { return name == "linear-sync"; }

template <class T>
void tree_bcast(Comm& comm, std::span<T> data, int root, Tree tree) {
  const TreeLinks t = tree_links(tree, comm.rank(), comm.size(), root);
  if (t.parent >= 0) comm.recv(data, t.parent);
  comm.send_all(std::span<const T>(data), t.children);
}

template <class T>
void scatter_allgather_bcast(Comm& comm, std::span<T> data, int root) {
  const int p = comm.size(), rank = comm.rank();
  const long long n = static_cast<long long>(data.size());
  if (p < 2) return;
  if (n < p) {
    std::vector<int> others;
    for (int r = 0; r < p; ++r)
      if (r != root) others.push_back(r);
    if (rank == root) return comm.send_all(std::span<const T>(data), others);
    comm.recv(data, root);
    return;
  }
  const int v = (rank - root + p) % p;
  const long long s = (n + p - 1) / p;  // the values of each rank's block
  const auto part = [&](long long from, long long count) {
    from = std::min(from, n);
    return data.subspan(static_cast<std::size_t>(from), static_cast<std::size_t>(std::clamp(count, 0LL, n - from)));
  };
  const auto receive = [&](long long from, long long count, int source) {
    return static_cast<long long>(comm.wait(comm.irecv(part(from, count), source)));
  };
  const auto exchange = [&](long long send_from, long long send_count, long long recv_from, long long recv_count,
                            int peer) {  // Open MPI's sendrecv: the receive posted first
    const int ticket = comm.irecv(part(recv_from, recv_count), peer);
    comm.send(std::span<const T>(part(send_from, send_count)), peer);
    return static_cast<long long>(comm.wait(ticket));
  };
  const auto round_down = [](int a, int b) { return a / b * b; };

  // The scatter: v's block and those of the ranks below it in the tree come from its parent.
  long long curr = rank == root ? n : 0;
  int mask = 1;
  for (; mask < p; mask <<= 1)
    if (v & mask) {
      curr = n - v * s <= 0 ? 0 : receive(v * s, n - v * s, (rank - mask + p) % p);
      break;
    }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    const long long count = curr - s * mask;
    if (v + mask < p && count > 0) {
      comm.send(std::span<const T>(part(s * (v + mask), count)), (rank + mask) % p);
      curr -= count;
    }
  }

  // The allgather: in round `mask`, v and v ^ mask swap the blocks each holds.
  curr = std::clamp(n - v * s, 0LL, s);
  // The values of the last receive, which the halving passes on; before any, Open MPI's
  // variable holds the scatter's bound.
  long long got = v == 0 ? 0 : n - v * s;
  for (mask = 1; mask < p; mask <<= 1) {
    const int vremote = v ^ mask;
    const int tree = round_down(v, mask), remote_tree = round_down(vremote, mask);
    if (vremote < p) {
      got = exchange(tree * s, curr, remote_tree * s, n - remote_tree * s, (vremote + root) % p);
      curr += got;
    }
    if (remote_tree + mask > p) {  // the partner's group is missing: halving within v's
      const int alldata = p - tree - mask;
      const long long offset = s * (tree + mask);
      for (int half = mask >> 1; half > 0; half >>= 1) {
        const int vpeer = v ^ half, peer = (vpeer + root) % p;
        const int half_tree = round_down(v, half << 1);
        if (vpeer > v && v < half_tree + alldata && vpeer >= half_tree + alldata) {
          comm.send(std::span<const T>(part(offset, got)), peer);
        } else if (vpeer < v && vpeer < half_tree + alldata && v >= half_tree + alldata) {
          got = receive(offset, n - offset, peer);
          curr += got;
        }
      }
    }
  }
}

template <class T>
void split_bintree_bcast(Comm& comm, std::span<T> data, int root) {
  const int p = comm.size(), rank = comm.rank();
  if (p < 2) return;
  const std::size_t first = (data.size() + 1) / 2;
  const std::array<std::span<T>, 2> half{data.first(first), data.subspan(first)};
  if (half[1].empty()) return tree_bcast(comm, data, root, Tree::chain);  // too small to split
  const auto sent = [](std::span<T> s) { return std::span<const T>(s); };
  const int v = (rank - root + p) % p;
  const int lr = (v + 1) % 2;  // 0: the left subtree, 1: the right (the root's side)
  const TreeLinks t = tree_links(Tree::binary, rank, p, root);
  if (rank == root) {
    for (std::size_t i = 0; i < t.children.size() && i < 2; ++i) comm.send(sent(half[i]), t.children[i]);
  } else {
    comm.recv(half[lr], t.parent);
    for (const int child : t.children) comm.send(sent(half[lr]), child);
  }
  const int twin = lr == 0 ? (rank + 1) % p : (rank + p - 1) % p, last = (root + p - 1) % p;
  const auto swap_halves = [&] {  // Open MPI's sendrecv: the receive posted first
    const int ticket = comm.irecv(half[1 - lr], twin);
    comm.send(sent(half[lr]), twin);
    comm.wait(ticket);
  };
  if (p % 2 != 0) {
    if (rank != root) swap_halves();
  } else if (rank == root) {
    comm.send(sent(half[1]), last);
  } else if (rank == last) {
    comm.recv(half[1], root);
  } else {
    swap_halves();
  }
}

template <class T>
void tree_reduce_sum(Comm& comm, std::span<T> data, int root, Tree tree, T* room, bool add) {
  const TreeLinks t = tree_links(tree, comm.rank(), comm.size(), root);
  const std::size_t n = data.size();
  // Two receives at most: child i + 1's is posted before child i's is waited for.
  int ticket = -1;
  for (std::size_t i = 0; i <= t.children.size(); ++i) {
    const int next = i < t.children.size() ? comm.irecv(std::span<T>(room + (i % 2) * n, n), t.children[i]) : -1;
    if (ticket >= 0) {
      comm.wait(ticket);
      if (add) add_into(data, room + ((i - 1) % 2) * n);
    }
    ticket = next;
  }
  if (t.parent >= 0) comm.send(std::span<const T>(data), t.parent);
}

template <class T>
void linear_sync_gather(Comm& comm, std::span<const T> send, std::span<T> recv, int root) {
  const int p = comm.size(), me = comm.rank();
  const std::span<T> none;
  if (me != root) {
    comm.recv(none, root);
    comm.send(send, root);
    comm.send(std::span<const T>(none), root);
    return;
  }
  check_gathered(send.size(), recv.size(), p, "the linear-sync gather");
  const std::size_t n = send.size();
  std::vector<int> second_parts;
  for (int r = 0; r < p; ++r) {
    if (r == me) continue;
    const int block = comm.irecv(recv.subspan(static_cast<std::size_t>(r) * n, n), r);
    comm.send(std::span<const T>(none), r);
    second_parts.push_back(comm.irecv(none, r));
    comm.wait(block);
  }
  std::copy(send.begin(), send.end(), recv.begin() + static_cast<std::ptrdiff_t>(me * n));
  for (const int ticket : second_parts) comm.wait(ticket);
}

template void add_into<float>(std::span<float>, const float*);
template void add_into<double>(std::span<double>, const double*);
template void tree_bcast<float>(Comm&, std::span<float>, int, Tree);
template void tree_bcast<double>(Comm&, std::span<double>, int, Tree);
template void tree_reduce_sum<float>(Comm&, std::span<float>, int, Tree, float*, bool);
template void tree_reduce_sum<double>(Comm&, std::span<double>, int, Tree, double*, bool);
template void split_bintree_bcast<float>(Comm&, std::span<float>, int);
template void split_bintree_bcast<double>(Comm&, std::span<double>, int);
template void scatter_allgather_bcast<float>(Comm&, std::span<float>, int);
template void scatter_allgather_bcast<double>(Comm&, std::span<double>, int);
template void linear_sync_gather<float>(Comm&, std::span<const float>, std::span<float>, int);
template void linear_sync_gather<double>(Comm&, std::span<const double>, std::span<double>, int);

}  // namespace wulf
