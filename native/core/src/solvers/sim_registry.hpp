// Private: the CPU solvers the registry starts with (one factory per solver file).
#pragma once

#include <memory>

#include "ttstore/sim.hpp"

namespace tts::sim::detail {

std::unique_ptr<Solver> make_poisson_2d();
std::unique_ptr<Solver> make_euler_2d();
std::unique_ptr<Solver> make_helmholtz_3d();
std::unique_ptr<Solver> make_navier_stokes_2d();

}  // namespace tts::sim::detail
