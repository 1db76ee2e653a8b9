// simulate(solver, params, onProgress?, onSnapshot?, onPaused?) -> {result: Promise<SimOutput>,
// cancel(), pause(), resume()}, checkSimulation(solver, params), solvers() -> string[] and
// solverParams() -> {solver: [param spec]}.
//
// A simulation can run for hours, so it never takes one of libuv's pool threads (those serve SQLite,
// file I/O and the engine's short calls): each run gets a std::thread of its own, owned here, and
// talks to the main thread through one ThreadSafeFunction:
// - progress is coalesced: the thread stores the latest (done, total) and queues a message only when
//   none is pending, so the queue never holds more than one, and the callback always reads the latest;
// - snapshots are copied and queued, at most kSnapshotsInFlight at a time (the solver waits for the
//   main thread beyond that, so a slow consumer cannot pile up copies of the grid);
// - pause() makes the thread wait at its next poll of `cancelled` (a fraction of a second of solver
//   work away, inside a step or not: sim.hpp, Hooks) with its state in memory, and queue one Paused
//   message once it waits;
//   resume() lets it go on; cancel() also wakes a paused run, which then ends as cancelled;
// - completion is always queued last, and settles the Promise.
// The ThreadSafeFunction holds the event loop open while the run lives (like any pending request)
// and is released by the thread when it ends, cancelled or not. Its finalizer (main thread) joins
// the thread; when the environment is torn down with a run in flight (a worker thread terminated)
// the finalizer cancels the run first, so the join waits for one poll of the solver. Output arrays are
// moved into external ArrayBuffers (no copy).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <thread>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "args.hpp"
#include "bindings.hpp"
#include "ttstore/sim.hpp"
#include "worker.hpp"

namespace tts_addon {
namespace {

constexpr const char* kCancelledCode = "ERR_TTS_CANCELLED";
constexpr int kSnapshotsInFlight = 2;

struct Message {
  enum class Kind { Progress, Snapshot, Paused, Done };
  explicit Message(Kind k) : kind(k) {}
  Message(int64_t s, double time, std::vector<tts::sim::Field> f)
      : kind(Kind::Snapshot), step(s), t(time), fields(std::move(f)) {}
  Kind kind;
  int64_t step = 0;
  double t = 0;
  std::vector<tts::sim::Field> fields;
};

class SimRun;
void CallJs(Napi::Env env, Napi::Function, SimRun* run, Message* m);
using Tsfn = Napi::TypedThreadSafeFunction<SimRun, Message, CallJs>;

// Runs whose thread is still inside the solver, so that a process exiting with runs in flight can
// stop them before static destructors run under their feet.
struct LiveRuns {
  std::mutex mu;
  std::condition_variable cv;
  std::set<SimRun*> runs;
};
LiveRuns& live() {
  static LiveRuns* l = new LiveRuns;  // never destroyed: used from atexit
  return *l;
}

// A field's data moved into a heap block that its ArrayBuffer owns. A field the solver handed over
// as a train (QTT-native solvers) goes across as its cores, {modes, ranks, cores} plus its layout,
// with an empty `data`: the dense array is never made.
Napi::Object FieldToJs(Napi::Env env, tts::sim::Field& f) {
  if (f.is_tt()) {
    Napi::Array shape = Napi::Array::New(env, f.shape.size());
    for (uint32_t i = 0; i < f.shape.size(); ++i) shape.Set(i, Napi::Number::New(env, static_cast<double>(f.shape[i])));
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", Napi::String::New(env, f.name));
    o.Set("shape", shape);
    o.Set("data", Napi::Float64Array::New(env, 0));
    o.Set("layout", Napi::String::New(env, "interleaved"));
    o.Set("tt", PackedTrain::Pack(f.tt).ToJs(env));
    f.tt = {};
    return o;
  }
  const size_t n = f.data.size(), bytes = n * sizeof(double);
  Napi::ArrayBuffer ab;
  if (bytes == 0) {
    ab = Napi::ArrayBuffer::New(env, 0);
  } else {
    auto* owned = new std::vector<double>(std::move(f.data));
    try {
      ab = Napi::ArrayBuffer::New(
          env, owned->data(), bytes, [](Napi::Env, void*, std::vector<double>* v) { delete v; }, owned);
    } catch (const Napi::Error&) {
      // Runtimes that forbid external buffers: one copy instead.
      ab = Napi::ArrayBuffer::New(env, bytes);
      std::memcpy(ab.Data(), owned->data(), bytes);
      delete owned;
    }
  }
  Napi::Array shape = Napi::Array::New(env, f.shape.size());
  for (uint32_t i = 0; i < f.shape.size(); ++i) shape.Set(i, Napi::Number::New(env, static_cast<double>(f.shape[i])));
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", Napi::String::New(env, f.name));
  o.Set("shape", shape);
  o.Set("data", Napi::Float64Array::New(env, n, ab, 0));
  return o;
}

Napi::Array FieldsToJs(Napi::Env env, std::vector<tts::sim::Field>& fields) {
  Napi::Array a = Napi::Array::New(env, fields.size());
  for (uint32_t i = 0; i < fields.size(); ++i) a.Set(i, FieldToJs(env, fields[i]));
  return a;
}

class SimRun {
 public:
  SimRun(Napi::Env env, std::string solver, tts::sim::Params params)
      : solver_(std::move(solver)), params_(std::move(params)), deferred_(Napi::Promise::Deferred::New(env)) {}
  ~SimRun() {
    if (thread_.joinable()) thread_.detach();  // never reached in practice: the finalizer joins
  }

