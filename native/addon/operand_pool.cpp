// OperandPool: query operands (trains and uncompressed arrays) held in native memory under numeric
// ids, so that a top-K over thousands of candidates crosses the boundary as one Float64Array of ids
// instead of thousands of objects. Which ids stay (the byte budget, eviction) is the caller's policy;
// the pool only holds, counts and scores.
//
//   new OperandPool()
//   addTrain(id, tt, modes?) -> Promise<bytes>               copies the cores (off the main thread);
//                                                            with modes, resplits into them first
//   addDense(id, data, dtype, shape, layout) -> Promise<bytes> gathers into mode order (off thread)
//   remove(id) -> boolean; has(id) -> boolean; stats() -> {entries, bytes}
//   norm(id) -> Promise<number>
//   score(queryId, queryNorm, ids: Float64Array, norms: Float64Array, metric) -> Promise<Float64Array>
//   scoreWork(queryId, ids: Float64Array, metric) -> Promise<Float64Array>   what scoring each id
//                                                            would cost (tts::score_work, from ranks
//                                                            and modes; off the main thread, as it
//                                                            reads every candidate's header)
//
// The map is touched only on the main thread (inserts happen when an add settles). A running score
// reads its candidates through plain pointers (10k reference counts cost more than the lookups): while
// any score (or scoreWork) runs, operands removed or replaced are retired, not freed, until the last
// one settles.
#include <cmath>
#include <memory>
#include <unordered_map>

#include "backend.hpp"
#include "bindings.hpp"
#include "ttstore/query.hpp"
#include "worker.hpp"

namespace tts_addon {
namespace {

using OperandPtr = std::shared_ptr<const tts::Operand>;

struct PoolState {
  std::unordered_map<int64_t, OperandPtr> entries;
  int64_t bytes = 0;
  int64_t scoring = 0;              // scores in flight
  std::vector<OperandPtr> retired;  // removed or replaced while scoring > 0

  void Put(int64_t id, OperandPtr op) {
    auto it = entries.find(id);
    if (it != entries.end()) {
      bytes -= it->second->bytes();
      Retire(std::move(it->second));
      it->second = std::move(op);
      bytes += it->second->bytes();
    } else {
      bytes += op->bytes();
      entries.emplace(id, std::move(op));
    }
  }
  bool Remove(int64_t id) {
    auto it = entries.find(id);
    if (it == entries.end()) return false;
    bytes -= it->second->bytes();
    Retire(std::move(it->second));
    entries.erase(it);
    return true;
  }
  void Retire(OperandPtr op) {
    if (scoring > 0) retired.push_back(std::move(op));
  }
};

// Marks a score in flight for its lifetime (made and destroyed on the main thread).
class ScoringMark {
 public:
  explicit ScoringMark(std::shared_ptr<PoolState> state) : state_(std::move(state)) { ++state_->scoring; }
  ~ScoringMark() {
    if (--state_->scoring == 0) state_->retired.clear();
  }
  ScoringMark(const ScoringMark&) = delete;
  ScoringMark& operator=(const ScoringMark&) = delete;

 private:
  std::shared_ptr<PoolState> state_;
};

constexpr int64_t kMaxSafeInteger = (int64_t{1} << 53) - 1;

int64_t ToId(Napi::Env env, Napi::Value v, const std::string& what) {
  return ToInteger(env, v, what, -kMaxSafeInteger, kMaxSafeInteger);
}

const OperandPtr& Lookup(Napi::Env env, const PoolState& s, int64_t id, const char* what) {
  auto it = s.entries.find(id);
  if (it == s.entries.end()) ThrowRangeError(env, std::string(what) + " " + std::to_string(id) + " is not in the pool");
  return it->second;
}

// Builds one operand off the main thread and puts it in the pool when it settles.
class AddWorker : public PromiseWorker {
 public:
  AddWorker(Napi::Env env, std::shared_ptr<PoolState> state, int64_t id)
      : PromiseWorker(env, "ttstore.pool.add"), state_(std::move(state)), id_(id) {}
  using PromiseWorker::keep_;
  // One of the two inputs is set.
  TrainView train_;
  std::vector<int64_t> modes_;  // empty: held in the train's own modes
  bool dense_ = false;
  Bytes data_;
  tts::DType dtype_ = tts::DType::F64;
  tts::QttLayout layout_;

 protected:
  void Run() override {
    if (dense_) {
      op_ = std::make_shared<const tts::Operand>(
          tts::Operand::dense(tts::ArrayView{data_.data, dtype_, layout_.numel()}, layout_));
    } else if (!modes_.empty() && modes_ != train_.modes) {
      // A train put with its own split, held in the split the other entries of its shape have.
      op_ = std::make_shared<const tts::Operand>(tts::Operand::train(tts::resplit(train_.Materialize(), modes_)));
    } else {
      std::vector<const void*> cores(train_.cores.begin(), train_.cores.end());
      op_ = std::make_shared<const tts::Operand>(tts::Operand::train(train_.modes, train_.ranks, cores, train_.f32));
    }
  }
  Napi::Value Result(Napi::Env env) override {
    const int64_t bytes = op_->bytes();
    state_->Put(id_, std::move(op_));
    return Napi::Number::New(env, static_cast<double>(bytes));
  }

