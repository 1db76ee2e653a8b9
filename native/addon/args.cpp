#include "args.hpp"

#include <cmath>
#include <cstring>
#include <sstream>

namespace tts_addon {

namespace {

constexpr int64_t kMaxSafeInteger = (int64_t{1} << 53) - 1;
constexpr size_t kMaxAxes = 8;
// A core's side: generous, but small enough that r * n * r cannot overflow int64.
constexpr int64_t kMaxBond = int64_t{1} << 24;

[[noreturn]] void Throw(Napi::Error err) {
  err.Set("code", Napi::String::New(err.Env(), kInvalidCode));
  throw err;
}

std::string DescribeValue(Napi::Value v) {
  if (v.IsUndefined()) return "undefined";
  if (v.IsNull()) return "null";
  if (v.IsBoolean()) return v.As<Napi::Boolean>().Value() ? "true" : "false";
  if (v.IsNumber()) {
    std::ostringstream os;
    os << v.As<Napi::Number>().DoubleValue();
    return os.str();
  }
  if (v.IsString()) return "'" + v.As<Napi::String>().Utf8Value() + "'";
  if (v.IsArray()) return "an array";
  if (v.IsTypedArray()) return "a typed array";
  if (v.IsFunction()) return "a function";
  return "an object";
}

bool CheckedMul(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out) && *out <= kMaxSafeInteger;
}

}  // namespace

std::vector<int64_t> ToIntegerList(Napi::Env env, Napi::Value v, const std::string& what, int64_t lo, int64_t hi) {
  if (!v.IsArray()) ThrowTypeError(env, what + " must be an array of integers, got " + DescribeValue(v));
  Napi::Array arr = v.As<Napi::Array>();
  uint32_t n = arr.Length();
  std::vector<int64_t> out;
  out.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    out.push_back(ToInteger(env, arr.Get(i), what + "[" + std::to_string(i) + "]", lo, hi));
  }
  return out;
}

void ThrowTypeError(Napi::Env env, const std::string& message) { Throw(Napi::TypeError::New(env, message)); }

void ThrowRangeError(Napi::Env env, const std::string& message) { Throw(Napi::RangeError::New(env, message)); }

std::string FormatList(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

int64_t ToInteger(Napi::Env env, Napi::Value v, const std::string& what, int64_t lo, int64_t hi) {
  if (!v.IsNumber()) ThrowTypeError(env, what + " must be an integer, got " + DescribeValue(v));
  double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d) || std::trunc(d) != d) {
    ThrowTypeError(env, what + " must be an integer, got " + DescribeValue(v));
  }
  if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
    ThrowRangeError(
        env, what + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + DescribeValue(v));
  }
  return static_cast<int64_t>(d);
}

std::vector<int64_t> ToShape(Napi::Env env, Napi::Value v, const char* what) {
  std::vector<int64_t> shape = ToIntegerList(env, v, what, 1, kMaxSafeInteger);
  if (shape.size() > kMaxAxes) {
    ThrowRangeError(env, std::string(what) + " has " + std::to_string(shape.size()) + " axes; at most 8 are supported");
  }
  int64_t numel = 1;
  for (int64_t s : shape) {
    if (!CheckedMul(numel, s, &numel)) {
      ThrowRangeError(env, std::string(what) + " " + FormatList(shape) + " has too many elements");
    }
  }
  return shape;
}

int64_t ShapeNumel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

tts::DType ToDType(Napi::Env env, Napi::Value v) {
  static const tts::DType kAll[] = {
      tts::DType::F64, tts::DType::F32, tts::DType::F16, tts::DType::I64, tts::DType::I32, tts::DType::I16,
      tts::DType::I8,  tts::DType::U64, tts::DType::U32, tts::DType::U16, tts::DType::U8,  tts::DType::Bool,
  };
  std::string names;
  for (tts::DType t : kAll) names += (names.empty() ? "" : ", ") + std::string(tts::dtype_name(t));
  if (!v.IsString()) ThrowTypeError(env, "dtype must be a string (" + names + "), got " + DescribeValue(v));
  std::string s = v.As<Napi::String>().Utf8Value();
  for (tts::DType t : kAll) {
    if (s == tts::dtype_name(t)) return t;
  }
  ThrowTypeError(env, "unknown dtype '" + s + "' (expected one of " + names + ")");
}

