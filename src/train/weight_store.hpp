// The trained state of a run: per weight surface ("recurrent", or a virtual population's input weights) the
// weights, the initial weights, the optimizer's per-edge state and the gradient, on the device in the simulator's
// grouped edge order. The store owns the weights; the simulator borrows them (Simulator::borrow_weights). Host
// access is in the projection's read (file) order; the gradients travel as one packed float32 buffer.
#pragma once
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dpointnet/device/fill.hpp"
#include "dpointnet/device/loss_stats.hpp"
#include "dpointnet/network/network.hpp"
#include "dpointnet/sim/simulator.hpp"
#include "dpointnet/util/kokkos_compat.hpp"

namespace dpointnet {

template <class Real, class ExecSpace = Kokkos::DefaultExecutionSpace>
class WeightStore {
 public:
  using MemSpace = typename ExecSpace::memory_space;
  using Values = Kokkos::View<Real*, MemSpace>;
  // What get/set address. AdamM and AdamV are the optimizer's per-edge states 0 and 1.
  enum class Field { Weight, InitialWeight, AdamM, AdamV, Gradient };

  struct Surface {
    std::string name;
    int set = 0;         // the simulator's edge set
    int projection = 0;  // index into Network::projections
    bool trainable = false;
    Values w, w0, grad;         // weights (lent to the simulator), initial weights, dL/dw
    std::vector<Values> state;  // the optimizer's per-edge state (trainable surfaces)
  };

