// The messages of wulf's own schedules under smpirun (comm/mpi/messages.hpp): SimGrid comms
// between mailboxes, one per (communicator, destination, source, tag), sent as SMPI 3.32 sends
// an MPI message (src/smpi/mpi/smpi_request.cpp, Request::start), so that the simulated times
// are SMPI's:
// - a comm carries the data and SMPI's envelope of 16 bytes;
// - a send under smpi/send-is-detached-thresh lets the sender go on at once, as SMPI's
//   detached send does;
// - under smpi/async-small-thresh (--eager-limit) a message may go to the destination's
//   eager mailbox, whose permanent receiver starts the flow before the receive is posted,
//   and a receive looks in both, in SMPI's order;
// - data in SMPI's shared memory (--numerics off) is neither copied nor sent.
// A test is Activity::wait_any_for of no simulated time, which finishes a done comm with a
// waiter: SimGrid then drops it from the actor's activities, where Comm::test and MPI_Test
// leave it. A send that lets its sender go on at once is finished by its sender later, as
// soon as it is seen done inside a wait, else by a test once 8 more have gone (S4uMessages::
// wait_reaping, reap).
// A message with nothing to copy (SMPI's shared memory, --numerics off) carries its size
// alone, in place of a pointer: no allocation.
// Under --sim-messages fifo the sends from one rank to another go one after another, as Open
// MPI's TCP transport writes them to its one socket a peer: a send to an idle peer starts at
// once; one queued behind another starts as soon as that one is delivered, inside a call here
// (a test, a wait) or while its rank computes (execute_flops: Open MPI has written it into the
// socket behind the one before); each is done only once delivered (none goes on at once).
// A fifo message of at least the handshake size (the eager limit: --eager-limit, else the
// testbed's Open MPI's btl_tcp_eager_limit) goes by Open MPI's rendezvous (ob1 over TCP): its
// envelope first; the receiver answers at its first call after the envelope has arrived (its
// receive being posted); the data starts at the sender's first call after the answer has
// arrived. Between their calls (overlap's progress points) neither end moves it.
// Where SMPI would charge a message an overhead of its own (smpi/os, smpi/ois, smpi/or),
// engine_messages leaves the messages to SMPI.
#include "comm/mpi/messages.hpp"
#include "fifo_wire.hpp"
#include "shared_memory.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <smpi/smpi.h>
#include <xbt/config.hpp>

#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wulf {
namespace {

// SMPI's envelope: the bytes it sends with every message's data (tag, source, communicator).
constexpr std::uint64_t envelope_bytes = 16;

// What a comm carries: the bytes sent and a copy of them where they are to be copied (none
// from SMPI's shared memory).
struct Message {
  std::size_t bytes = 0;
  std::unique_ptr<std::byte[]> values;
  bool asks = false;  // fifo: the envelope of a rendezvous, asking for the data's turn
};
// A comm's payload: a Message, or for a message with nothing to copy (the bulk of them under
// --numerics off) its size alone, shifted and odd in place of a pointer, so that no Message
// is made, nor read by its receiver.
void* size_payload(std::size_t bytes) { return reinterpret_cast<void*>((static_cast<std::uintptr_t>(bytes) << 1) | 1); }
// The Message of a payload, or null for a size alone.
Message* message_of(void* payload) {
  return (reinterpret_cast<std::uintptr_t>(payload) & 1) ? nullptr : static_cast<Message*>(payload);
}
std::size_t payload_bytes(void* payload) {
  const Message* message = message_of(payload);
  return message ? message->bytes : static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(payload) >> 1);
}

// How a comm's payload reaches its receiver: the pointer, set on both ends (SMPI makes the
// default a copy of the bytes it points to).
constexpr auto pass_pointer = &simgrid::s4u::Comm::copy_pointer_callback;