tts::LayoutKind ToLayoutKind(Napi::Env env, Napi::Value v) {
  if (v.IsString()) {
    std::string s = v.As<Napi::String>().Utf8Value();
    if (s == "row_major") return tts::LayoutKind::RowMajor;
    if (s == "interleaved") return tts::LayoutKind::Interleaved;
  }
  ThrowTypeError(env, "layout must be 'row_major' or 'interleaved', got " + DescribeValue(v));
}

tts::QttLayout ToLayout(Napi::Env env, const std::vector<int64_t>& shape, Napi::Value layout) {
  tts::LayoutKind kind = layout.IsUndefined() ? tts::default_layout(shape) : ToLayoutKind(env, layout);
  return tts::make_layout(shape, kind);
}

tts::QttLayout ToTrainLayout(Napi::Env env, const std::vector<int64_t>& shape, tts::LayoutKind kind,
                             const std::vector<int64_t>& modes) {
  double product = 1;
  for (int64_t m : modes) product *= static_cast<double>(m);
  tts::QttLayout layout = kind == tts::LayoutKind::RowMajor && static_cast<double>(ShapeNumel(shape)) == product
                              ? tts::row_major_layout(shape, modes)
                              : tts::make_layout(shape, kind);
  if (modes != layout.modes) {
    ThrowRangeError(env, "tt.modes " + FormatList(modes) + " do not match the modes " + FormatList(layout.modes) +
                             " of shape " + FormatList(shape) + " in layout " + tts::layout_name(kind));
  }
  return layout;
}

tts::SvdOptions ToSvdOptions(Napi::Env env, Napi::Value v) {
  if (!v.IsObject() || v.IsArray()) {
    ThrowTypeError(env, "options must be an object {tolerance, maxRank?}, got " + DescribeValue(v));
  }
  Napi::Object o = v.As<Napi::Object>();
  Napi::Value tol = o.Get("tolerance");
  if (!tol.IsNumber()) ThrowTypeError(env, "tolerance must be a number, got " + DescribeValue(tol));
  double t = tol.As<Napi::Number>().DoubleValue();
  if (!(t >= 0.0 && t < 1.0)) {
    ThrowRangeError(env, "tolerance must be in [0, 1), got " + DescribeValue(tol));
  }
  tts::SvdOptions opt;
  opt.tol = t;
  Napi::Value cap = o.Get("maxRank");
  opt.max_rank = (cap.IsUndefined() || cap.IsNull()) ? 0 : ToInteger(env, cap, "maxRank", 1, tts::kMaxRank);
  return opt;
}

Bytes ToBytes(Napi::Env env, Napi::Value v, const char* what) {
  Bytes b;
  void* data = nullptr;
  if (v.IsTypedArray()) {
    napi_typedarray_type type;
    size_t length = 0;
    napi_value ab;
    size_t offset = 0;
    // `data` already points at the first element (byte offset applied).
    NAPI_THROW_IF_FAILED(env, napi_get_typedarray_info(env, v, &type, &length, &data, &ab, &offset), b);
    b.length = v.As<Napi::TypedArray>().ByteLength();
  } else if (v.IsDataView()) {
    size_t length = 0;
    napi_value ab;
    size_t offset = 0;
    NAPI_THROW_IF_FAILED(env, napi_get_dataview_info(env, v, &length, &data, &ab, &offset), b);
    b.length = length;
  } else {
    ThrowTypeError(env, std::string(what) + " must be a Buffer, TypedArray or DataView, got " + DescribeValue(v));
  }
  b.data = static_cast<const uint8_t*>(data);
  if (b.data == nullptr) b.length = 0;
  return b;
}

Bytes ToArrayBytes(Napi::Env env, Napi::Value v, const char* what, tts::DType dtype,
                   const std::vector<int64_t>& shape) {
  Bytes b = ToBytes(env, v, what);
  uint64_t need = static_cast<uint64_t>(ShapeNumel(shape)) * tts::dtype_size(dtype);
  if (b.length != need) {
    ThrowRangeError(env, std::string(what) + " has " + std::to_string(b.length) + " bytes but shape " +
                             FormatList(shape) + " of " + tts::dtype_name(dtype) + " needs " + std::to_string(need));
  }
  return b;
}