  // Main thread: starts the thread; returns {result, cancel, pause, resume}.
  static Napi::Object Start(Napi::Env env, std::shared_ptr<SimRun> run, Napi::Value on_progress,
                            Napi::Value on_snapshot, Napi::Value on_paused);

  void Cancel() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancel_.store(true);
    }
    cv_.notify_all();
  }

  void Pause() { pause_.store(true); }

  void Resume() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      pause_.store(false);
    }
    cv_.notify_all();
  }

  void Deliver(Napi::Env env, Message& m);  // main thread

 private:
  void Body();             // the run's own thread
  void WaitWhilePaused();  // the run's own thread
  tts::sim::Hooks MakeHooks();
  void Queue(Message* m);
  void Settle(Napi::Env env);

  const std::string solver_;
  const tts::sim::Params params_;
  Napi::Promise::Deferred deferred_;
  Napi::FunctionReference on_progress_, on_snapshot_, on_paused_;
  Napi::Reference<Napi::Value> callback_error_;  // what a JS hook threw; ends the run
  Tsfn tsfn_;
  std::thread thread_;

  std::atomic<bool> cancel_{false};
  std::atomic<bool> pause_{false};
  std::atomic<int64_t> done_{0}, total_{0};
  std::atomic<bool> progress_queued_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  int snapshots_in_flight_ = 0;

  // Written by the thread before it queues Done; read on the main thread when Done arrives.
  Failure failure_ = Failure::None;
  bool cancelled_ = false;
  std::string message_;
  tts::sim::Output output_;
};

void CallJs(Napi::Env env, Napi::Function, SimRun* run, Message* m) {
  std::unique_ptr<Message> own(m);
  // No environment: the function is being torn down after its finalizer joined the thread (and
  // may have freed the run); the message is only freed.
  if (env != nullptr) run->Deliver(env, *m);
}

void SimRun::Queue(Message* m) {
  if (tsfn_.NonBlockingCall(m) != napi_ok) {
    // Closing: the environment is going away; nobody is left to tell.
    if (m->kind == Message::Kind::Progress) progress_queued_.store(false);
    if (m->kind == Message::Kind::Snapshot) {
      std::lock_guard<std::mutex> lock(mu_);
      --snapshots_in_flight_;
    }
    delete m;
    cancel_.store(true);
  }
}

