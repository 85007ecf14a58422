// An LGN input on the device: its cells' tables (uploaded once per table), the stimulus of each sample and the
// rate table of the current batch, recomputed when the batch's first global sample or the stimulus changes.
#pragma once
#include <Kokkos_Core.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "dpointnet/config/stimulus_spec.hpp"
#include "dpointnet/device/lgn_rates.hpp"
#include "dpointnet/device/rng.hpp"
#include "dpointnet/inputs/lgn_input.hpp"
#include "dpointnet/inputs/stimulus_samples.hpp"
#include "dpointnet/util/hash.hpp"

namespace dpointnet::device {

template <class ExecSpace>
class LgnRuntime {
 public:
  using MemSpace = typename ExecSpace::memory_space;

  // The cells' tables and the movie, uploaded on `space` unless the same ones are already there.
  void upload(const ExecSpace& space, const std::string& label, const LgnInput& in, const StimulusSpec& st) {
    st_ = st;
    valid_ = false;
    if (in.tables.get() != tables_.get()) {
      tables_ = in.tables;
      const LgnTables& t = *tables_;
      c_.sub_offset = up<std::int32_t>(space, label + ".sub_offset", t.sub_offset);
      c_.col_first = up<std::int32_t>(space, label + ".col_first", t.col_first);
      c_.row_first = up<std::int32_t>(space, label + ".row_first", t.row_first);
      c_.col_len = up<std::int32_t>(space, label + ".col_len", t.col_len);
      c_.row_len = up<std::int32_t>(space, label + ".row_len", t.row_len);
      c_.kernel_len = up<std::int32_t>(space, label + ".kernel_len", t.kernel_len);
      c_.col_off = up<std::int64_t>(space, label + ".col_off", t.col_off);
      c_.row_off = up<std::int64_t>(space, label + ".row_off", t.row_off);
      c_.kernel_off = up<std::int64_t>(space, label + ".kernel_off", t.kernel_off);
      c_.amplitude = up<double>(space, label + ".amplitude", t.amplitude);
      c_.spont = up<double>(space, label + ".spont", t.spont);
      c_.colw = up<double>(space, label + ".colw", t.colw);
      c_.roww = up<double>(space, label + ".roww", t.roww);
      c_.kernel = up<double>(space, label + ".kernel", t.kernel);
      c_.row_spacing = t.screen.row_spacing;
      c_.col_spacing = t.screen.col_spacing;
      c_.n_units = t.n_units;
    }
    if (in.movie.get() != movie_host_.get()) {
      movie_host_ = in.movie;
      movie_ = {};
      if (movie_host_) {
        const LgnMovie& m = *movie_host_;
        Kokkos::View<float***, Kokkos::LayoutRight, MemSpace> v(
            Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + ".movie"), m.frames, m.rows, m.cols);
        Kokkos::View<const float***, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> h(
            m.data.data(), m.frames, m.rows, m.cols);
        Kokkos::deep_copy(space, v, h);
        space.fence();
        movie_ = v;
      }
    }
  }

  std::int64_t n_units() const { return c_.n_units; }
  // The batch's table of spike probabilities per step, p = 1 - exp(-rate dt), [frame][sample][unit].
  const Kokkos::View<float***, Kokkos::LayoutRight, MemSpace>& probabilities() const { return rates_; }
  // Rate table bytes for F frames and B samples (the memory plan).
  static std::size_t table_bytes(std::int64_t frames, int batch, std::int64_t units) {
    return static_cast<std::size_t>(frames) * static_cast<std::size_t>(batch) * static_cast<std::size_t>(units) *
           sizeof(float);
  }

