// dot(a, b), norm(a), distance(a, b) -> Promise<number>; dotBatch(q, candidates) -> Promise<Float64Array>.
// Modes are compared here so a mismatch is a synchronous RangeError naming both sides.
#include "bindings.hpp"
#include "worker.hpp"

namespace tts_addon {
namespace {

enum class Op { Dot, Norm, Distance };

class ContractWorker : public PromiseWorker {
 public:
  ContractWorker(Napi::Env env, Op op) : PromiseWorker(env, "ttstore.contract"), op_(op) {}
  using PromiseWorker::keep_;
  TrainView a_, b_;

 protected:
  void Run() override {
    tts::TensorTrain a = a_.Materialize();
    if (op_ == Op::Norm) {
      value_ = tts::norm(a);
      return;
    }
    tts::TensorTrain b = b_.Materialize();
    value_ = op_ == Op::Dot ? tts::dot(a, b) : tts::distance(a, b);
  }
  Napi::Value Result(Napi::Env env) override { return Napi::Number::New(env, value_); }

 private:
  Op op_;
  double value_ = 0;
};

class DotBatchWorker : public PromiseWorker {
 public:
  explicit DotBatchWorker(Napi::Env env) : PromiseWorker(env, "ttstore.dotBatch") {}
  using PromiseWorker::keep_;
  TrainView q_;
  std::vector<TrainView> cands_;

 protected:
  void Run() override {
    tts::TensorTrain q = q_.Materialize();
    std::vector<tts::TensorTrain> cands;
    cands.reserve(cands_.size());
    for (const TrainView& c : cands_) cands.push_back(c.Materialize());
    std::vector<const tts::TensorTrain*> ptrs;
    ptrs.reserve(cands.size());
    for (const tts::TensorTrain& c : cands) ptrs.push_back(&c);
    values_ = tts::dot_batch(q, ptrs);
  }
  Napi::Value Result(Napi::Env env) override {
    Napi::Float64Array out = Napi::Float64Array::New(env, values_.size());
    for (size_t i = 0; i < values_.size(); ++i) out[i] = values_[i];
    return out;
  }

 private:
  std::vector<double> values_;
};

void SameModes(Napi::Env env, const TrainView& a, const TrainView& b, const std::string& what) {
  if (a.modes != b.modes) {
    ThrowRangeError(env, what + ": modes " + FormatList(a.modes) + " and " + FormatList(b.modes) + " differ");
  }
}

Napi::Value Pairwise(const Napi::CallbackInfo& info, Op op) {
  Napi::Env env = info.Env();
  auto w = std::make_unique<ContractWorker>(env, op);
  w->a_ = ToTrain(env, info[0], "a", w->keep_);
  if (op != Op::Norm) {
    w->b_ = ToTrain(env, info[1], "b", w->keep_);
    SameModes(env, w->a_, w->b_, op == Op::Dot ? "dot" : "distance");
  }
  return Launch(std::move(w));
}

}  // namespace

Napi::Value Dot(const Napi::CallbackInfo& info) { return Pairwise(info, Op::Dot); }
Napi::Value Norm(const Napi::CallbackInfo& info) { return Pairwise(info, Op::Norm); }
Napi::Value Distance(const Napi::CallbackInfo& info) { return Pairwise(info, Op::Distance); }

Napi::Value DotBatch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto w = std::make_unique<DotBatchWorker>(env);
  w->q_ = ToTrain(env, info[0], "q", w->keep_);
  if (!info[1].IsArray()) ThrowTypeError(env, "candidates must be an array of tensor trains");
  Napi::Array cands = info[1].As<Napi::Array>();
  uint32_t n = cands.Length();
  w->cands_.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    std::string name = "candidates[" + std::to_string(i) + "]";
    w->cands_.push_back(ToTrain(env, cands.Get(i), name, w->keep_));
    SameModes(env, w->q_, w->cands_.back(), "dotBatch: query and " + name);
  }
  return Launch(std::move(w));
}

}  // namespace tts_addon