// Whether SMPI factors "size:value[:value...];..." charge anything: a value that is not 0.
bool charges(std::string_view factors) {
  std::size_t at = 0;
  while (at < factors.size()) {
    std::size_t end = factors.find(';', at);
    if (end == std::string_view::npos) end = factors.size();
    const std::string part(factors.substr(at, end - at));
    // The first field is the message size from which the values hold; the rest are seconds.
    for (std::size_t colon = part.find(':'); colon != std::string::npos; colon = part.find(':', colon + 1))
      if (std::strtod(part.c_str() + colon + 1, nullptr) != 0.0) return true;
    at = end + 1;
  }
  return false;
}

// Whether SMPI charges a message an overhead: smpi/os, smpi/ois or smpi/or in the
// configuration or on any host (SMPI reads a host's own first).
bool smpi_charges_overheads() {
  for (const char* key : {"smpi/os", "smpi/ois", "smpi/or"}) {
    if (charges(simgrid::config::get_value<std::string>(key))) return true;
    for (const simgrid::s4u::Host* host : simgrid::s4u::Engine::get_instance()->get_all_hosts())
      if (const char* value = host->get_property(key); value && charges(value)) return true;
  }
  return false;
}

// Each world rank's actor (SimGrid's pid), from the property "rank" SMPI gives its actors.
const std::vector<long>& world_actors() {
  static const std::vector<long> actors = [] {
    std::vector<long> pids;
    for (const simgrid::s4u::ActorPtr& actor : simgrid::s4u::Engine::get_instance()->get_all_actors())
      if (const char* rank = actor->get_property("rank")) {
        const auto r = static_cast<std::size_t>(std::stol(rank));
        if (pids.size() <= r) pids.resize(r + 1, -1);
        pids[r] = actor->get_pid();
      }
    return pids;
  }();
  return actors;
}

class S4uMessages;
// fifo: each rank's messages (by its actor), whose queued sends go on while it computes.
std::unordered_map<long, std::vector<S4uMessages*>>& fifo_messages() {
  static std::unordered_map<long, std::vector<S4uMessages*>> messages;  // one map, a rank's own entry
  return messages;
}

class S4uMessages final : public Messages {
 public:
  // Made by every rank of comm, with no message: SMPI's split and dup pay for theirs.
  S4uMessages(MPI_Comm comm, bool fifo, std::size_t handshake_bytes)
      : eager_bytes_(simgrid::config::get_value<int>("smpi/async-small-thresh")),
        detached_bytes_(fifo ? 0 : simgrid::config::get_value<int>("smpi/send-is-detached-thresh")),
        handshake_bytes_(fifo ? handshake_bytes : 0),
        fifo_(fifo) {
    MPI_Comm_rank(comm, &rank_);
    // Every rank's world rank, and its actor.
    int size = 0;
    MPI_Comm_size(comm, &size);
    MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
    MPI_Comm_group(comm, &group);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    std::vector<int> ranks(static_cast<std::size_t>(size)), in_world(ranks.size());
    for (int r = 0; r < size; ++r) ranks[static_cast<std::size_t>(r)] = r;
    MPI_Group_translate_ranks(group, size, ranks.data(), world, in_world.data());
    MPI_Group_free(&group);
    MPI_Group_free(&world);
    const std::vector<long>& actors = world_actors();
    std::uint64_t hash = 1469598103934665603ULL;  // FNV-1a over the world ranks in order
    for (const int w : in_world) {
      world_.push_back(w);
      actor_.push_back(actors.at(static_cast<std::size_t>(w)));
      hash = (hash ^ static_cast<std::uint64_t>(w)) * 1099511628211ULL;
    }
    // The communicator's name in its mailboxes': its ranks, and how many communicators of
    // those ranks this rank has made before (the same count on every one of them: they make
    // a communicator together, in the same order).
    static std::map<std::pair<long, std::uint64_t>, long> made;  // the ranks share it
    const long before = made[{actor_[static_cast<std::size_t>(rank_)], hash}]++;
    prefix_ = "wulf/" + std::to_string(hash) + "." + std::to_string(before) + "/";
    if (fifo_) fifo_messages()[actor_[static_cast<std::size_t>(rank_)]].push_back(this);
  }
  ~S4uMessages() override {
    if (fifo_) std::erase(fifo_messages()[actor_[static_cast<std::size_t>(rank_)]], this);
    // fifo: the schedules waited for every send; any left (an exception) go, in order.
    for (auto& [to, peer] : peers_)
      while (peer.going >= 0) {
        Slot& going = slots_[static_cast<std::size_t>(peer.going)];
        while (!delivered(going)) (going.asking ? going.answer : going.comm)->wait(), going.found = true;
        next_send(peer);
      }
    reap_all();  // the sends that went on at once (fifo: the answers): received by now, or soon
    // The eager mailboxes this rank receives on let go of it (SimGrid's advice).
    for (const auto& [key, box] : boxes_)
      if ((key & incoming) && (key & kinds) == eager) box->set_receiver(nullptr);
  }
  S4uMessages(const S4uMessages&) = delete;
  S4uMessages& operator=(const S4uMessages&) = delete;

