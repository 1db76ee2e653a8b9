// Grid solvers behind one interface (CONTRACT.md section 6, "Simulation"): a solver is found by
// name, validates its params and runs synchronously on the calling thread (OpenMP inside), reporting
// progress, snapshots and polling for cancellation through Hooks. No Node, no HTTP, no SQLite.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "ttstore/tt.hpp"
#include "ttstore/types.hpp"

namespace tts::sim {

// A JSON scalar: numbers are doubles (integers are checked to be integral where a param needs one).
using Param = std::variant<double, std::string, bool>;
using Params = std::map<std::string, Param>;

// Longest run a param may ask for: steps, or iterations of an iterative solve.
inline constexpr int64_t kMaxSteps = 1'000'000;
// Most snapshots one run takes: snapshot_every must be at least steps / kMaxSnapshots (a param
// check), and a run to t_end, whose step count is not known in advance, takes no more than these.
inline constexpr int64_t kMaxSnapshots = 1000;

// One param of a solver: its type, range, default and meaning. Each solver's table is the one
// statement of them: its own checks read it, and the HTTP schema is built from it (the addon
// exports it), so the two cannot disagree. A rule between params (t_end or steps, dt within the
// grid's stability limit, snapshot_every against steps) is in the solver's check and in `doc`.
struct ParamSpec {
  enum class Type { Integer, Number, Choice, List };
  std::string name;
  Type type = Type::Number;
  double min = 0, max = 0;  // Integer, Number: lo <= v <= hi, or lo < v / v < hi when open
  bool min_open = false, max_open = false;
  bool required = false;
  std::optional<double> fallback;    // Integer, Number: the value when absent (none: required, or a
                                     // default that depends on other params, said in `doc`)
  std::vector<std::string> choices;  // Choice: the first is the default
  std::string doc;
};

// A named output array, float64, C order; 2-D arrays are indexed [x, y] (y fastest).
// A QTT-native solver hands its field over as the train itself (`tt` has cores, `data` is empty):
// the cores over the `interleaved` layout of `shape` (CONTRACT.md section 3), stored as they are,
// so that a 512^3 field is never made dense.
struct Field {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<double> data;
  TensorTrain tt;
  bool is_tt() const { return tt.d() > 0; }
};

// The final fields plus scalar facts about the run. Every solver reports `steps` and `t` (the step
// or iteration count and the simulated time, 0 for a stationary problem) and its own extras.
struct Output {
  std::vector<Field> fields;
  std::map<std::string, double> stats;
};

// Callbacks a run makes from the thread that called run(), never from inside an OpenMP region
// (so a caller may block the run inside one, e.g. to pause it). Any may be empty. progress(done, total): done <= total,
// total may be re-estimated as the run goes (an iterative solve does not know its iteration count in advance); the last
// call has done == total. snapshot(step, t, fields): every params.snapshot_every steps; the fields are only valid
// during the call. cancelled(): polled between steps and inside them and the set-up (between the pieces of a pass over
// a large grid, the cores of a rounding or a product, the pair solves of an implicit step, the nodes of a Green
// kernel), at most a fraction of a second of work apart at any accepted params; true makes run() throw Cancelled, and a
// caller may block in it to pause the run.
struct Hooks {
  std::function<void(int64_t done, int64_t total)> progress;
  std::function<void(int64_t step, double t, const std::vector<Field>&)> snapshot;
  std::function<bool()> cancelled;
};

struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("simulation cancelled") {}
};

// A run that lost its physical meaning (a negative density, a non-finite value): the params asked
// for more than the scheme can do (a CFL number too large), not a bug in the caller.
struct Diverged : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One solver. The CPU implementations live in native/core/src; a CUDA backend registers its own
// under the same name.
class Solver {
 public:
  virtual ~Solver() = default;
  virtual std::string name() const = 0;
  // Its params (the table validate() reads).
  virtual const std::vector<ParamSpec>& params() const = 0;
  // Throws InvalidArgument naming the offending param (unknown names are rejected too).
  virtual void validate(const Params& p) const = 0;
  // validate + solve. Throws Cancelled when hooks.cancelled() turns true.
  virtual Output run(const Params& p, const Hooks& hooks) const = 0;
};

std::vector<std::string> solvers();  // sorted names
// The registered solver of that name; throws InvalidArgument for an unknown one.
const Solver& solver(const std::string& name);
// Adds a solver, or replaces the one of the same name (e.g. a GPU implementation at start-up).
void register_solver(std::unique_ptr<Solver> s);

void validate(const std::string& solver, const Params& p);
Output run(const std::string& solver, const Params& p, const Hooks& hooks);

}  // namespace tts::sim
