// run.dynamics: the time-step model. Discrete is dpointnet's own (docs/model.md); Nest computes what NEST 3.8
// computes for glif_psc and iaf_psc_alpha as BMTK PointNet drives them (docs/model-nest.md).
#pragma once

namespace dpointnet {

enum class Dynamics { Discrete, Nest };
inline const char* dynamics_name(Dynamics d) { return d == Dynamics::Nest ? "nest" : "discrete"; }

}  // namespace dpointnet