  int isend(const void* data, std::size_t bytes, int dest, int tag) override {
    ++changes_;
    std::unique_ptr<Message> message;
    if (bytes > 0 && !in_shared_memory(data, bytes)) {
      message = std::make_unique<Message>();
      message->bytes = bytes;
      message->values.reset(new std::byte[bytes]);
      std::memcpy(message->values.get(), data, bytes);
    }
    const bool handshake = handshake_bytes_ > 0 && bytes >= handshake_bytes_;
    simgrid::s4u::Mailbox* box = handshake ? this->box(dest, rank_, tag, after_answer) : send_box(dest, tag, bytes);
    const simgrid::s4u::CommPtr comm =
        box->put_init(message ? message.get() : size_payload(bytes), bytes + envelope_bytes)
            ->set_copy_data_callback(pass_pointer);
    const std::size_t ticket = free_slot();
    Slot& slot = slots_[ticket];
    slot.busy = true, slot.send = true;
    message.release();  // the receiver's when it arrives
    if (fifo_) {
      slot.comm = comm, slot.to = dest;
      if (handshake) {
        // The envelope goes where the receive looks; the answer comes back on a mailbox of its own.
        auto ask = std::make_unique<Message>();
        ask->asks = true;
        slot.ask = send_box(dest, tag, bytes)->put_init(ask.get(), envelope_bytes)->set_copy_data_callback(pass_pointer);
        ask.release();  // the receiver's
        slot.answer = this->box(rank_, dest, tag, answers)
                          ->get_init()
                          ->set_dst_data(&slot.answered, sizeof(void*))
                          ->set_copy_data_callback(pass_pointer);
      }
      Peer& peer = peers_[dest];
      slot.started = false;
      if (peer.going < 0) start_send(slot), peer.going = static_cast<int>(ticket);
      else peer.queued.push_back(static_cast<int>(ticket));
      return static_cast<int>(ticket);
    }
    comm->start();
    if (below(bytes, detached_bytes_)) {
      // The sender goes on at once, as SMPI's detached send lets it. In SimGrid the comm stays
      // attached: 3.32 keeps every detached comm in the maestro's list of activities, which
      // each one's finish scans, and at 1 024 GPUs thousands are in flight. This rank finishes
      // it later, as its waiter (went_on).
      went_on(comm);
    } else {
      slot.comm = comm;
    }
    return static_cast<int>(ticket);
  }

  int irecv(void* data, std::size_t bytes, std::size_t value_bytes, int source, int tag) override {
    ++changes_;
    const std::size_t ticket = free_slot();
    Slot& slot = slots_[ticket];
    slot.busy = true, slot.send = false;
    slot.into = data, slot.room = bytes, slot.value_bytes = value_bytes, slot.got = nullptr;
    slot.from = source, slot.tag = tag;
    slot.comm = receive_box(source, tag, bytes)
                    ->get_init()
                    ->set_dst_data(&slot.got, sizeof(void*))
                    ->set_copy_data_callback(pass_pointer);
    slot.comm->start();
    return static_cast<int>(ticket);
  }

