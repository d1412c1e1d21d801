#include "cli/runner.hpp"

#include "cli/launcher.hpp"
#include "cli/train_resolve.hpp"
#include "engine/launch.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "engine/process.hpp"
#include "util/machine.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>

#include <sched.h>

namespace wulf {
namespace {

using Clock = std::chrono::steady_clock;

// The memory the pool's running jobs hold: a job waits for its turn until it fits beside
// them into the machine's memory, or until nothing else runs.
class MemoryBudget {
 public:
  explicit MemoryBudget(double limit) : limit_(limit) {}
  // A job's share, from its start to its end however it ends.
  class Held {
   public:
    Held(MemoryBudget& budget, double bytes) : budget_(budget), bytes_(bytes) { budget_.take(bytes_); }
    ~Held() { budget_.give_back(bytes_); }
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

   private:
    MemoryBudget& budget_;
    double bytes_;
  };

 private:
  void take(double bytes) {
    std::unique_lock<std::mutex> lock(mutex_);
    freed_.wait(lock, [&] { return running_ == 0 || !(limit_ > 0) || held_ + bytes <= limit_; });
    held_ += bytes, ++running_;
  }
  void give_back(double bytes) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      held_ -= bytes, --running_;
    }
    freed_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable freed_;
  const double limit_;  // 0: unknown, none kept
  double held_ = 0;
  int running_ = 0;
};

// Runs task(0), ..., task(n - 1), at most `threads` at a time, each in one thread from its
// start to its end (a child's end-with-parent request belongs to the thread that started
// it); the first exception a task threw is thrown once all have ended.
void in_pool(std::size_t n, int threads, const std::function<void(std::size_t)>& task) {
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(n);
  auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        task(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> others;
  for (int t = 1; t < std::min<long long>(threads, static_cast<long long>(n)); ++t) others.emplace_back(worker);
  worker();
  for (std::thread& t : others) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

// "wulf ARGS", or a run's own ARGS where it is no wulf command.
std::string command_of(const Job& job) {
  std::string command = job.run ? "" : "wulf";
  for (const std::string& a : job.args) command += (command.empty() ? "" : " ") + a;
  return command;
}

JobResult run_here(const Job& job) {
  // The record's path is the runner's: a file left there is not taken for this run's.
  if (!job.record.empty()) std::filesystem::remove(job.record);
  const auto t0 = Clock::now();
  JobResult result;
  if (job.run) {
    result = job.run();
  } else {
    std::vector<std::string> argv{wulf_program("wulf")};
    argv.insert(argv.end(), job.args.begin(), job.args.end());
    if (!job.record.empty()) argv.insert(argv.end(), {"--out", job.record});
    ChildOptions options;
    options.capture = true;
    options.grace_s = kWulfGraceSeconds;  // it ends its own ranks first
    ChildResult child = run_child(argv, options);
    result.code = child.code, result.out = std::move(child.out), result.err = std::move(child.err);
  }
  result.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  result.command = command_of(job);
  if (!job.record.empty() && std::filesystem::exists(job.record)) result.record = read_json_file(job.record);
  return result;
}

// Results travel as netstrings ("5:hello"): any bytes, no escaping.
void put(std::string& pack, std::string_view text) {
  pack += std::to_string(text.size());
  pack += ':';
  pack += text;
}

std::string_view take(std::string_view& pack) {
  const std::size_t colon = pack.find(':');
  if (colon == std::string_view::npos) throw std::runtime_error("a process's results are cut short");
  const std::size_t n = std::stoull(std::string(pack.substr(0, colon)));
  if (pack.size() < colon + 1 + n) throw std::runtime_error("a process's results are cut short");
  const std::string_view text = pack.substr(colon + 1, n);
  pack.remove_prefix(colon + 1 + n);
  return text;
}

// A file the job wrote, as "1" and its text, or "0" where it wrote none.
void put_file(std::string& pack, const std::string& path) {
  const bool there = std::filesystem::exists(path);
  put(pack, there ? "1" : "0");
  put(pack, there ? read_text_file(path, "a run's output") : "");
}

// The same file at this process's own path for it.
void take_file(std::string_view& pack, const std::string& path) {
  const bool there = take(pack) == "1";
  const std::string_view text = take(pack);
  if (there) write_file_atomically(path, std::string(text));
}

std::string pack_results(const std::vector<Job>& jobs, const std::vector<std::size_t>& mine,
                         const std::vector<JobResult>& results) {
  std::string pack;
  put(pack, std::to_string(jobs.size()));  // every process must have built the same list
  for (std::size_t i : mine) {
    const JobResult& r = results[i];
    put(pack, std::to_string(i));
    put(pack, std::to_string(r.code));
    put(pack, fmt::format("{:.17g}", r.wall_s));
    put(pack, r.out);
    put(pack, r.err);
    if (!jobs[i].record.empty()) put_file(pack, jobs[i].record);
    for (const std::string& file : jobs[i].files) put_file(pack, file);
  }
  return pack;
}

void unpack_results(std::string_view pack, int process, const std::vector<Job>& jobs, std::vector<JobResult>& results) {
  const std::size_t listed = std::stoull(std::string(take(pack)));
  if (listed != jobs.size())
    throw InputError(
        fmt::format("process {} of the launcher's built a list of {} jobs where this one built {}: "
                    "every process must be started with the same command and inputs",
                    process, listed, jobs.size()));
  while (!pack.empty()) {
    const std::size_t i = std::stoull(std::string(take(pack)));
    JobResult& r = results[i];
    r.code = std::stoi(std::string(take(pack)));
    r.wall_s = std::stod(std::string(take(pack)));
    r.out = take(pack);
    r.err = take(pack);
    r.command = command_of(jobs[i]);
    if (!jobs[i].record.empty()) {
      take_file(pack, jobs[i].record);
      if (std::filesystem::exists(jobs[i].record)) r.record = read_json_file(jobs[i].record);
    }
    for (const std::string& file : jobs[i].files) take_file(pack, file);
  }
}

// The list as the launcher's processes compare it: a line per job, its arguments with this
// process's temporary paths named by their purpose, and the digest of every file an argument
// names (itself, or after a problem's "layers:" or "fann:"), outside those temporary paths.
std::string list_description(const std::vector<Job>& jobs) {
  std::string text;
  std::map<std::string, std::string> digests;  // each file read once, however many jobs name it
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    std::string line = "job " + std::to_string(i) + ":";
    for (const std::string& arg : jobs[i].args) line += " " + arg;
    line = without_temp_paths(line);
    for (const std::string& arg : jobs[i].args) {
      std::string path = arg;
      for (const char* prefix : {"layers:", "fann:"})
        if (path.starts_with(prefix)) path = path.substr(std::string_view(prefix).size());
      std::error_code ec;
      if (!std::filesystem::is_regular_file(path, ec) || without_temp_paths(path) != path) continue;
      auto [at, fresh] = digests.try_emplace(path);
      if (fresh) at->second = file_digest(path, "a run's input");
      line += " [" + path + ": " + at->second + "]";
    }
    text += line + "\n";
  }
  return text;
}

// Every process of the launcher's must run the same list on the same inputs: compared before
// any job runs, and a difference named by its first line (issue 62: two processes started
// with --blocks 32 and 64 once gave one mixed result and exit 0).
void check_same_lists(const std::vector<Job>& jobs) {
  const std::string mine = list_description(jobs);
  const std::vector<std::string> all = gather_texts(mine);
  const auto lines = [](const std::string& text) { return split_list(text, '\n'); };
  const std::vector<std::string> first = lines(all.front());
  for (std::size_t p = 1; p < all.size(); ++p) {
    if (all[p] == all.front()) continue;
    const std::vector<std::string> other = lines(all[p]);
    std::size_t k = 0;
    while (k < first.size() && k < other.size() && first[k] == other[k]) ++k;
    const auto at = [&](const std::vector<std::string>& l) { return k < l.size() && !l[k].empty() ? l[k] : "(none)"; };
    throw InputError(fmt::format("the launcher's process {} has another list of runs than process 0: {} jobs against "
                                 "{}; the first difference: process 0 \"{}\", process {} \"{}\"; every process must "
                                 "be started with the same command and the same input files",
                                 p, other.size() - 1, first.size() - 1, at(first), p, at(other)));
  }
}

}  // namespace

std::string JobResult::message() const { return wulf_last_message(err); }

int cores_here() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

Runner::Runner(long long jobs) {
  // Under mpirun's default binding (a core, or a socket, each) the affinity is the share;
  // unbound, the machine's cores are split among its processes.
  const int machine = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  pool_ = jobs > 0 ? static_cast<int>(std::min<long long>(jobs, 1024))
                   : std::max(1, std::min(cores_here(), machine / processes_here()));
}

std::vector<JobResult> Runner::run(const std::vector<Job>& jobs, Spread spread,
                                   const std::function<void(std::size_t)>& on_start) const {
  const int n = processes(), me = process_index();
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (spread == Spread::one_at_a_time ? me == 0 : static_cast<int>(i % static_cast<std::size_t>(n)) == me)
      mine.push_back(i);
  if (n > 1) check_same_lists(jobs);
  std::vector<JobResult> results(jobs.size());
  if (spread == Spread::one_at_a_time) {
    bool failed = false;
    for (std::size_t i : mine) {
      if (failed) {
        results[i] = {kNotRun, "", "not run: an earlier run of its list failed\n", command_of(jobs[i]), Json(), 0};
        continue;
      }
      if (on_start) on_start(i);
      results[i] = run_here(jobs[i]);
      failed = !results[i].ok();
    }
  } else {
    std::mutex starting;
    const std::optional<MachineMemory> memory = machine_memory();
    MemoryBudget budget(memory ? memory->bytes : 0);
    // A `wulf train` job without an estimate of its own has its front end's, where jobs run at once.
    std::vector<double> bytes(mine.size());
    for (std::size_t k = 0; k < mine.size(); ++k) {
      const Job& job = jobs[mine[k]];
      bytes[k] = job.memory_bytes > 0 || job.run || !memory || pool_ < 2 || mine.size() < 2
                     ? job.memory_bytes
                     : train_memory_bytes(job.args);
    }
    in_pool(mine.size(), pool_, [&](std::size_t k) {
      const Job& job = jobs[mine[k]];
      const MemoryBudget::Held held(budget, bytes[k]);
      if (on_start) {
        const std::lock_guard<std::mutex> lock(starting);
        on_start(mine[k]);
      }
      results[mine[k]] = run_here(job);
    });
  }
  if (n > 1) {
    const std::vector<std::string> packs = gather_texts(pack_results(jobs, mine, results));
    for (int p = 0; p < n; ++p)
      if (p != me) unpack_results(packs[static_cast<std::size_t>(p)], p, jobs, results);
  }
  return results;
}

}  // namespace wulf