 private:
  std::shared_ptr<PoolState> state_;
  int64_t id_;
  OperandPtr op_;
};

class NormWorker : public PromiseWorker {
 public:
  NormWorker(Napi::Env env, OperandPtr op) : PromiseWorker(env, "ttstore.pool.norm"), op_(std::move(op)) {}

 protected:
  void Run() override { value_ = tts::norm(*op_); }
  Napi::Value Result(Napi::Env env) override { return Napi::Number::New(env, value_); }

 private:
  OperandPtr op_;
  double value_ = 0;
};

class ScoreWorker : public PromiseWorker {
 public:
  ScoreWorker(Napi::Env env, std::shared_ptr<PoolState> state)
      : PromiseWorker(env, "ttstore.pool.score"), mark_(std::move(state)) {}
  OperandPtr query_;
  double query_norm_ = 0;
  std::vector<const tts::Operand*> cands_;  // alive while mark_ is (see PoolState::retired)
  std::vector<int64_t> ids_;                // the candidates' ids (GPU core placement keys them the same way)
  std::vector<double> norms_;
  tts::Metric metric_ = tts::Metric::Cosine;

 protected:
  void Run() override {
    // Candidates whose cores sit on a GPU (serve target gpu) are contracted there; the rest here.
    const std::vector<double> known = BackendResidentDots(*query_, ids_);
    scores_ = tts::score_batch(*query_, query_norm_, cands_, norms_, metric_, &known);
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Float64Array out = Napi::Float64Array::New(env, scores_.size());
    std::copy(scores_.begin(), scores_.end(), out.Data());
    return out;
  }

 private:
  ScoringMark mark_;
  std::vector<double> scores_;
};

// What scoring each candidate would cost, off the main thread (a header read per candidate: ~0.1 us,
// most of it cache misses, so 10k candidates would hold the event loop a millisecond).
class WorkWorker : public PromiseWorker {
 public:
  WorkWorker(Napi::Env env, std::shared_ptr<PoolState> state)
      : PromiseWorker(env, "ttstore.pool.scoreWork"), mark_(std::move(state)) {}
  OperandPtr query_;
  std::vector<const tts::Operand*> cands_;  // alive while mark_ is (see PoolState::retired)
  tts::Metric metric_ = tts::Metric::Cosine;

 protected:
  void Run() override {
    works_.resize(cands_.size());
    for (std::size_t j = 0; j < cands_.size(); ++j) works_[j] = tts::score_work(*query_, *cands_[j], metric_);
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Float64Array out = Napi::Float64Array::New(env, works_.size());
    std::copy(works_.begin(), works_.end(), out.Data());
    return out;
  }

 private:
  ScoringMark mark_;
  std::vector<double> works_;
};

const double* Float64View(Napi::Env env, Napi::Value v, const char* what, size_t* length) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
    ThrowTypeError(env, std::string(what) + " must be a Float64Array");
  }
  Napi::Float64Array a = v.As<Napi::Float64Array>();
  *length = a.ElementLength();
  return a.Data();
}

// The operands under `ids` (integers held in the pool), in order; their ids into `out_ids` when given.
std::vector<const tts::Operand*> Candidates(Napi::Env env, const PoolState& s, Napi::Value v,
                                            std::vector<int64_t>* out_ids) {
  size_t n = 0;
  const double* ids = Float64View(env, v, "ids", &n);
  std::vector<const tts::Operand*> cands;
  cands.reserve(n);
  if (out_ids) out_ids->reserve(n);
  for (size_t j = 0; j < n; ++j) {
    const double id = ids[j];
    if (!(std::trunc(id) == id && std::fabs(id) <= static_cast<double>(kMaxSafeInteger))) {
      ThrowTypeError(env, "ids[" + std::to_string(j) + "] must be an integer");
    }
    cands.push_back(Lookup(env, s, static_cast<int64_t>(id), "candidate id").get());
    if (out_ids) out_ids->push_back(static_cast<int64_t>(id));
  }
  return cands;
}

tts::Metric ToMetric(Napi::Env env, Napi::Value v) {
  if (!v.IsString()) ThrowTypeError(env, "metric must be a string");
  return tts::metric_from_name(v.As<Napi::String>().Utf8Value());
}