  // fifo: the sends under way with another queued behind them (and their tickets), for a wait
  // outside (execute_flops).
  void on_the_wire(std::vector<simgrid::s4u::ActivityPtr>& comms, std::vector<std::pair<S4uMessages*, int>>& whose) {
    for (const auto& [to, peer] : peers_)
      if (const Slot* s = peer.going >= 0 ? &slots_[static_cast<std::size_t>(peer.going)] : nullptr;
          s && !peer.queued.empty() && !s->asking && !s->delivered)
        comms.push_back(s->comm), whose.emplace_back(this, peer.going);
  }
  // fifo: such a wait found the send delivered: the next to its rank starts.
  void delivered_on_the_wire(int ticket) {
    ++changes_;
    Slot& slot = slots_.at(static_cast<std::size_t>(ticket));
    slot.found = true;
    delivered(slot);
    send_more();
  }

  bool test(int ticket) override {
    if (fifo_) progress();
    Slot& slot = slots_.at(static_cast<std::size_t>(ticket));
    if (!slot.started || (slot.comm && !delivered(slot))) return false;
    finish(slot);
    return true;
  }

  std::size_t wait(int ticket) override {
    if (fifo_) {
      // Inside the wait this rank goes on with all its messages (starts its queued sends,
      // answers envelopes, sends answered data) until its own is delivered: it waits for
      // whichever of their next events comes first.
      for (;;) {
        progress();
        Slot& slot = slots_.at(static_cast<std::size_t>(ticket));
        if (slot.started && slot.delivered) break;
        waiting_.clear(), whose_.clear();
        for (std::size_t i = 0; i < slots_.size(); ++i)
          if (const Slot& s = slots_[i]; s.busy && s.started && !s.delivered)
            waiting_.push_back(s.asking ? s.answer : s.comm), whose_.push_back(i);
        const auto done = static_cast<std::size_t>(simgrid::s4u::Comm::wait_any_for(waiting_, -1));
        slots_[whose_.at(done)].found = true;
        ++changes_;  // found done, perhaps at the same instant: the next progress takes it
      }
      waiting_.clear();
      return finish(slots_.at(static_cast<std::size_t>(ticket)));
    }
    Slot& slot = slots_.at(static_cast<std::size_t>(ticket));
    if (slot.comm) wait_reaping(slot.comm);
    return finish(slot);
  }

 private:
  struct Slot {
    simgrid::s4u::CommPtr comm;  // none once done (or a send under the detached threshold)
    void* got = nullptr;         // a receive's payload, once done
    void* into = nullptr;
    std::size_t room = 0, value_bytes = 1;
    bool busy = false, send = false;
    // A send started (fifo: not queued behind another to its rank); its comm done; its rank (fifo).
    bool started = true, delivered = false;
    int to = -1;
    int from = -1, tag = 0;  // a receive's source and tag
    // fifo, a send by the handshake: its envelope, the receiver's answer (awaited while asking).
    simgrid::s4u::CommPtr ask, answer;
    void* answered = nullptr;
    bool asking = false;
    bool found = false;  // fifo: a wait found the comm it waited for done (finished: not tested again)
  };
  // fifo: the sends to one rank, the one under way (its ticket, or -1) and those behind it.
  struct Peer {
    int going = -1;
    std::deque<int> queued;
  };

