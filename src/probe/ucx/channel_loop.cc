// The channel loop: the probe worker process's side of the pipe (rail/probe/worker.h). It runs
// probes and responder halves in this process, each request on a thread of its own, and ends them
// all when the agent goes away. (Not to be confused with the process itself, ProbeWorker, nor
// with a probe side's UCX progress worker, UcxProgressWorker.)
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <list>
#include <map>
#include <mutex>
#include <thread>

#include "probe/worker/channel.h"
#include "probe/worker/wire.h"
#include "rail/base/clock.h"
#include "rail/base/log.h"
#include "rail/peer/client.h"
#include "rail/peer/encoding.h"
#include "rail/peer/messages.h"
#include "rail/probe/counters.h"
#include "rail/probe/handler_factory.h"
#include "rail/probe/in_process.h"
#include "rail/probe/ucx_version.h"
#include "rail/sysfs/filesystem.h"

namespace rail::probe {
namespace {

using nlohmann::json;

// What the probes need, as the agent's ProbeWiring builds it, from the init message.
struct Environment {
  explicit Environment(const json& init)
      : sys(init.at("sysfs_root").get<std::string>()),
        nonces(clock, init.at("remembered_nonces").get<std::size_t>(), std::chrono::hours(1)),
        counters(sys) {
    std::shared_ptr<const peer::Secret> secret;
    if (init.contains("secret_hex")) {
      const auto bytes = peer::HexDecode(init.at("secret_hex").get<std::string>());
      if (!bytes) throw std::invalid_argument("init: secret_hex is not hex");
      secret = std::make_shared<const peer::Secret>(*bytes);
    }
    std::string error;
    auto rails = worker::RailsFromJson(init.at("rails"), &error);
    if (!rails) throw std::invalid_argument("init: rails: " + error);
    context.connect = peer::MakePeerConnector(
        secret, {init.at("agent_version").get<std::string>(), UcxRuntimeVersion()}, nonces);
    context.counters = &counters;
    context.all_rails = std::move(*rails);
    // The driver itself is loaded only by the first probe or handler that asks for GPU memory.
    ConfigureProbeGpu(init.at("sysfs_root").get<std::string>(), init.value("cuda_library", ""));
  }

  base::SteadyClock clock;
  sysfs::RootedFilesystem sys;
  peer::ReplayCache nonces;
  RailCounterReader counters;
  ProbeContext context;
};

struct HandlerSlot {
  std::unique_ptr<peer::ProbeSessionHandler> handler;
  std::atomic<bool> stop{false};
  // Setup, Serve and Report run on threads of their own, one after the other: the agent waits for
  // each reply before it asks for the next step. That order crosses the pipe, which nothing in
  // this process can see, so each step holds this while it touches the handler.
  std::mutex step;
};

class ChannelLoop {
 public:
  explicit ChannelLoop(int fd) : channel_(base::UniqueFd(fd)) {}
  int Run();

 private:
  void Dispatch(const json& message);
  void StartRun(std::uint64_t id, const json& message);
  void StartSetup(std::uint64_t id, std::uint64_t handler, const json& message);
  void StartServe(std::uint64_t id, std::uint64_t handler);
  void StartReport(std::uint64_t id, std::uint64_t handler);
  std::shared_ptr<HandlerSlot> Find(std::uint64_t handler);
  void Reply(std::uint64_t id, json fields);
  void Refuse(std::uint64_t id, const std::string& reason, const std::string& message);
  void Spawn(std::function<void()> work);
  void EndEverything();

