// round(tt, {tolerance, maxRank?}) -> Promise<TensorTrain> with Float64Array cores.
#include "bindings.hpp"
#include "worker.hpp"

namespace tts_addon {
namespace {

class RoundWorker : public PromiseWorker {
 public:
  RoundWorker(Napi::Env env, tts::SvdOptions opt) : PromiseWorker(env, "ttstore.round"), opt_(opt) {}
  using PromiseWorker::keep_;
  TrainView tt_;

 protected:
  void Run() override { packed_ = PackedTrain::Pack(tts::round(tt_.Materialize(), opt_)); }
  Napi::Value Result(Napi::Env env) override { return packed_.ToJs(env); }

 private:
  tts::SvdOptions opt_;
  PackedTrain packed_;
};

}  // namespace

Napi::Value Round(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  tts::SvdOptions opt = ToSvdOptions(env, info[1]);
  auto w = std::make_unique<RoundWorker>(env, opt);
  w->tt_ = ToTrain(env, info[0], "tt", w->keep_);
  return Launch(std::move(w));
}

}  // namespace tts_addon
