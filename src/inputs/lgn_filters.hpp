// The LGN filter model of BMTK FilterNet (docs/visual-input.md): temporal kernels (two raised-cosine bumps on a
// log time axis), the spatial Gaussian on the screen's pixel grid, cell classes and spontaneous rates.
#pragma once
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace dpointnet {

// The pixel grid of the screen: pixel (r, c) sits at (y, x) = (r * row_spacing, c * col_spacing) degrees. A
// grating screen of H x W degrees at p degrees per pixel has rows = int(H / p) pixels spaced H / (rows - 1)
// (FilterNet's linspace with its endpoint); a movie's pixels are spaced by its degrees per pixel. grating()
// throws std::invalid_argument for a non-finite or non-positive argument or fewer than 2 pixels on an axis.
struct LgnScreen {
  int rows = 80, cols = 120;
  double row_spacing = 80.0 / 79.0, col_spacing = 120.0 / 119.0;
  static LgnScreen grating(double height_deg, double width_deg, double degrees_per_pixel);
};

// The normalized weights of a Gaussian along one screen axis, as FilterNet builds them: a unit impulse at the
// centre of an n-pixel axis (split over the two middle pixels when n is even), blurred by a discrete Gaussian
// of sigma / spacing pixels (radius int(4 sigma / spacing + 0.5), weights normalized over the radius), moved
// by linear interpolation so that its centroid lands on `centre` degrees, cut to the screen. `first` is the
// first pixel with a non-zero weight; the weights sum to 1 (the edge renormalization of a cut kernel). The
// Gaussian's mass beyond the screen is dropped (scipy's mode "nearest" on an impulse inside the screen). A
// Gaussian entirely off the screen gives no weights (w empty): FilterNet's kernel is then empty, the cell's
// linear response 0. Throws std::invalid_argument for n < 1 or a non-finite or non-positive spacing or sigma.
struct AxisWeights {
  int first = 0;
  std::vector<double> w;
};
AxisWeights gaussian_axis_weights(int n, double spacing, double centre, double sigma);

// h(lag) of FilterNet's TemporalFilterCosineBump(weights, kpeaks, delays), lag 0 first (1 ms per lag): two
// raised-cosine bumps on a log time axis (b = 0.3, 600 lags, peaks kpeaks), each normalized, delayed by the
// truncated delays and normalized again, summed with the weights. Throws std::invalid_argument where FilterNet
// asserts (kpeaks[0] < kpeaks[1], weights[0] > 0, delays[0] <= delays[1]) or a value is not finite.
// Also refused (FilterNet would compute NaN or fail): a bump with no weight on the 600 lags (kpeaks[j] <= 0 or
// far beyond 600 ms), a second bump moved past the kernel's end by delays[1] - delays[0], a delay that truncates
// to a negative number of lags, delays above 1e6 ms.
std::vector<double> cosine_bump_kernel(const double weights[2], const double kpeaks[2], const double delays[2]);

// The latency FilterNet aligns composite cells with (util_fns.get_tcross_from_temporal_kernel on the first 600
// lags of h): the first lag after argmax(h) where h goes from >= 0 to < 0, searched in [argmax, argmin). Throws
// std::invalid_argument where there is none (FilterNet fails with an IndexError).
int cosine_bump_t_cross(const std::vector<double>& h);

// The error of cosine_bump_kernel and build_lgn_cell: what() is "<attribute>: <detail>".
class LgnAttributeError : public std::invalid_argument {
 public:
  LgnAttributeError(const std::string& attribute, const std::string& detail)
      : std::invalid_argument(attribute + ": " + detail), attribute_(attribute), detail_(detail) {}
  const std::string& attribute() const { return attribute_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string attribute_, detail_;
};

// One linear filter of a cell: a spatial Gaussian, a temporal kernel and its amplitude; the cell's rate is the
// sum over its subunits of max(0, amplitude * L + spont), L the spatio-temporally filtered screen.
struct LgnSubunit {
  double x = 0, y = 0;  // centre (degrees)
  double sigma = 1;     // degrees (spatial_size / 3)
  double amplitude = 1;
  double spont = 0;            // Hz, added before the rectification
  std::vector<double> kernel;  // h(lag), lag 0 first
};

// A cell: one subunit (sON_*, sOFF_*, tOFF_*, ...), or two (sONsOFF_001, sONtOFF_001: the dominant OFF subunit,
// then the non-dominant ON subunit, latency-aligned and with FilterNet's amplitudes and spontaneous rates).
struct LgnCell {
  std::string model;  // pop_name or the NAME of model_template "lgnmodel:NAME"
  std::vector<LgnSubunit> subunits;
};

// The node attributes FilterNet reads (NaN or absent: not given).
struct LgnNodeAttributes {
  static constexpr double kAbsent = std::numeric_limits<double>::quiet_NaN();
  std::string model;
  double x = 0, y = 0, spatial_size = 0;
  double kpeaks_dom[2] = {kAbsent, kAbsent}, weight_dom[2] = {kAbsent, kAbsent}, delay_dom[2] = {kAbsent, kAbsent};
  double kpeaks_non_dom[2] = {kAbsent, kAbsent}, weight_non_dom[2] = {kAbsent, kAbsent},
         delay_non_dom[2] = {kAbsent, kAbsent};
  double tuning_angle = kAbsent, sf_sep = kAbsent, spont_fr = kAbsent;  // NaN when absent
};

// FilterNet's spontaneous rate (Hz) of a single-subunit class "TYPE_TFk" (a bare TYPE means TF8) from its cell
// metrics; throws std::invalid_argument for a class FilterNet has no metrics for.
double lgn_spontaneous_rate(const std::string& model);

// The cell FilterNet builds from the attributes (default_cell_loader); throws LgnAttributeError (a
// std::invalid_argument) with the attribute's name for a missing, non-finite or out-of-range attribute or an
// unknown class ("pop_name"). Composite classes need tuning_angle and sf_sep (FilterNet would draw a missing
// angle at random) and ignore spont_fr; a composite whose zero crossing comes later than FilterNet's target
// latency (a negative delay offset) is refused, as FilterNet does.
LgnCell build_lgn_cell(const LgnNodeAttributes& a);

}  // namespace dpointnet