  // The rate table of samples [sample_offset, sample_offset + B) over `frames` 1-ms frames, unless it is there.
  void prepare(const ExecSpace& space, const std::string& label, const std::string& input, std::uint32_t seed,
               std::int64_t sample_offset, int B, std::int64_t frames, double dt_ms) {
    if (valid_ && offset_ == sample_offset && dt_ == dt_ms && B == static_cast<int>(rates_.extent(1)) &&
        frames == static_cast<std::int64_t>(rates_.extent(0)))
      return;
    if (rates_.extent(0) != static_cast<std::size_t>(frames) || rates_.extent(1) != static_cast<std::size_t>(B))
      rates_ = Kokkos::View<float***, Kokkos::LayoutRight, MemSpace>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + ".rates"), frames, B, c_.n_units);
    const auto pre = static_cast<std::int64_t>(std::llround(st_.pre_ms));
    const std::int64_t avail = frames - pre - static_cast<std::int64_t>(std::llround(st_.post_ms));
    if (st_.type == StimulusType::Movie) {
      const LgnMovie& m = *movie_host_;
      const double per_ms = st_.movie_frame_rate / 1000.0;
      const auto movie_ms = static_cast<std::int64_t>(std::ceil(static_cast<double>(m.frames) / per_ms - 1e-9));
      const std::int64_t shown = avail < movie_ms ? avail : movie_ms;
      const std::int64_t n_sub = static_cast<std::int64_t>(c_.amplitude.extent(0));
      Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> spatial(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + ".movie_spatial"), m.frames, n_sub);
      Kokkos::parallel_for("dpointnet::lgn_movie_spatial", Kokkos::RangePolicy<ExecSpace>(space, 0, m.frames * n_sub),
                           LgnMovieSpatialFunctor<ExecSpace>{c_, movie_, spatial, n_sub});
      Kokkos::parallel_for(
          "dpointnet::lgn_movie_temporal", Kokkos::RangePolicy<ExecSpace>(space, 0, frames * c_.n_units),
          LgnMovieTemporalFunctor<ExecSpace>{c_, spatial, rates_, pre, shown, per_ms, dt_ms / 1000.0, B});
      space.fence();  // the spatial sums go out of scope
    } else {
      Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> par(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + ".stimulus"), B, int(kLgnParams));
      auto hp = Kokkos::create_mirror_view(par);
      constexpr double pi = 3.14159265358979323846;
      for (int b = 0; b < B; ++b) {
        const SampleStimulus s = sample_stimulus(st_, seed, input, sample_offset + b);
        double theta = s.value[0], tf = s.value[1], sf = s.value[2], con = s.value[3], phase = s.value[4];
        if (st_.type == StimulusType::GreyScreen) theta = 0, tf = 0, sf = 0, phase = 90;  // sin(pi/2) = 1
        if (st_.dpointnet_direction) theta = -theta;
        // FilterNet's GratingMovie: contrast sin(2 pi (cpd (x cos th + y sin th) + tf t) + ph),
        // th = pi (180 - theta) / 180, ph = pi (180 - phase) / 180, t in seconds
        const double th = pi * (180.0 - theta) / 180.0;
        hp(b, kKx) = 2 * pi * sf * std::cos(th);
        hp(b, kKy) = 2 * pi * sf * std::sin(th);
        hp(b, kOmega) = 2 * pi * tf / 1000.0;
        hp(b, kPhase) = pi * (180.0 - phase) / 180.0;
        hp(b, kContrast) = con;
      }
      Kokkos::deep_copy(space, par, hp);
      const bool grey = st_.type == StimulusType::GreyScreen;
      Kokkos::parallel_for(
          "dpointnet::lgn_grating", Kokkos::RangePolicy<ExecSpace>(space, 0, B * c_.n_units),
          LgnGratingFunctor<ExecSpace>{c_, par, rates_, frames, grey ? 0 : pre, grey ? frames : avail, dt_ms / 1000.0});
      space.fence();  // the host mirror of the parameters goes out of scope
    }
    offset_ = sample_offset;
    dt_ = dt_ms;
    valid_ = true;
  }

 private:
  template <class T, class Vec>
  static Kokkos::View<const T*, MemSpace> up(const ExecSpace& space, const std::string& label, const Vec& v) {
    Kokkos::View<T*, MemSpace> d(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), v.size());
    Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> h(v.data(), v.size());
    Kokkos::deep_copy(space, d, h);
    space.fence();
    return d;
  }

  StimulusSpec st_;
  std::shared_ptr<const LgnTables> tables_;
  std::shared_ptr<const LgnMovie> movie_host_;
  LgnCellViews<MemSpace> c_;
  Kokkos::View<const float***, Kokkos::LayoutRight, MemSpace> movie_;
  Kokkos::View<float***, Kokkos::LayoutRight, MemSpace> rates_;
  std::int64_t offset_ = -1;
  double dt_ = 0;
  bool valid_ = false;
};

}  // namespace dpointnet::device