  worker::Channel channel_;
  std::unique_ptr<Environment> environment_;
  std::mutex mutex_;
  std::map<std::uint64_t, std::shared_ptr<std::atomic<bool>>> cancels_;  // runs, by call id
  std::map<std::uint64_t, std::shared_ptr<HandlerSlot>> handlers_;
  struct Task {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::list<Task> tasks_;
};

void ChannelLoop::Reply(std::uint64_t id, json fields) {
  fields["type"] = "reply";
  fields["id"] = id;
  if (!fields.contains("ok")) fields["ok"] = true;
  channel_.Send(fields);
}

void ChannelLoop::Refuse(std::uint64_t id, const std::string& reason, const std::string& message) {
  Reply(id, {{"ok", false}, {"reason", reason}, {"message", message}});
}

void ChannelLoop::Spawn(std::function<void()> work) {
  std::lock_guard lock(mutex_);
  for (auto task = tasks_.begin(); task != tasks_.end();) {
    if (!*task->done) {
      ++task;
      continue;
    }
    task->thread.join();
    task = tasks_.erase(task);
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  tasks_.push_back({std::thread([work = std::move(work), done] {
                      work();
                      *done = true;
                    }),
                    done});
}

std::shared_ptr<HandlerSlot> ChannelLoop::Find(std::uint64_t handler) {
  std::lock_guard lock(mutex_);
  const auto found = handlers_.find(handler);
  return found == handlers_.end() ? nullptr : found->second;
}

void ChannelLoop::StartRun(std::uint64_t id, const json& message) {
  std::string error;
  auto params = worker::ParamsFromJson(message.value("params", json()), &error);
  if (!params) return Refuse(id, "protocol", "run: " + error);
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  {
    std::lock_guard lock(mutex_);
    cancels_[id] = cancel;
  }
  Spawn([this, id, params = std::move(*params), cancel] {
    ProbeContext context = environment_->context;
    context.cancel = cancel.get();
    auto probe = MakeProbe(params.kind);
    const ProbeResult result = probe->Run(params, context);
    Reply(id, {{"result", worker::ToJson(result)}});
    std::lock_guard lock(mutex_);
    cancels_.erase(id);
  });
}

void ChannelLoop::StartSetup(std::uint64_t id, std::uint64_t handler, const json& message) {
  std::string error;
  peer::ProbeSetup request;
  const auto kind = ParseProbeKind(message.value("kind", ""));
  auto rails = worker::RailsFromJson(message.value("rails", json()), &error);
  if (!kind || !rails || !peer::FromJson(message.value("request", json()), &request, &error)) {
    return Refuse(id, "protocol", "setup: " + error);
  }
  auto slot = std::make_shared<HandlerSlot>();
  slot->handler = MakeUcxHandler(*kind, *rails);
  if (!slot->handler) return Refuse(id, "unknown_kind", "the worker does not serve this kind");
  {
    std::lock_guard lock(mutex_);
    handlers_[handler] = slot;
  }
  Spawn([this, id, slot, request = std::move(request)] {
    std::lock_guard step(slot->step);
    json fields;
    std::string reason;
    std::string refusal;
    if (!slot->handler->Setup(request, &fields, &reason, &refusal)) {
      return Refuse(id, reason, refusal);
    }
    Reply(id, {{"fields", fields}});
  });
}

void ChannelLoop::StartServe(std::uint64_t id, std::uint64_t handler) {
  auto slot = Find(handler);
  if (!slot) return Refuse(id, "protocol", "serve: no handler " + std::to_string(handler));
  Spawn([this, id, slot] {
    {
      std::lock_guard step(slot->step);
      slot->handler->Serve(slot->stop);
    }
    Reply(id, {});
  });
}

void ChannelLoop::StartReport(std::uint64_t id, std::uint64_t handler) {
  auto slot = Find(handler);
  if (!slot) return Refuse(id, "protocol", "report: no handler " + std::to_string(handler));
  Spawn([this, id, slot] {
    json report;
    {
      std::lock_guard step(slot->step);
      report = slot->handler->Report();
    }
    Reply(id, {{"report", report}});
  });
}

void ChannelLoop::Dispatch(const json& message) {
  const std::string type = message.value("type", "");
  const auto id = message.value("id", std::uint64_t{0});
  const auto handler = message.value("handler", std::uint64_t{0});
  if (type == "run") return StartRun(id, message);
  if (type == "setup") return StartSetup(id, handler, message);
  if (type == "serve") return StartServe(id, handler);
  if (type == "report") return StartReport(id, handler);
  std::lock_guard lock(mutex_);
  if (type == "cancel") {
    if (const auto run = cancels_.find(id); run != cancels_.end()) *run->second = true;
  } else if (type == "stop") {
    if (const auto slot = handlers_.find(handler); slot != handlers_.end()) {
      slot->second->stop = true;
    }
  } else if (type == "close") {
    handlers_.erase(handler);  // a task still using it holds its own reference
  } else {
    spdlog::warn("probe worker: unknown request type '{}'", type);
  }
}

void ChannelLoop::EndEverything() {
  std::list<Task> tasks;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, cancel] : cancels_) *cancel = true;
    for (auto& [id, slot] : handlers_) slot->stop = true;
    tasks.swap(tasks_);
  }
  for (auto& task : tasks) task.thread.join();
}

// Gathered once, at start, by a short-lived copy of this executable: the CUDA driver it loads and
// initialises (cuInit opens /dev/nvidia* for the life of the process) goes away with it. Only a
// GPU-memory probe loads the driver into this process.
WorkerCapabilities GatherCapabilitiesApart(const nlohmann::json& init) {
  const std::string sysfs_root = init.value("sysfs_root", "/sys");
  const std::string cuda_library = init.value("cuda_library", gpu::kCudaLibrary);
  std::string error;
  std::error_code ignored;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ignored).string();
  auto capabilities = QueryWorkerCapabilities(self.empty() ? "/proc/self/exe" : self, &error,
                                              cuda_library, sysfs_root);
  if (capabilities) return *capabilities;
  spdlog::warn("probe worker: capabilities unknown: {}", error);
  WorkerCapabilities unknown;
  unknown.cuda.error = "capabilities unknown: " + error;
  return unknown;
}

int ChannelLoop::Run() {
  std::string error;
  const auto init = channel_.Receive(&error);
  if (!init || init->value("type", "") != "init") {
    spdlog::error("probe worker: no init message: {}", init ? init->dump() : error);
    return 2;
  }
  try {
    base::ConfigureLogging(init->value("log_level", "info"), init->value("log_format", "logfmt"));
    environment_ = std::make_unique<Environment>(*init);
  } catch (const std::exception& failure) {
    spdlog::error("probe worker: bad init message: {}", failure.what());
    return 2;
  }
  channel_.Send({{"type", "hello"},
                 {"ucx_version", UcxRuntimeVersion()},
                 {"pid", ::getpid()},
                 {"capabilities", CapabilitiesToJson(GatherCapabilitiesApart(*init))}});
  while (auto message = channel_.Receive(&error)) Dispatch(*message);
  // The agent closed the pipe (it stops, or it died): nothing is left to report to.
  spdlog::debug("probe worker: pipe ended ({}); ending the probes", error);
  EndEverything();
  return 0;
}

}  // namespace

int RunProbeWorker(int fd) {
  ChannelLoop loop(fd);
  return loop.Run();
}

}  // namespace rail::probe