void SimRun::WaitWhilePaused() {
  Queue(new Message(Message::Kind::Paused));
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !pause_.load() || cancel_.load(); });
}

tts::sim::Hooks SimRun::MakeHooks() {
  tts::sim::Hooks h;
  // Solvers poll this outside any parallel region, so the thread may wait here with the run's
  // whole state where it is.
  h.cancelled = [this] {
    if (pause_.load(std::memory_order_relaxed) && !cancel_.load()) WaitWhilePaused();
    return cancel_.load(std::memory_order_relaxed);
  };
  if (!on_progress_.IsEmpty()) {
    h.progress = [this](int64_t done, int64_t total) {
      done_.store(done);
      total_.store(total);
      if (!progress_queued_.exchange(true)) Queue(new Message(Message::Kind::Progress));
    };
  }
  if (!on_snapshot_.IsEmpty()) {
    h.snapshot = [this](int64_t step, double t, const std::vector<tts::sim::Field>& fields) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return snapshots_in_flight_ < kSnapshotsInFlight || cancel_.load(); });
        if (cancel_.load()) return;  // the solver's next poll ends the run
        ++snapshots_in_flight_;
      }
      Queue(new Message(step, t, fields));
    };
  }
  return h;
}

// A simulation is batch work and must not take the CPU from requests (the storage API's latency
// is held to a bound while jobs run). On Linux nice is per thread and inherited by threads created
// later, so the OpenMP team of this run, made on its first parallel region from this thread, runs
// niced as well. Best effort: a failure leaves the default priority.
void LowerThreadPriority() {
#if defined(__linux__)
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
#endif
}

void SimRun::Body() {
  LowerThreadPriority();
  {
    std::lock_guard<std::mutex> lock(live().mu);
    live().runs.insert(this);
  }
  failure_ = CaptureFailure(
      [this] {
        try {
          output_ = tts::sim::run(solver_, params_, MakeHooks());
        } catch (const tts::sim::Cancelled& e) {
          cancelled_ = true;
          message_ = e.what();
        }
      },
      message_);
  {
    std::lock_guard<std::mutex> lock(live().mu);
    live().runs.erase(this);
  }
  live().cv.notify_all();
  Queue(new Message(Message::Kind::Done));
  tsfn_.Release();  // the last use of `this` on this thread
}

void SimRun::Deliver(Napi::Env env, Message& m) {
  // Nothing may escape: an exception leaving a ThreadSafeFunction callback ends the process.
  try {
    Napi::HandleScope scope(env);
    switch (m.kind) {
      case Message::Kind::Progress: {
        progress_queued_.store(false);
        const int64_t done = done_.load(), total = total_.load();
        if (callback_error_.IsEmpty()) {
          on_progress_.Call(
              {Napi::Number::New(env, static_cast<double>(done)), Napi::Number::New(env, static_cast<double>(total))});
        }
        break;
      }
      case Message::Kind::Snapshot: {
        {
          std::lock_guard<std::mutex> lock(mu_);
          --snapshots_in_flight_;
        }
        cv_.notify_all();
        if (callback_error_.IsEmpty()) {
          Napi::Array fields = FieldsToJs(env, m.fields);
          on_snapshot_.Call({Napi::Number::New(env, static_cast<double>(m.step)), Napi::Number::New(env, m.t), fields});
        }
        break;
      }
      case Message::Kind::Paused:
        if (callback_error_.IsEmpty() && !on_paused_.IsEmpty()) on_paused_.Call({});
        break;
      case Message::Kind::Done: Settle(env); break;
    }
  } catch (const Napi::Error& e) {
    // A hook threw: stop the run; the result rejects with what the hook threw.
    if (m.kind == Message::Kind::Done) {
      try {
        deferred_.Reject(MakeError(env, false, e.Message()).Value());
      } catch (...) {
      }
    } else if (callback_error_.IsEmpty()) {
      try {
        callback_error_ = Napi::Persistent(e.Value().As<Napi::Value>());
      } catch (...) {
      }
      Cancel();
    }
  } catch (...) {
    Cancel();
  }
}

