// Template implementation of the trainer's state access (host copies, packed gradients, checks).
#pragma once
#include <cmath>

#include "train/trainer.hpp"

namespace dpointnet {

template <class Real, class ExecSpace>
std::vector<double> Trainer<Real, ExecSpace>::terminal_state() const {
  std::vector<double> out;
  auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), terminal_v_);
  auto c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts_);
  for (int b = 0; b < B_; ++b) {
    for (std::int64_t i = 0; i < N_; ++i) out.push_back(static_cast<double>(v(b, i)));
    for (std::int64_t i = 0; i < N_; ++i) out.push_back(static_cast<double>(c(b, i)));
  }
  return out;
}

template <class Real, class ExecSpace>
std::int64_t Trainer<Real, ExecSpace>::sign_violations() const {
  std::int64_t bad = 0;
  for (int s = 0; s < n_surfaces(); ++s) {
    if (!surface_trainable(s)) continue;
    const auto w = get(s, Field::Weight), w0 = get(s, Field::InitialWeight);
    for (std::size_t e = 0; e < w.size(); ++e) bad += (w0[e] >= 0 ? w[e] < 0 : w[e] > 0);
  }
  return bad;
}

template <class Real, class ExecSpace>
std::size_t Trainer<Real, ExecSpace>::packed_size() const {
  return static_cast<std::size_t>(n_trainable_);
}

template <class Real, class ExecSpace>
float* Trainer<Real, ExecSpace>::pack_gradients() {
  if (packed_.extent(0) != packed_size()) {
    packed_ = Kokkos::View<float*, MemSpace>("train.packed_gradients", packed_size());
    packed_host_ = Kokkos::create_mirror_view(packed_);
  }
  std::int64_t off = 0;
  auto buf = packed_;
  for (const auto& s : surfaces_) {
    if (!s.trainable) continue;
    auto g = s.grad;
    const std::int64_t o = off;
    Kokkos::parallel_for(
        "dpointnet::pack_gradients", Kokkos::RangePolicy<ExecSpace>(space_, 0, static_cast<std::int64_t>(g.extent(0))),
        KOKKOS_LAMBDA(const std::int64_t e) { buf(o + e) = static_cast<float>(g(e)); });
    off += static_cast<std::int64_t>(g.extent(0));
  }
  Kokkos::deep_copy(packed_host_, packed_);
  return packed_host_.data();
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::unpack_gradients(const float* packed, double scale) {
  if (packed_.extent(0) != packed_size()) pack_gradients();
  if (packed != packed_host_.data())
    for (std::size_t q = 0; q < packed_host_.extent(0); ++q) packed_host_(q) = packed[q];
  Kokkos::deep_copy(packed_, packed_host_);
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
  last_grad_norm_ = std::sqrt(norm2);
}

template <class Real, class ExecSpace>
std::string Trainer<Real, ExecSpace>::nonfinite_gradient_surface() const {
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

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::poison_gradient(int si) {
  auto g = surfaces_[static_cast<std::size_t>(si)].grad;
  if (g.extent(0) == 0) return;
  const double nan = std::nan("");
  Kokkos::deep_copy(Kokkos::subview(g, std::make_pair<std::size_t, std::size_t>(0, 1)), nan);
}

template <class Real, class ExecSpace>
std::vector<double> Trainer<Real, ExecSpace>::get(int si, Field f) const {
  const auto& s = surfaces_[static_cast<std::size_t>(si)];
  switch (f) {
    case Field::Weight:
      return sim_->to_read_order(s.set, sim_->edges(s.set).weight);
    case Field::InitialWeight:
      return sim_->to_read_order(s.set, s.w0);
    case Field::AdamM:
      return sim_->to_read_order(s.set, s.m);
    case Field::AdamV:
      return sim_->to_read_order(s.set, s.v);
    case Field::Gradient:
      break;
  }
  return sim_->to_read_order(s.set, s.grad);
}

template <class Real, class ExecSpace>
void Trainer<Real, ExecSpace>::set(int si, Field f, const std::vector<double>& values) {
  cached_forward_ = -1;  // a forward pass at other weights is no longer valid
  auto& s = surfaces_[static_cast<std::size_t>(si)];
  switch (f) {
    case Field::Weight:
      sim_->from_read_order(s.set, values, weights(s));
      break;
    case Field::InitialWeight:
      sim_->from_read_order(s.set, values, s.w0);
      break;
    case Field::AdamM:
      sim_->from_read_order(s.set, values, s.m);
      break;
    case Field::AdamV:
      sim_->from_read_order(s.set, values, s.v);
      break;
    case Field::Gradient:
      sim_->from_read_order(s.set, values, s.grad);
      break;
  }
}

}  // namespace dpointnet
