// The LGN filter model of BMTK FilterNet (docs/visual-input.md): temporal kernels (two raised-cosine bumps on a
// log time axis), the spatial Gaussian on the screen's pixel grid, cell classes and spontaneous rates.
#pragma once
#include <string>
#include <vector>

namespace dpointnet {

// The pixel grid of the screen: pixel (r, c) sits at (y, x) = (r * row_spacing, c * col_spacing) degrees. A
// grating screen of H x W degrees at p degrees per pixel has rows = int(H / p) pixels spaced H / (rows - 1)
// (FilterNet's linspace with its endpoint); a movie's pixels are spaced by its degrees per pixel.
struct LgnScreen {
  int rows = 80, cols = 120;
  double row_spacing = 80.0 / 79.0, col_spacing = 120.0 / 119.0;
  static LgnScreen grating(double height_deg, double width_deg, double degrees_per_pixel);
};

// The normalized weights of a Gaussian along one screen axis, as FilterNet builds them: a unit impulse at the
// centre of an n-pixel axis (split over the two middle pixels when n is even), blurred by a discrete Gaussian
// of sigma / spacing pixels (radius int(4 sigma / spacing + 0.5), weights normalized over the radius), moved
// by linear interpolation so that its centroid lands on `centre` degrees, cut to the screen. `first` is the
// first pixel with a non-zero weight; the weights sum to 1 (the edge renormalization of a cut kernel).
struct AxisWeights {
  int first = 0;
  std::vector<double> w;
};
AxisWeights gaussian_axis_weights(int n, double spacing, double centre, double sigma);

// h(lag) of FilterNet's TemporalFilterCosineBump(weights, kpeaks, delays), lag 0 first (1 ms per lag): two
// raised-cosine bumps on a log time axis (b = 0.3, 600 lags, peaks kpeaks), each normalized, delayed by the
// truncated delays and normalized again, summed with the weights. Throws std::invalid_argument where FilterNet
// asserts (kpeaks[0] < kpeaks[1], weights[0] > 0, delays[0] <= delays[1]) or a value is not finite.
std::vector<double> cosine_bump_kernel(const double weights[2], const double kpeaks[2], const double delays[2]);

// One linear filter of a cell: a spatial Gaussian, a temporal kernel and its amplitude; the cell's rate is the
// sum over its subunits of max(0, amplitude * L + spont), L the spatio-temporally filtered screen.
struct LgnSubunit {
  double x = 0, y = 0;  // centre (degrees)
  double sigma = 1;     // degrees (spatial_size / 3)
  double amplitude = 1;
  double spont = 0;             // Hz, added before the rectification
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
  std::string model;
  double x = 0, y = 0, spatial_size = 0;
  double kpeaks_dom[2], weight_dom[2], delay_dom[2];
  double kpeaks_non_dom[2], weight_non_dom[2], delay_non_dom[2];
  double tuning_angle, sf_sep, spont_fr;  // NaN when absent
};

// FilterNet's spontaneous rate (Hz) of a single-subunit class "TYPE_TFk" (a bare TYPE means TF8) from its cell
// metrics; throws std::invalid_argument for a class FilterNet has no metrics for.
double lgn_spontaneous_rate(const std::string& model);

// The cell FilterNet builds from the attributes (default_cell_loader); throws std::invalid_argument with the
// attribute's name for a missing, non-finite or out-of-range attribute or an unknown class.
LgnCell build_lgn_cell(const LgnNodeAttributes& a);

}  // namespace dpointnet