class OperandPool : public Napi::ObjectWrap<OperandPool> {
 public:
  static Napi::Function Class(Napi::Env env) {
    return DefineClass(env, "OperandPool",
                       {
                           InstanceMethod<&OperandPool::AddTrain>("addTrain"),
                           InstanceMethod<&OperandPool::AddDense>("addDense"),
                           InstanceMethod<&OperandPool::Remove>("remove"),
                           InstanceMethod<&OperandPool::Has>("has"),
                           InstanceMethod<&OperandPool::Stats>("stats"),
                           InstanceMethod<&OperandPool::Norm>("norm"),
                           InstanceMethod<&OperandPool::Score>("score"),
                           InstanceMethod<&OperandPool::ScoreWork>("scoreWork"),
                       });
  }

  explicit OperandPool(const Napi::CallbackInfo& info)
      : Napi::ObjectWrap<OperandPool>(info), state_(std::make_shared<PoolState>()) {}

 private:
  // Every method runs its body through Guard, so that core errors become JS errors with a code.
  template <class F>
  Napi::Value Guard(const Napi::CallbackInfo& info, F&& f) {
    try {
      return f();
    } catch (const Napi::Error&) {
      throw;
    } catch (const tts::InvalidArgument& e) {
      throw MakeError(info.Env(), true, e.what());
    } catch (const std::exception& e) {
      throw MakeError(info.Env(), false, e.what());
    }
  }

  Napi::Value AddTrain(const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      Napi::Env env = info.Env();
      auto w = std::make_unique<AddWorker>(env, state_, ToId(env, info[0], "id"));
      w->train_ = ToTrain(env, info[1], "tt", w->keep_);
      if (!info[2].IsUndefined() && !info[2].IsNull()) {
        w->modes_ = ToIntegerList(env, info[2], "modes", 1, (int64_t{1} << 53) - 1);
      }
      return Launch(std::move(w));
    });
  }

  Napi::Value AddDense(const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      Napi::Env env = info.Env();
      auto w = std::make_unique<AddWorker>(env, state_, ToId(env, info[0], "id"));
      w->dense_ = true;
      w->dtype_ = ToDType(env, info[2]);
      const std::vector<int64_t> shape = ToShape(env, info[3]);
      w->data_ = ToArrayBytes(env, info[1], "data", w->dtype_, shape);
      if (tts_addon::ShapeNumel(shape) == 0) ThrowRangeError(env, "an array without elements has no operand");
      w->layout_ = ToLayout(env, shape, info[4]);
      w->keep_.Add(env, info[1]);
      return Launch(std::move(w));
    });
  }

  Napi::Value Remove(const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      return Napi::Boolean::New(info.Env(), state_->Remove(ToId(info.Env(), info[0], "id")));
    });
  }

  Napi::Value Has(const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      const int64_t id = ToId(info.Env(), info[0], "id");
      return Napi::Boolean::New(info.Env(), state_->entries.count(id) > 0);
    });
  }

  Napi::Value Stats(const Napi::CallbackInfo& info) {
    Napi::Object o = Napi::Object::New(info.Env());
    o.Set("entries", Napi::Number::New(info.Env(), static_cast<double>(state_->entries.size())));
    o.Set("bytes", Napi::Number::New(info.Env(), static_cast<double>(state_->bytes)));
    return o;
  }

  Napi::Value Norm(const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      Napi::Env env = info.Env();
      OperandPtr op = Lookup(env, *state_, ToId(env, info[0], "id"), "id");
      return Launch(std::make_unique<NormWorker>(env, std::move(op)));
    });
  }

  Napi::Value Score(const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      Napi::Env env = info.Env();
      auto w = std::make_unique<ScoreWorker>(env, state_);
      w->query_ = Lookup(env, *state_, ToId(env, info[0], "queryId"), "query id");
      if (!info[1].IsNumber()) ThrowTypeError(env, "queryNorm must be a number");
      w->query_norm_ = info[1].As<Napi::Number>().DoubleValue();
      size_t n_norms = 0;
      const double* norms = Float64View(env, info[3], "norms", &n_norms);
      w->metric_ = ToMetric(env, info[4]);
      w->cands_ = Candidates(env, *state_, info[2], &w->ids_);
      if (w->cands_.size() != n_norms) {
        ThrowRangeError(
            env, "ids has " + std::to_string(w->cands_.size()) + " entries but norms " + std::to_string(n_norms));
      }
      w->norms_.assign(norms, norms + n_norms);
      return Launch(std::move(w));
    });
  }

  Napi::Value ScoreWork(const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      Napi::Env env = info.Env();
      auto w = std::make_unique<WorkWorker>(env, state_);
      w->query_ = Lookup(env, *state_, ToId(env, info[0], "queryId"), "query id");
      w->metric_ = ToMetric(env, info[2]);
      w->cands_ = Candidates(env, *state_, info[1], nullptr);
      return Launch(std::move(w));
    });
  }

  std::shared_ptr<PoolState> state_;
};

}  // namespace

void RegisterOperandPool(Napi::Env env, Napi::Object exports) { exports.Set("OperandPool", OperandPool::Class(env)); }

}  // namespace tts_addon