  // Whether the comm is done (a test of no simulated time).
  bool done(const simgrid::s4u::ActivityPtr& comm) {
    one_[0] = comm;
    const bool is = simgrid::s4u::Activity::wait_any_for(one_, 0.0) == 0;
    one_[0] = nullptr;
    return is;
  }
  // Whether the slot's message is delivered (tested once done). Under the handshake this is
  // where its ends go on: a send whose answer has come starts its data; a receive whose
  // envelope has come answers it and waits for the data.
  bool delivered(Slot& slot) {
    if (slot.delivered) return true;
    const bool found = std::exchange(slot.found, false);
    if (slot.asking) {
      if (!found && !done(slot.answer)) return false;
      slot.ask->wait();  // received, as it was answered
      slot.ask = slot.answer = nullptr, slot.asking = false;
      slot.comm->start();
      return false;
    }
    if (!found && !done(slot.comm)) return false;
    if (const Message* message = slot.send ? nullptr : message_of(slot.got); message && message->asks) {
      answer(slot);
      return false;
    }
    return slot.delivered = true;
  }
  // A receive's envelope arrived: its data's receive posted, then the answer sent (Open MPI's
  // acknowledgement), which the sender finds at its next call.
  void answer(Slot& slot) {
    delete message_of(slot.got);
    slot.got = nullptr;
    slot.comm = box(rank_, slot.from, slot.tag, after_answer)
                    ->get_init()
                    ->set_dst_data(&slot.got, sizeof(void*))
                    ->set_copy_data_callback(pass_pointer);
    slot.comm->start();
    const simgrid::s4u::CommPtr news = box(slot.from, rank_, slot.tag, answers)
                                           ->put_init(this, envelope_bytes)  // not read: its arrival is the news
                                           ->set_copy_data_callback(pass_pointer);
    news->start();
    went_on(news);
  }
  // fifo: a send's turn to its rank: its data, or under the handshake its envelope (and the
  // receive of the answer).
  void start_send(Slot& slot) {
    slot.started = true;
    if (slot.ask) {
      slot.asking = true;
      slot.answer->start();
      slot.ask->start();
    } else {
      slot.comm->start();
    }
  }
  // fifo: the next send to the peer started, the one under way being done.
  void next_send(Peer& peer) {
    peer.going = -1;
    if (peer.queued.empty()) return;
    peer.going = peer.queued.front();
    peer.queued.pop_front();
    start_send(slots_[static_cast<std::size_t>(peer.going)]);
  }
  // fifo: what this rank does inside any call: every message under way taken as far as it
  // goes (envelopes answered, answered data started), then each peer's next send started
  // whose send under way is delivered. Once per simulated instant and state of this rank's
  // messages: at a progress point every bucket's test calls it, and scanning every message
  // each time made a bucket per tensor cubic in the tensors (400 of them: 44 s for 2 updates,
  // issue 62); at the same instant with nothing posted or finished since, a scan finds what
  // the last one found.
  void progress() {
    const double now = simgrid::s4u::Engine::get_clock();
    if (now == progressed_at_ && changes_ == progressed_changes_) return;
    for (Slot& slot : slots_)
      if (slot.busy && slot.started) delivered(slot);
    send_more();
    progressed_at_ = now, progressed_changes_ = changes_;
  }
  // fifo: every peer's next send started whose send under way is done.
  void send_more() {
    for (auto& [to, peer] : peers_)
      while (peer.going >= 0 && !peer.queued.empty() && delivered(slots_[static_cast<std::size_t>(peer.going)]))
        next_send(peer);
  }

  // Waits for the comm, finishing on the way each send that went on at once and is done
  // before it, oldest first: each one's finish withdraws it from this rank's activities, a
  // list SimGrid scans whole at every finish. Waiting for them changes no simulated time:
  // the rank goes on only once the comm is done, as a wait for it alone.
  void wait_reaping(const simgrid::s4u::CommPtr& comm) {
    if (sent_.empty()) {
      comm->wait();
      return;
    }
    sent_.push_back(comm);  // waited for last of all, taken off when done (or failed)
    try {
      for (;;) {
        const auto done = static_cast<std::size_t>(simgrid::s4u::Activity::wait_any_for(sent_, -1));
        if (done + 1 == sent_.size()) break;
        sent_.erase(sent_.begin() + static_cast<std::ptrdiff_t>(done));
      }
    } catch (...) {
      sent_.pop_back();
      throw;
    }
    sent_.pop_back();
    reap_when_ = sent_.size() + reap_at;
  }

  // A send started that this rank does not wait for: finished later by wait_reaping, or by
  // reap once reap_at more have gone since the last.
  void went_on(const simgrid::s4u::CommPtr& comm) {
    sent_.push_back(comm);
    if (sent_.size() >= reap_when_) reap();
  }