void SimRun::Settle(Napi::Env env) {
  if (!callback_error_.IsEmpty()) {
    deferred_.Reject(callback_error_.Value());
    return;
  }
  if (cancelled_) {
    Napi::Error err = Napi::Error::New(env, message_);
    err.Set("code", Napi::String::New(env, kCancelledCode));
    deferred_.Reject(err.Value());
    return;
  }
  switch (failure_) {
    case Failure::None: {
      Napi::Object stats = Napi::Object::New(env);
      for (const auto& kv : output_.stats) stats.Set(kv.first, Napi::Number::New(env, kv.second));
      Napi::Object o = Napi::Object::New(env);
      o.Set("fields", FieldsToJs(env, output_.fields));
      o.Set("stats", stats);
      output_ = {};
      deferred_.Resolve(o);
      return;
    }
    case Failure::Invalid:
    case Failure::Internal: deferred_.Reject(MakeError(env, failure_ == Failure::Invalid, message_).Value()); return;
  }
}

Napi::Object SimRun::Start(Napi::Env env, std::shared_ptr<SimRun> run, Napi::Value on_progress, Napi::Value on_snapshot,
                           Napi::Value on_paused) {
  if (on_progress.IsFunction()) run->on_progress_ = Napi::Persistent(on_progress.As<Napi::Function>());
  if (on_snapshot.IsFunction()) run->on_snapshot_ = Napi::Persistent(on_snapshot.As<Napi::Function>());
  if (on_paused.IsFunction()) run->on_paused_ = Napi::Persistent(on_paused.As<Napi::Function>());
  // The finalizer owns one reference; it runs on the main thread once the thread has released the
  // function and every queued message has been delivered (or dropped at teardown).
  auto* keep = new std::shared_ptr<SimRun>(run);
  run->tsfn_ = Tsfn::New(
      env, "ttstore.simulate", 0, 1, run.get(),
      [](Napi::Env, std::shared_ptr<SimRun>* owner, SimRun* r) {
        r->Cancel();
        if (r->thread_.joinable()) r->thread_.join();
        delete owner;
      },
      keep);
  try {
    SimRun* raw = run.get();
    run->thread_ = std::thread([raw] { raw->Body(); });
  } catch (const std::exception& e) {
    run->tsfn_.Release();
    throw MakeError(env, false, std::string("could not start a simulation thread: ") + e.what());
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("result", run->deferred_.Promise());
  // Each control is a JS function that holds the run alive as long as JS holds the function.
  auto control = [&](const char* name, void (SimRun::*act)()) {
    auto call = [run, act](const Napi::CallbackInfo& info) -> Napi::Value {
      ((*run).*act)();
      return info.Env().Undefined();
    };
    o.Set(name, Napi::Function::New(env, call, name));
  };
  control("cancel", &SimRun::Cancel);
  control("pause", &SimRun::Pause);
  control("resume", &SimRun::Resume);
  return o;
}

// At process exit with runs in flight: cancel them and give their threads a moment to leave the
// solver, so that no solver code runs while static destructors do.
void StopRunsAtExit() {
  LiveRuns& l = live();
  std::unique_lock<std::mutex> lock(l.mu);
  for (SimRun* r : l.runs) r->Cancel();
  l.cv.wait_for(lock, std::chrono::seconds(10), [&] { return l.runs.empty(); });
}

tts::sim::Params ToParams(Napi::Env env, Napi::Value v) {
  if (!v.IsObject() || v.IsArray() || v.IsFunction()) {
    ThrowTypeError(env, "params must be an object of numbers, strings and booleans");
  }
  Napi::Object o = v.As<Napi::Object>();
  Napi::Array keys = o.GetPropertyNames();
  tts::sim::Params p;
  for (uint32_t i = 0; i < keys.Length(); ++i) {
    const std::string k = keys.Get(i).ToString().Utf8Value();
    Napi::Value x = o.Get(k);
    if (x.IsNumber()) {
      p[k] = x.As<Napi::Number>().DoubleValue();
    } else if (x.IsString()) {
      p[k] = x.As<Napi::String>().Utf8Value();
    } else if (x.IsBoolean()) {
      p[k] = x.As<Napi::Boolean>().Value();
    } else {
      ThrowTypeError(env, "param " + k + " must be a number, string or boolean");
    }
  }
  return p;
}

}  // namespace

