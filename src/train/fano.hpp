// Fano factors of pooled spike trains (the synchronization loss, docs/training.md): the bin sizes of the V1
// papers, per pool the variance over bins of its binned spike counts divided by their mean, and the gradient of any
// function of those factors with respect to the pools' per-step spike sums.
#pragma once
#include <cstdint>
#include <vector>

namespace dpointnet {

// The papers' bin sizes for a window of `window_ms`: max(1, round(1000 b)) ms for b in logspace(-3, 0, 20) seconds
// with b < window_ms / 2000 (1 ms can occur twice).
std::vector<int> fano_bin_sizes_ms(double window_ms);

// y: [T][P] spike sums of P pools over T steps (row-major); bins: bin sizes in steps. F: [bins][P],
// F(d, k) = Var_m(X) / max(Mean_m(X), 1e-7) over the floor(T / bin) bins m of pool k's counts X (population
// variance; the steps after the last whole bin unused).
void pool_fano(const std::vector<double>& y, std::int64_t T, std::int64_t P, const std::vector<int>& bins,
               std::vector<double>& F);

// dy = dL/dy [T][P] from dF = dL/dF [bins][P] (the 1e-7 floor blocks the mean's term while it is active).
void pool_fano_gradient(const std::vector<double>& y, std::int64_t T, std::int64_t P, const std::vector<int>& bins,
                        const std::vector<double>& dF, std::vector<double>& dy);

}  // namespace dpointnet