  void reap_all() {
    for (const simgrid::s4u::ActivityPtr& comm : sent_) comm->wait();
    sent_.clear();
  }
  // The sends that went on at once, finished with this rank as their waiter, oldest first,
  // while done. Each is tested alone: a wait_any_for registers with every comm before the
  // first done and is withdrawn from all it was given, and one that finds none done waits
  // for a timer of no time. The next reap comes reap_at sends later, whether or not the
  // oldest was done.
  void reap() {
    while (!sent_.empty() && done(sent_.front())) sent_.erase(sent_.begin());
    reap_when_ = sent_.size() + reap_at;
  }

  static bool below(std::size_t bytes, int threshold) {
    return threshold > 0 && bytes < static_cast<std::size_t>(threshold);
  }

  // The kinds of mailbox from one rank to another under a tag: SMPI's (whose data flows once
  // the receive is posted), the eager one (whose data flows at once), and under the handshake
  // the receiver's answers and the data sent after them. A key's low bits: the kind, and
  // whether this rank receives on it.
  enum Kind : std::uint64_t { posted = 0, eager = 1, answers = 2, after_answer = 3, kinds = 3, incoming = 4 };
  // The mailbox of messages from `from` to `to` (ranks of the communicator) under tag, of the
  // kind, made on first need.
  simgrid::s4u::Mailbox* box(int to, int from, int tag, Kind kind) {
    const bool in = to == rank_;
    const int peer = in ? from : to;
    const std::uint64_t key = (static_cast<std::uint64_t>(tag) << 35) | (static_cast<std::uint64_t>(peer) << 3) |
                              (in ? std::uint64_t{incoming} : 0) | kind;
    auto [at, made] = boxes_.try_emplace(key, nullptr);
    if (made) {
      static constexpr const char* suffix[] = {"", "e", "a", "d"};
      at->second = simgrid::s4u::Mailbox::by_name(prefix_ + std::to_string(world_[static_cast<std::size_t>(to)]) + "<" +
                                                  std::to_string(world_[static_cast<std::size_t>(from)]) + "#" +
                                                  std::to_string(tag) + suffix[kind]);
      // An eager mailbox receives for its destination before any receive is posted; both
      // ends set it, whichever uses the mailbox first.
      if (kind == eager) at->second->set_receiver(simgrid::s4u::Actor::by_pid(actor_[static_cast<std::size_t>(to)]));
    }
    return at->second;
  }

  // SMPI's choice for a send: under the eager limit, the eager mailbox unless a receive is
  // already posted on the other.
  simgrid::s4u::Mailbox* send_box(int dest, int tag, std::size_t bytes) {
    simgrid::s4u::Mailbox* rendezvous = box(dest, rank_, tag, posted);
    if (eager_bytes_ == 0 || !below(bytes, eager_bytes_) || rendezvous->iprobe(1, {}, nullptr)) return rendezvous;
    return box(dest, rank_, tag, eager);
  }
  // And for a receive: a message already in either, the eager one first; none, the eager one
  // for a receive under the limit, the other otherwise.
  simgrid::s4u::Mailbox* receive_box(int source, int tag, std::size_t room) {
    simgrid::s4u::Mailbox* rendezvous = box(rank_, source, tag, posted);
    if (eager_bytes_ == 0) return rendezvous;
    simgrid::s4u::Mailbox* early = box(rank_, source, tag, eager);
    if (early->iprobe(0, {}, nullptr)) return early;
    if (!below(room, eager_bytes_)) return rendezvous;
    return rendezvous->iprobe(0, {}, nullptr) ? rendezvous : early;
  }

