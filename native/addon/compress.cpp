// compress(data, dtype, shape, {tolerance, maxRank?, layout?, gathered?, gatheredSumSquares?})
//   -> Promise<CompressResult>.
// Without `layout` the core chooses it per array (tts::compress_best_layout, over this backend's
// sweep); the result names the layout its train is in.
// The input bytes are read in place on the worker thread; the cores come back in one external
// ArrayBuffer (Float32Array cores when the core chose float32, else Float64Array). `gathered`: a
// Float64Array of the input's values in C order, converted by the caller (while the upload arrived),
// which the first sweep takes as its workspace and overwrites; row_major layouts only, where mode
// order is C order. `gatheredSumSquares`: the sum of the squares of `gathered`'s values, taken while
// converting (widen's lanes), which spares the sweep that pass.

#include "backend.hpp"
#include "bindings.hpp"
#include "worker.hpp"

namespace tts_addon {
namespace {

class CompressWorker : public PromiseWorker {
 public:
  CompressWorker(Napi::Env env, Bytes data, tts::DType dtype, tts::QttLayout layout, bool choose_layout,
                 tts::SvdOptions opt, tts::CompressOptions more)
      : PromiseWorker(env, "ttstore.compress"),
        data_(data),
        dtype_(dtype),
        layout_(std::move(layout)),
        choose_layout_(choose_layout),
        opt_(opt),
        more_(std::move(more)) {}
  using PromiseWorker::keep_;

 protected:
  void Run() override {
    tts::ArrayView a{data_.data, dtype_, layout_.numel()};
    tts::CompressResult r;
    if (choose_layout_) {
      tts::LayoutChosen c = tts::compress_best_layout(
          a, layout_.shape, opt_, more_,
          [&](const tts::QttLayout& l, const tts::CompressOptions& m) { return BackendCompress(a, l, opt_, m); });
      layout_ = std::move(c.layout);
      r = std::move(c.result);
    } else {
      r = BackendCompress(a, layout_, opt_, more_);
    }
    fingerprint_ = r.fingerprint;
    compressible_ = r.compressible;
    stored_bytes_ = r.tt.stored_bytes();
    packed_ = PackedTrain::Pack(r.tt);
  }

  Napi::Value Result(Napi::Env env) override {
    Napi::Object o = Napi::Object::New(env);
    o.Set("tt", packed_.ToJs(env));
    o.Set("layout", tts::layout_name(layout_.kind));
    o.Set("fingerprint", FingerprintToJs(env, fingerprint_));
    o.Set("storedCoreBytes", Napi::Number::New(env, static_cast<double>(stored_bytes_)));
    o.Set("compressible", Napi::Boolean::New(env, compressible_));
    return o;
  }

 private:
  Bytes data_;
  tts::DType dtype_;
  tts::QttLayout layout_;
  bool choose_layout_;
  tts::SvdOptions opt_;
  tts::CompressOptions more_;
  tts::Fingerprint fingerprint_;
  bool compressible_ = false;
  int64_t stored_bytes_ = 0;
  PackedTrain packed_;
};

}  // namespace

Napi::Value Compress(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  tts::DType dtype = ToDType(env, info[1]);
  std::vector<int64_t> shape = ToShape(env, info[2]);
  Bytes data = ToArrayBytes(env, info[0], "data", dtype, shape);
  tts::SvdOptions opt = ToSvdOptions(env, info[3]);
  const Napi::Value layout_arg = info[3].As<Napi::Object>().Get("layout");
  tts::QttLayout layout = ToLayout(env, shape, layout_arg);
  const Napi::Value g = info[3].As<Napi::Object>().Get("gathered");
  tts::CompressOptions more;
  if (!g.IsUndefined()) {
    if (!g.IsTypedArray() || g.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
      ThrowTypeError(env, "options.gathered must be a Float64Array");
    }
    Napi::Float64Array f = g.As<Napi::Float64Array>();
    if (static_cast<int64_t>(f.ElementLength()) != layout.numel()) {
      ThrowRangeError(env, "options.gathered holds " + std::to_string(f.ElementLength()) + " values, the array " +
                               std::to_string(layout.numel()));
    }
    if (layout.kind != tts::LayoutKind::RowMajor) {
      ThrowRangeError(env, "options.gathered is in C order, the mode order of the row_major layout only");
    }
    more.gathered = f.Data();
  }
  const Napi::Value gs = info[3].As<Napi::Object>().Get("gatheredSumSquares");
  if (!gs.IsUndefined()) {
    if (more.gathered == nullptr) ThrowTypeError(env, "options.gatheredSumSquares needs options.gathered");
    if (!gs.IsNumber()) ThrowTypeError(env, "options.gatheredSumSquares must be a number");
    more.gathered_sum_squares = gs.As<Napi::Number>().DoubleValue();
    if (more.gathered_sum_squares < 0) ThrowRangeError(env, "options.gatheredSumSquares must not be negative");
  }
  auto w = std::make_unique<CompressWorker>(env, data, dtype, std::move(layout), layout_arg.IsUndefined(), opt, more);
  w->keep_.Add(env, info[0]);
  if (more.gathered != nullptr) w->keep_.Add(env, g);
  return Launch(std::move(w));
}

}  // namespace tts_addon