Napi::Value Solvers(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::vector<std::string> names = tts::sim::solvers();
  Napi::Array a = Napi::Array::New(env, names.size());
  for (uint32_t i = 0; i < names.size(); ++i) a.Set(i, Napi::String::New(env, names[i]));
  return a;
}

Napi::Value Simulate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { std::atexit(StopRunsAtExit); });
  if (!info[0].IsString()) ThrowTypeError(env, "solver must be a string");
  const std::string solver = info[0].As<Napi::String>().Utf8Value();
  tts::sim::Params params = ToParams(env, info[1]);
  const char* hooks[] = {"onProgress", "onSnapshot", "onPaused"};
  for (int k = 2; k <= 4; ++k) {
    if (!info[k].IsUndefined() && !info[k].IsNull() && !info[k].IsFunction()) {
      ThrowTypeError(env, std::string(hooks[k - 2]) + " must be a function");
    }
  }
  tts::sim::validate(solver, params);  // InvalidArgument -> RangeError ERR_TTS_INVALID (addon.cpp)
  auto run = std::make_shared<SimRun>(env, solver, std::move(params));
  return SimRun::Start(env, run, info[2], info[3], info[4]);
}

Napi::Value CheckSimulation(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) ThrowTypeError(env, "solver must be a string");
  tts::sim::validate(info[0].As<Napi::String>().Utf8Value(), ToParams(env, info[1]));
  return env.Undefined();
}

Napi::Value SolverParams(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  using Type = tts::sim::ParamSpec::Type;
  Napi::Object all = Napi::Object::New(env);
  for (const std::string& name : tts::sim::solvers()) {
    const std::vector<tts::sim::ParamSpec>& table = tts::sim::solver(name).params();
    Napi::Array list = Napi::Array::New(env, table.size());
    for (uint32_t i = 0; i < table.size(); ++i) {
      const tts::sim::ParamSpec& p = table[i];
      Napi::Object o = Napi::Object::New(env);
      o.Set("name", p.name);
      o.Set("type", p.type == Type::Integer  ? "integer"
                    : p.type == Type::Number ? "number"
                    : p.type == Type::Choice ? "choice"
                                             : "list");
      o.Set("required", p.required);
      o.Set("description", p.doc);
      if (p.type == Type::Integer || p.type == Type::Number) {
        o.Set("minimum", p.min);
        o.Set("maximum", p.max);
        o.Set("exclusiveMinimum", p.min_open);
        o.Set("exclusiveMaximum", p.max_open);
        if (p.fallback) o.Set("default", *p.fallback);
      } else if (p.type == Type::Choice) {
        Napi::Array choices = Napi::Array::New(env, p.choices.size());
        for (uint32_t k = 0; k < p.choices.size(); ++k) choices.Set(k, p.choices[k]);
        o.Set("choices", choices);
        o.Set("default", p.choices.front());
      } else {
        o.Set("maxItems", p.max);
      }
      list.Set(i, o);
    }
    all.Set(name, list);
  }
  Napi::Object limits = Napi::Object::New(env);
  limits.Set("maxSteps", static_cast<double>(tts::sim::kMaxSteps));
  limits.Set("maxSnapshots", static_cast<double>(tts::sim::kMaxSnapshots));
  Napi::Object out = Napi::Object::New(env);
  out.Set("solvers", all);
  out.Set("limits", limits);
  return out;
}

}  // namespace tts_addon