void KeepAlive::Add(Napi::Env env, Napi::Value v) {
  if (holder_.IsEmpty()) holder_ = Napi::Persistent(Napi::Array::New(env).As<Napi::Object>());
  holder_.Value().Set(count_++, v);
}

TrainView ToTrain(Napi::Env env, Napi::Value v, const std::string& what, KeepAlive& keep) {
  if (!v.IsObject() || v.IsArray() || v.IsTypedArray()) {
    ThrowTypeError(env, what + " must be a tensor train {modes, ranks, cores}, got " + DescribeValue(v));
  }
  Napi::Object o = v.As<Napi::Object>();
  TrainView t;
  t.modes = ToIntegerList(env, o.Get("modes"), what + ".modes", 1, kMaxBond);
  t.ranks = ToIntegerList(env, o.Get("ranks"), what + ".ranks", 1, kMaxBond);
  size_t d = t.modes.size();
  if (t.ranks.size() != d + 1) {
    ThrowRangeError(env, what + ".ranks has " + std::to_string(t.ranks.size()) + " entries but " + std::to_string(d) +
                             " modes need " + std::to_string(d + 1));
  }
  if (t.ranks.front() != 1 || t.ranks.back() != 1) {
    ThrowRangeError(env, what + ".ranks must start and end with 1, got " + FormatList(t.ranks));
  }
  Napi::Value cv = o.Get("cores");
  if (!cv.IsArray()) ThrowTypeError(env, what + ".cores must be an array of Float32Array or Float64Array");
  Napi::Array cores = cv.As<Napi::Array>();
  if (cores.Length() != d) {
    ThrowRangeError(
        env, what + ".cores has " + std::to_string(cores.Length()) + " cores but " + std::to_string(d) + " modes");
  }
  t.cores.resize(d);
  for (uint32_t k = 0; k < d; ++k) {
    Napi::Value c = cores.Get(k);
    std::string name = what + ".cores[" + std::to_string(k) + "]";
    napi_typedarray_type type = napi_uint8_array;
    if (c.IsTypedArray()) type = c.As<Napi::TypedArray>().TypedArrayType();
    if (type != napi_float32_array && type != napi_float64_array) {
      ThrowTypeError(env, name + " must be a Float32Array or Float64Array, got " + DescribeValue(c));
    }
    bool f32 = type == napi_float32_array;
    if (k == 0) {
      t.f32 = f32;
    } else if (f32 != t.f32) {
      ThrowTypeError(env, what + ".cores mixes Float32Array and Float64Array; all cores must share one type");
    }
    Napi::TypedArray ta = c.As<Napi::TypedArray>();
    int64_t need = t.CoreElements(k);
    if (static_cast<int64_t>(ta.ElementLength()) != need) {
      ThrowRangeError(env, name + " has " + std::to_string(ta.ElementLength()) + " elements but shape [" +
                               std::to_string(t.ranks[k]) + "," + std::to_string(t.modes[k]) + "," +
                               std::to_string(t.ranks[k + 1]) + "] needs " + std::to_string(need));
    }
    t.cores[k] = ToBytes(env, c, name.c_str()).data;
    keep.Add(env, c);
  }
  return t;
}

tts::TensorTrain TrainView::Materialize() const {
  tts::TensorTrain tt;
  tt.modes = modes;
  tt.ranks = ranks;
  tt.f32 = f32;
  tt.cores.resize(cores.size());
  for (size_t k = 0; k < cores.size(); ++k) {
    size_t n = static_cast<size_t>(CoreElements(k));
    std::vector<double>& dst = tt.cores[k];
    dst.resize(n);
    if (f32) {
      const float* src = static_cast<const float*>(cores[k]);
      for (size_t i = 0; i < n; ++i) dst[i] = src[i];
    } else if (n > 0) {
      std::memcpy(dst.data(), cores[k], n * sizeof(double));
    }
  }
  tt.validate();
  return tt;
}

}  // namespace tts_addon
