// Parts of an entry (ttstore/selection.hpp): a selection is {level?: number[], region?: [start, stop,
// step][], points?: Float64Array (n x axes indices, row after row)}, slices already normalised.
// selection(shape, selection, train?) -> {shape, work}: checked and costed on the main thread, from
//   sizes alone (train: {modes, ranks, layout}; absent: a dense array of shape)
// reconstructSelection(tt, shape, layout, dtype, selection) -> Promise<Uint8Array>
// selectDense(data, dtype, shape, selection) -> Promise<Uint8Array>
#include "ttstore/selection.hpp"

#include <cmath>
#include <memory>

#include "backend.hpp"
#include "bindings.hpp"
#include "worker.hpp"

namespace tts_addon {
namespace {

constexpr int64_t kMaxIndex = (int64_t{1} << 53) - 1;

tts::Selection ToSelection(Napi::Env env, Napi::Value v) {
  if (!v.IsObject() || v.IsArray()) ThrowTypeError(env, "selection must be an object {level?, region?, points?}");
  Napi::Object o = v.As<Napi::Object>();
  tts::Selection s;
  Napi::Value level = o.Get("level");
  if (!level.IsUndefined()) {
    for (int64_t l : ToIntegerList(env, level, "selection.level", 0, 62)) s.level.push_back(static_cast<int>(l));
  }
  Napi::Value points = o.Get("points");
  Napi::Value region = o.Get("region");
  if (!points.IsUndefined()) {
    if (!points.IsTypedArray() || points.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
      ThrowTypeError(env, "selection.points must be a Float64Array");
    }
    Napi::Float64Array p = points.As<Napi::Float64Array>();
    s.by_points = true;
    s.points.resize(p.ElementLength());
    for (size_t i = 0; i < p.ElementLength(); ++i) {
      const double x = p[i];
      if (!(std::fabs(x) <= static_cast<double>(kMaxIndex)) || std::floor(x) != x) {
        ThrowRangeError(env, "selection.points holds a value that is not an integer index");
      }
      s.points[i] = static_cast<int64_t>(x);
    }
  } else if (!region.IsUndefined()) {
    if (!region.IsArray()) ThrowTypeError(env, "selection.region must be an array of [start, stop, step]");
    Napi::Array r = region.As<Napi::Array>();
    for (uint32_t a = 0; a < r.Length(); ++a) {
      const std::vector<int64_t> t =
          ToIntegerList(env, r.Get(a), "selection.region[" + std::to_string(a) + "]", -kMaxIndex, kMaxIndex);
      if (t.size() != 3)
        ThrowRangeError(env, "selection.region[" + std::to_string(a) + "] must be [start, stop, step]");
      s.region.push_back(tts::AxisSlice{t[0], t[1], t[2]});
    }
  } else {
    ThrowTypeError(env, "selection needs a region or points");
  }
  return s;
}

Napi::Array ToJsList(Napi::Env env, const std::vector<int64_t>& v) {
  Napi::Array a = Napi::Array::New(env, v.size());
  for (uint32_t i = 0; i < v.size(); ++i) a.Set(i, Napi::Number::New(env, static_cast<double>(v[i])));
  return a;
}

class SelectionWorker : public PromiseWorker {
 public:
  SelectionWorker(Napi::Env env, tts::Selection s, std::vector<int64_t> shape, tts::DType dtype)
      : PromiseWorker(env, "ttstore.selection"), s_(std::move(s)), shape_(std::move(shape)), dtype_(dtype) {}
  using PromiseWorker::keep_;
  bool from_train_ = false;
  TrainView tt_;
  tts::QttLayout layout_;
  Bytes dense_;

 protected:
  void Run() override {
    double n = 1;
    for (int64_t x : tts::selection_shape(shape_, s_)) n *= static_cast<double>(x);
    const int64_t numel = static_cast<int64_t>(n);
    out_.Allocate(static_cast<size_t>(numel) * tts::dtype_size(dtype_));
    tts::MutableArrayView out{out_.data.get(), dtype_, numel};
    if (from_train_) {
      BackendReconstructSelection(tt_.Materialize(), layout_, s_, out);
    } else {
      tts::select_dense(tts::ArrayView{dense_.data, dtype_, ShapeNumel(shape_)}, shape_, s_, out);
    }
  }

  Napi::Value Result(Napi::Env env) override { return out_.ToJs(env); }

 private:
  tts::Selection s_;
  std::vector<int64_t> shape_;
  tts::DType dtype_;
  OutputBytes out_;
};

}  // namespace

Napi::Value Selection(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::vector<int64_t> shape = ToShape(env, info[0]);
  const tts::Selection s = ToSelection(env, info[1]);
  double work = 0;
  const std::vector<int64_t> out = tts::selection_shape(shape, s);
  if (info[2].IsUndefined()) {
    work = tts::dense_selection_work(shape, s);
  } else {
    if (!info[2].IsObject()) ThrowTypeError(env, "train must be {modes, ranks, layout}");
    Napi::Object t = info[2].As<Napi::Object>();
    const std::vector<int64_t> modes = ToIntegerList(env, t.Get("modes"), "train.modes", 1, kMaxIndex);
    const std::vector<int64_t> ranks = ToIntegerList(env, t.Get("ranks"), "train.ranks", 1, kMaxIndex);
    const tts::QttLayout layout = ToTrainLayout(env, shape, ToLayoutKind(env, t.Get("layout")), modes);
    work = tts::selection_work(modes, ranks, layout, s);
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("shape", ToJsList(env, out));
  o.Set("work", Napi::Number::New(env, work));
  return o;
}

Napi::Value ReconstructSelection(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  KeepAlive keep;
  std::vector<int64_t> shape = ToShape(env, info[1]);
  TrainView tt = ToTrain(env, info[0], "tt", keep);
  tts::QttLayout layout = ToTrainLayout(env, shape, ToLayoutKind(env, info[2]), tt.modes);
  tts::DType dtype = ToDType(env, info[3]);
  auto w = std::make_unique<SelectionWorker>(env, ToSelection(env, info[4]), std::move(shape), dtype);
  w->keep_ = std::move(keep);
  w->from_train_ = true;
  w->tt_ = std::move(tt);
  w->layout_ = std::move(layout);
  return Launch(std::move(w));
}

Napi::Value SelectDense(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  tts::DType dtype = ToDType(env, info[1]);
  std::vector<int64_t> shape = ToShape(env, info[2]);
  Bytes data = ToArrayBytes(env, info[0], "data", dtype, shape);
  auto w = std::make_unique<SelectionWorker>(env, ToSelection(env, info[3]), std::move(shape), dtype);
  w->keep_.Add(env, info[0]);
  w->dense_ = data;
  return Launch(std::move(w));
}

}  // namespace tts_addon