  // One surface per edge set of `sim`, its weights taken over from the simulator and lent back to it;
  // `trainable` maps surface names to whether they train; the optimizer keeps `n_state` values per edge.
  WeightStore(const ExecSpace& space, Simulator<Real, ExecSpace>& sim, const Network& net,
              const std::map<std::string, bool>& trainable, int n_state)
      : space_(space) {
    for (int set = 0; set < sim.n_edge_sets(); ++set) {
      Surface s;
      s.projection = sim.projection(set);
      s.name = set == 0 ? "recurrent" : net.projections[static_cast<std::size_t>(s.projection)].source_population;
      s.set = set;
      auto it = trainable.find(s.name);
      s.trainable = it != trainable.end() && it->second;
      const auto& own = sim.edges(set).weight;
      const std::size_t ne = own.extent(0), nt = s.trainable ? ne : 0;
      s.w = Values(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "train." + s.name + ".w"), ne);
      Kokkos::deep_copy(space, s.w, own);
      s.w0 = Values(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "train." + s.name + ".w0"), ne);
      Kokkos::deep_copy(space, s.w0, own);
      space.fence();
      sim.borrow_weights(set, s.w);
      static const char* const state_names[] = {"adam_m", "adam_v"};
      for (int k = 0; k < n_state; ++k)
        s.state.emplace_back(
            Kokkos::view_alloc(space, "train." + s.name + "." + (k < 2 ? state_names[k] : "state" + std::to_string(k))),
            nt);
      s.grad = Values(Kokkos::view_alloc(space, "train." + s.name + ".grad"), nt);
      if (s.trainable) n_trainable_ += static_cast<std::int64_t>(ne);
      order_.push_back(&sim.file_order(set));
      surfaces_.push_back(s);
    }
  }

  int size() const { return static_cast<int>(surfaces_.size()); }
  Surface& operator[](int s) { return surfaces_[static_cast<std::size_t>(s)]; }
  const Surface& operator[](int s) const { return surfaces_[static_cast<std::size_t>(s)]; }
  std::int64_t n_trainable() const { return n_trainable_; }
  // Changes with every set() and mark_changed() (a forward pass at other weights is no longer valid).
  std::uint64_t version() const { return version_; }
  void mark_changed() { ++version_; }

  // Host copies in read order, normalized units (a frozen surface's optimizer state and gradient: zeros).
  std::vector<double> get(int s, Field f) const {
    const auto& v = view(s, f);
    const auto& order = *order_[static_cast<std::size_t>(s)];
    std::vector<double> out(order.size(), 0.0);
    if (v.extent(0) != order.size()) return out;
    const auto h = compat::mirror_view_and_copy(space_, v);
    for (std::size_t k = 0; k < order.size(); ++k) out[static_cast<std::size_t>(order[k])] = static_cast<double>(h(k));
    return out;
  }
  // Host copy in the store's own order (no permutation) into out, reusing its memory.
  void get_stored(int s, Field f, std::vector<double>& out) const {
    const auto& v = view(s, f);
    const auto h = compat::mirror_view_and_copy(space_, v);
    out.resize(v.extent(0));
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = static_cast<double>(h(k));
  }
  // Changes when the initial weights are set (a restore).
  std::uint64_t initial_version() const { return initial_version_; }
  void set(int s, Field f, const std::vector<double>& values) {
    const auto& v = view(s, f);
    const auto& order = *order_[static_cast<std::size_t>(s)];
    if (v.extent(0) != values.size() || values.size() != order.size())
      throw std::runtime_error("surface " + (*this)[s].name + ": " + std::to_string(values.size()) + " values for " +
                               std::to_string(v.extent(0)) + " edges");
    auto h = Kokkos::create_mirror_view(v);
    space_.fence();  // on a host backend h is the view itself
    for (std::size_t k = 0; k < order.size(); ++k) h(k) = static_cast<Real>(values[static_cast<std::size_t>(order[k])]);
    Kokkos::deep_copy(space_, v, h);
    space_.fence();
    ++version_;
    if (f == Field::InitialWeight) ++initial_version_;
  }

  // ---- gradients ----
  // Adds host values in the store's own order (get_stored) into surface s's gradient; fenced.
  void add_gradient_stored(int s, const std::vector<double>& values) {
    auto& g = surfaces_[static_cast<std::size_t>(s)].grad;
    if (g.extent(0) != values.size())
      throw std::runtime_error("surface " + (*this)[s].name + ": " + std::to_string(values.size()) +
                               " gradient values for " + std::to_string(g.extent(0)) + " trainable edges");
    auto h = Kokkos::create_mirror_view(g);
    Kokkos::deep_copy(space_, h, g);
    space_.fence();
    for (std::size_t k = 0; k < values.size(); ++k) h(k) += static_cast<Real>(values[k]);
    Kokkos::deep_copy(space_, g, h);
    space_.fence();
  }
  // Stored position -> read-order index of surface s's edges.
  const std::vector<std::int64_t>& read_index(int s) const { return *order_[static_cast<std::size_t>(s)]; }
  // Launched on the store's instance, not fenced.
  void zero_gradients() {
    for (auto& s : surfaces_)
      if (s.trainable) device::fill(space_, s.grad, 0.0);
  }
  void scale_gradients(double factor) {
    for (auto& s : surfaces_)
      if (s.trainable) device::scale(space_, s.grad, factor);
  }
  // The L2 norm of every trainable gradient (surfaces in order, each reduced on the device).
  double gradient_norm() const {
    double norm2 = 0;
    for (const auto& s : surfaces_) {
      if (!s.trainable) continue;
      auto g = s.grad;
      double part = 0;
      Kokkos::parallel_reduce(
          "dpointnet::grad_norm", Kokkos::RangePolicy<ExecSpace>(space_, 0, static_cast<std::int64_t>(g.extent(0))),
          KOKKOS_LAMBDA(const std::int64_t e, double& acc) {
            acc += static_cast<double>(g(e)) * static_cast<double>(g(e));
          },
          part);
      norm2 += part;
    }
    return std::sqrt(norm2);
  }
  // The weight regularizer: adds scale * 2 (w - w0) to each trainable gradient; returns the sum of (w - w0)^2.
  double add_weight_regularizer(double scale) {
    double total = 0;
    if (scale <= 0) return total;
    for (auto& s : surfaces_) {
      if (!s.trainable) continue;
      double part = 0;
      Kokkos::parallel_reduce("dpointnet::weight_regularizer",
                              Kokkos::RangePolicy<ExecSpace>(space_, 0, static_cast<std::int64_t>(s.grad.extent(0))),
                              device::WeightRegularizerFunctor<Real, ExecSpace>{s.w, s.w0, s.grad, scale}, part);
      total += part;
    }
    return total;
  }
  // The first trainable surface whose gradient holds a NaN or infinity ("" if none).
  std::string nonfinite_gradient_surface() const {
    for (const auto& s : surfaces_) {
      if (!s.trainable) continue;
      auto g = s.grad;
      std::int64_t bad = 0;
      Kokkos::parallel_reduce(
          "dpointnet::check_finite_gradient",
          Kokkos::RangePolicy<ExecSpace>(space_, 0, static_cast<std::int64_t>(g.extent(0))),
          KOKKOS_LAMBDA(const std::int64_t e, std::int64_t& acc) { acc += !(g(e) - g(e) == 0.0); }, bad);
      if (bad > 0) return s.name;
    }
    return "";
  }
  // Trainable weights on the other side of zero than their initial weight (0 counts as non-negative).
  std::int64_t sign_violations() const {
    std::int64_t bad = 0;
    for (int s = 0; s < size(); ++s) {
      if (!(*this)[s].trainable) continue;
      const auto w = get(s, Field::Weight), w0 = get(s, Field::InitialWeight);
      for (std::size_t e = 0; e < w.size(); ++e) bad += (w0[e] >= 0 ? w[e] < 0 : w[e] > 0);
    }
    return bad;
  }

  // ---- the packed gradient buffer of sample-parallel training ----
  // Every trainable gradient as one float32 buffer (trainable surfaces in order, edges in grouped order), on the
  // host; allocated once, valid for the store's life. The copy is left running on the store's instance: fence it
  // before reading the buffer.
  std::size_t packed_size() const { return static_cast<std::size_t>(n_trainable_); }
  float* pack_gradients() {
    allocate_packed();
    std::int64_t off = 0;
    auto buf = packed_;
    for (const auto& s : surfaces_) {
      if (!s.trainable) continue;
      auto g = s.grad;
      const std::int64_t o = off;
      Kokkos::parallel_for(
          "dpointnet::pack_gradients",
          Kokkos::RangePolicy<ExecSpace>(space_, 0, static_cast<std::int64_t>(g.extent(0))),
          KOKKOS_LAMBDA(const std::int64_t e) { buf(o + e) = static_cast<float>(g(e)); });
      off += static_cast<std::int64_t>(g.extent(0));
    }
    Kokkos::deep_copy(space_, packed_host_, packed_);
    return packed_host_.data();
  }
  // gradient = packed * scale; returns the new gradient norm.
  double unpack_gradients(const float* packed, double scale) {
    allocate_packed();
    space_.fence();  // the host writes the staging buffer (a pack may still be copying into it)
    if (packed != packed_host_.data())
      for (std::size_t q = 0; q < packed_host_.extent(0); ++q) packed_host_(q) = packed[q];
    Kokkos::deep_copy(space_, packed_, packed_host_);
    std::int64_t off = 0;
    auto buf = packed_;
    double norm2 = 0;
    for (auto& s : surfaces_) {
      if (!s.trainable) continue;
      auto g = s.grad;
      const std::int64_t o = off;
      double part = 0;
      Kokkos::parallel_reduce(
          "dpointnet::unpack_gradients",
          Kokkos::RangePolicy<ExecSpace>(space_, 0, static_cast<std::int64_t>(g.extent(0))),
          KOKKOS_LAMBDA(const std::int64_t e, double& acc) {
            g(e) = static_cast<Real>(static_cast<double>(buf(o + e)) * scale);
            acc += static_cast<double>(g(e)) * static_cast<double>(g(e));
          },
          part);
      norm2 += part;
      off += static_cast<std::int64_t>(g.extent(0));
    }
    return std::sqrt(norm2);
  }

 private:
  const Values& view(int s, Field f) const {
    const auto& x = (*this)[s];
    switch (f) {
      case Field::Weight:
        return x.w;
      case Field::InitialWeight:
        return x.w0;
      case Field::AdamM:
      case Field::AdamV: {
        const std::size_t k = f == Field::AdamM ? 0 : 1;
        return k < x.state.size() ? x.state[k] : empty_;
      }
      case Field::Gradient:
        break;
    }
    return x.grad;
  }
  void allocate_packed() {
    if (packed_.extent(0) == packed_size()) return;
    packed_ = Kokkos::View<float*, MemSpace>(Kokkos::view_alloc(space_, "train.packed_gradients"), packed_size());
    packed_host_ = Kokkos::create_mirror_view(packed_);
  }

  ExecSpace space_;
  std::vector<Surface> surfaces_;
  std::vector<const std::vector<std::int64_t>*> order_;  // the simulator's read order of each edge set
  std::int64_t n_trainable_ = 0;
  std::uint64_t version_ = 0;
  std::uint64_t initial_version_ = 0;
  Values empty_;
  Kokkos::View<float*, MemSpace> packed_;
  typename Kokkos::View<float*, MemSpace>::HostMirror packed_host_;
};

}  // namespace dpointnet