  // The ticket done: a receive's data copied (unless it or the sender's lies in SMPI's shared
  // memory); the values received.
  std::size_t finish(Slot& slot) {
    ++changes_;
    if (fifo_ && slot.send) {
      Peer& peer = peers_.at(slot.to);
      if (peer.going >= 0 && &slots_[static_cast<std::size_t>(peer.going)] == &slot) next_send(peer);
    }
    std::size_t values = 0;
    if (!slot.send) {
      const std::unique_ptr<Message> message(message_of(slot.got));
      const std::size_t bytes = payload_bytes(slot.got);
      if (bytes > slot.room)
        throw std::length_error("a message of " + std::to_string(bytes) + " bytes for a receive of " +
                                std::to_string(slot.room));
      if (message && message->values && !in_shared_memory(slot.into, bytes))
        std::memcpy(slot.into, message->values.get(), bytes);
      values = bytes / slot.value_bytes;
    }
    slot = Slot{};
    while (!slots_.empty() && !slots_.back().busy) slots_.pop_back();
    return values;
  }
  // A ticket is its slot's index: a free one is taken again (stable: a receive's comm writes
  // into its slot).
  std::size_t free_slot() {
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (!slots_[i].busy) return i;
    slots_.emplace_back();
    return slots_.size() - 1;
  }

  int rank_ = 0;
  const int eager_bytes_, detached_bytes_;  // SMPI's thresholds (0: none; fifo: no detached sends)
  const std::size_t handshake_bytes_;       // fifo: from this size a message goes by the handshake (0: none)
  const bool fifo_;
  std::unordered_map<int, Peer> peers_;  // fifo: by rank of the communicator
  std::vector<simgrid::s4u::CommPtr> waiting_;  // fifo: what a wait waits for, and whose (slots)
  std::vector<std::size_t> whose_;
  std::string prefix_;
  std::vector<long> world_, actor_;  // by rank of the communicator
  std::unordered_map<std::uint64_t, simgrid::s4u::Mailbox*> boxes_;
  std::deque<Slot> slots_;
  std::vector<simgrid::s4u::ActivityPtr> one_{nullptr};  // the comm a test waits for
  // The sends under SMPI's detached threshold (fifo: the answers) not yet finished, oldest first:
  // finished in each wait (wait_reaping), and tested once reap_when_ have gone (reap).
  std::vector<simgrid::s4u::ActivityPtr> sent_;
  static constexpr std::size_t reap_at = 8;
  std::size_t reap_when_ = reap_at;
  // fifo: when progress last scanned, and the count of posts and finishes then and now.
  double progressed_at_ = -1;
  std::uint64_t changes_ = 0, progressed_changes_ = ~std::uint64_t{0};
};

}  // namespace

void execute_flops(double flops) {
  if (fifo_messages().empty()) return smpi_execute_flops(flops);  // no rank runs fifo
  const long me = simgrid::s4u::this_actor::get_pid();
  std::vector<simgrid::s4u::ActivityPtr> waiting;
  std::vector<std::pair<S4uMessages*, int>> whose;
  const auto gather = [&] {  // looked up each time: other ranks add to the map meanwhile
    waiting.clear(), whose.clear();
    if (const auto mine = fifo_messages().find(me); mine != fifo_messages().end())
      for (S4uMessages* messages : mine->second) messages->on_the_wire(waiting, whose);
  };
  gather();
  if (waiting.empty()) return smpi_execute_flops(flops);
  // SMPI's computation (smpi_execute_flops), waited for together with the sends.
  const simgrid::s4u::ExecPtr computation = simgrid::s4u::this_actor::exec_init(flops);
  computation->set_name("computation")->start();
  while (!waiting.empty()) {
    waiting.insert(waiting.begin(), computation);
    const ssize_t done = simgrid::s4u::Activity::wait_any(waiting);
    if (done == 0) return;
    const auto [messages, ticket] = whose.at(static_cast<std::size_t>(done - 1));
    messages->delivered_on_the_wire(ticket);
    gather();
  }
  computation->wait();
}

std::unique_ptr<Messages> engine_messages(MPI_Comm comm, bool fifo, std::size_t handshake_bytes) {
  static const bool overheads = smpi_charges_overheads();  // the same for every rank
  if (overheads) return nullptr;
  return std::make_unique<S4uMessages>(comm, fifo, handshake_bytes);
}

}  // namespace wulf
