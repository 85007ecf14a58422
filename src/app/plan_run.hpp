// `dpointnet plan CONFIG`: the predicted peak device memory of the config's run, before anything is allocated.
#pragma once
#include <string>

namespace dpointnet {

// Prints the plan of a `train` run (when the config has a train section) or of a `simulate` run, and whether
// it fits; returns 0 when it fits, 3 when it does not.
int run_plan(const std::string& config, bool simulate);

}  // namespace dpointnet
