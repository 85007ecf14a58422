// The LGN filters (src/inputs/lgn_filters.hpp) against BMTK FilterNet (tests/lgn_reference.hpp,
// tests/lgn_filternet_reference.py), the spec's tables (shared/spec/V1-PAPER.md sections 2.4-2.5) and analytic
// properties of the spatial weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "dpointnet/inputs/lgn_filters.hpp"
#include "lgn_reference.hpp"

namespace dpointnet {
namespace {

using test::kLgnDelayedKernels;
using test::kLgnNominalKernels;
using test::lgn_template;

std::vector<double> template_kernel(const std::string& name) {
  const auto& t = lgn_template(name);
  return cosine_bump_kernel(t.w, t.k, t.d);
}

TEST(LgnFilters, GratingScreenIsFilterNetsLinspace) {
  const LgnScreen v1 = LgnScreen::grating(80, 120, 1.0);
  EXPECT_EQ(v1.rows, 80);
  EXPECT_EQ(v1.cols, 120);
  EXPECT_DOUBLE_EQ(v1.row_spacing, 80.0 / 79.0);
  EXPECT_DOUBLE_EQ(v1.col_spacing, 120.0 / 119.0);
  const LgnScreen coarse = LgnScreen::grating(80, 120, 2.5);  // FilterNet's default 1 / (10 cpd) at 0.04 cpd
  EXPECT_EQ(coarse.rows, 32);
  EXPECT_EQ(coarse.cols, 48);
  EXPECT_DOUBLE_EQ(coarse.row_spacing, 80.0 / 31.0);
  EXPECT_DOUBLE_EQ(coarse.col_spacing, 120.0 / 47.0);
  EXPECT_EQ(LgnScreen::grating(80, 120, 0.7).rows, 114);  // int(114.28...)
  EXPECT_THROW(LgnScreen::grating(80, 120, 0), std::invalid_argument);
  EXPECT_THROW(LgnScreen::grating(1, 120, 1), std::invalid_argument);
  EXPECT_THROW(LgnScreen::grating(NAN, 120, 1), std::invalid_argument);
}

TEST(LgnFilters, AxisWeightsAnalytic) {
  // a centred Gaussian on an odd axis: symmetric about the centre pixel, radius int(4 sigma + 0.5) pixels
  const AxisWeights c = gaussian_axis_weights(81, 1.0, 40.0, 2.0);
  ASSERT_EQ(c.w.size(), 17u);
  EXPECT_EQ(c.first, 40 - 8);
  EXPECT_NEAR(std::accumulate(c.w.begin(), c.w.end(), 0.0), 1.0, 1e-15);
  for (std::size_t i = 0; i < c.w.size(); ++i) EXPECT_NEAR(c.w[i], c.w[c.w.size() - 1 - i], 1e-17);
  EXPECT_NEAR(c.w[8] / c.w[9], std::exp(0.5 / 4.0), 1e-12);  // exp(-k^2 / (2 sigma^2)) between k = 0 and 1
  // off-centre and not cut: the centroid is the centre, in pixels of the given spacing
  for (double centre : {37.3, 61.77, 10.05}) {
    const double spacing = 120.0 / 119.0;
    const AxisWeights w = gaussian_axis_weights(120, spacing, centre, 1.9);
    double sum = 0, moment = 0;
    for (std::size_t i = 0; i < w.w.size(); ++i) {
      sum += w.w[i];
      moment += (w.first + static_cast<double>(i)) * w.w[i];
    }
    EXPECT_NEAR(sum, 1.0, 1e-14);
    EXPECT_NEAR(moment, centre / spacing, 1e-12) << centre;
    EXPECT_GT(w.w.front(), 0.0);
    EXPECT_GT(w.w.back(), 0.0);
  }
  // cut at the screen's edge: renormalized, starting at pixel 0
  const AxisWeights e = gaussian_axis_weights(80, 1.0, 0.4, 3.0);
  EXPECT_EQ(e.first, 0);
  EXPECT_NEAR(std::accumulate(e.w.begin(), e.w.end(), 0.0), 1.0, 1e-15);
  // entirely off the screen: no weights (FilterNet's kernel is empty)
  EXPECT_TRUE(gaussian_axis_weights(80, 1.0, -40.0, 2.0).w.empty());
  EXPECT_TRUE(gaussian_axis_weights(80, 1.0, 140.0, 2.0).w.empty());
  EXPECT_THROW(gaussian_axis_weights(80, 1.0, 10.0, 0.0), std::invalid_argument);
  EXPECT_THROW(gaussian_axis_weights(0, 1.0, 10.0, 1.0), std::invalid_argument);
}

// GaussianSpatialFilter(translate=(x, y), sigma=(s, s), origin=(0, 0)).get_kernel(linspace(0, H, int(H / dpp)),
// linspace(0, W, int(W / dpp))): the kernel is the outer product of its row and column sums (max difference
// < 2e-17); these are the sums from the non-zero pixel `first` on.
struct SpatialCase {
  double height, width, dpp, x, y, sigma;
  int row_first;
  std::vector<double> rows;
  int col_first;
  std::vector<double> cols;
};

TEST(LgnFilters, AxisWeightsMatchFilterNetsGaussianSpatialFilter) {
  const SpatialCase cases[] = {
      {80,
       120,
       1.0,
       57.97,
       7.42,
       1.7266666666666666,
       0,
       {6.697770528388826e-05, 0.0005350266584730726, 0.003076038034769218, 0.013078757130620889, 0.04121864654397052,
        0.09640240696474547, 0.16735524173491545, 0.21549071453178925, 0.20543885242763696, 0.14458576944272494,
        0.07481682765890092, 0.028326229881824348, 0.007805900507376656, 0.0015577020330791612, 0.00022372701794525808,
        2.1181725943884486e-05},
       49,
       {3.580163961048703e-07, 3.0650798597994896e-05, 0.00029965314777821483, 0.0019869667536343513,
        0.009554831191459607, 0.03338287040697977, 0.08495209807223192, 0.1578758340621294, 0.2147260703039359,
        0.21397241944773687, 0.15616544054224796, 0.08332439702425097, 0.03240492378570568, 0.009151587144002465,
        0.0018696186461103156, 0.00027527436266807113, 2.7006294134202012e-05}},
      {80,
       120,
       1.0,
       1.3,
       78.6,
       3.0,
       65,
       {2.213875313688207e-05, 0.00010716366017630259, 0.00036747700320184564, 0.001120114462706454,
        0.0030555621346699665, 0.007461009556825181, 0.016310314929542796, 0.031927448417313514, 0.055973113333304916,
        0.08789839420699494, 0.12366228150562068, 0.1558877903379175, 0.17610176623524088, 0.17829717561491354,
        0.16180824984843456},
       0,
       {0.1656654284498259, 0.18047565880667615, 0.1765189657968735, 0.15498633279416826, 0.12214070943688851,
        0.08638160920255679, 0.054814901416869656, 0.0312039738966779, 0.015931923891270953, 0.007294296640171628,
        0.002994077674812144, 0.0011015734543544456, 0.00036319566891603646, 0.00010589148506935704,
        2.1461384868710645e-05}},
      {80,
       120,
       2.5,
       33.3,
       41.7,
       2.0,
       12,
       {4.89583056052567e-05, 0.003287620935390346, 0.04751225925634855, 0.20585347890604763, 0.3693323454976968,
        0.28464594971113133, 0.08301192768374147, 0.00621295044743065, 9.45092566079503e-05},
       9,
       {7.60962903098481e-05, 0.0046412395063791575, 0.061446144320286264, 0.2345364849821428, 0.3673733362228258,
        0.2553496321811424, 0.07101418876768602, 0.00547264333033553, 9.023439889200458e-05}},
      // a kernel wider than half the screen: the Gaussian is cut, not folded back at the edges
      {10,
       12,
       1.0,
       3.3,
       4.4,
       3.0,
       0,
       {0.05731267763436714, 0.089338916722177, 0.12245831368102379, 0.14763530225966626, 0.15657183971020497,
        0.1460811218334856, 0.11990417964590673, 0.086577352857515, 0.054984732764568695, 0.01913556289108468},
       0,
       {0.0906980095674497, 0.12400244471424951, 0.14978364619330528, 0.15985721237806005, 0.15074303344899623,
        0.12558978019520114, 0.09243369986056967, 0.06008774837933666, 0.03449193025480868, 0.012312495008023026}},
  };
  for (const SpatialCase& c : cases) {
    SCOPED_TRACE(std::to_string(c.x) + ", " + std::to_string(c.y) + " sigma " + std::to_string(c.sigma));
    const LgnScreen s = LgnScreen::grating(c.height, c.width, c.dpp);
    const AxisWeights r = gaussian_axis_weights(s.rows, s.row_spacing, c.y, c.sigma);
    const AxisWeights k = gaussian_axis_weights(s.cols, s.col_spacing, c.x, c.sigma);
    EXPECT_EQ(r.first, c.row_first);
    EXPECT_EQ(k.first, c.col_first);
    ASSERT_EQ(r.w.size(), c.rows.size());
    ASSERT_EQ(k.w.size(), c.cols.size());
    for (std::size_t i = 0; i < r.w.size(); ++i) EXPECT_NEAR(r.w[i], c.rows[i], 1e-15) << i;
    for (std::size_t i = 0; i < k.w.size(); ++i) EXPECT_NEAR(k.w[i], c.cols[i], 1e-15) << i;
  }
}

// shared/spec/V1-PAPER.md section 2.4, "Reference numbers for nominal (un-jittered) parameters" (6 decimals).
TEST(LgnFilters, CosineBumpKernelsMatchSpecTable) {
  struct Row {
    const char* name;
    double sum;
    int argmax, argmin, last;
    double h[5];
  };
  const Row rows[] = {{"sON_TF4", 8.979947, 29, 105, 256, {0, 0, 0, 0, 0}},
                      {"sOFF_TF4", 4.155956, 21, 81, 237, {0, 0, 0, 0, 0}},
                      {"tOFF_TF8", 1.059949, 6, 30, 91, {0, 0.009425, 0.305980, 0.694048, 1.004906}},
                      {"sON_TF8", 5.919821, 12, 52, 136, {0, 0, 0.000355, 0.096129, 0.272122}}};
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    const std::vector<double> h = template_kernel(r.name);
    ASSERT_EQ(h.size(), 600u);
    EXPECT_NEAR(std::accumulate(h.begin(), h.end(), 0.0), r.sum, 5e-7);
    EXPECT_EQ(std::max_element(h.begin(), h.end()) - h.begin(), r.argmax);
    EXPECT_EQ(std::min_element(h.begin(), h.end()) - h.begin(), r.argmin);
    int last = 0;
    for (std::size_t l = 0; l < h.size(); ++l)
      if (std::fabs(h[l]) > 1e-6) last = static_cast<int>(l);
    EXPECT_EQ(last, r.last);
    for (int l = 0; l < 5; ++l) EXPECT_NEAR(h[static_cast<std::size_t>(l)], r.h[l], 5e-7) << "lag " << l;
  }
}

TEST(LgnFilters, CosineBumpKernelsMatchFilterNet) {
  for (const auto& e : kLgnNominalKernels) test::expect_kernel(template_kernel(e.name), e);
  // delays are truncated (3.7 -> 3, 14.87 -> 14); the kernel is 600 + d0 lags long
  const auto& t = lgn_template("sON_TF1");
  const double delays[2] = {3.7, 14.867648948779896};
  const std::vector<double> h = cosine_bump_kernel(t.w, t.k, delays);
  test::expect_kernel(h, kLgnDelayedKernels[0]);
  for (int l = 0; l < 3; ++l) EXPECT_EQ(h[static_cast<std::size_t>(l)], 0.0);
  // truncation, not rounding: 3.999 gives the kernel of 3
  const double delays_3[2] = {3.999, 14.99};
  EXPECT_EQ(cosine_bump_kernel(t.w, t.k, delays_3), h);
}

TEST(LgnFilters, CosineBumpRefusesWhatFilterNetCannotBuild) {
  const double w[2] = {3.0, -1.5}, k[2] = {20.0, 50.0}, d[2] = {0.0, 10.0};
  auto attribute = [](const double ww[2], const double kk[2], const double dd[2]) -> std::string {
    try {
      cosine_bump_kernel(ww, kk, dd);
    } catch (const LgnAttributeError& e) {
      return e.attribute();
    }
    return "";
  };
  EXPECT_EQ(attribute(w, k, d), "");
  const double k_equal[2] = {50.0, 50.0}, w_neg[2] = {-1.0, 1.0}, w_zero[2] = {0.0, -1.0}, d_order[2] = {5.0, 4.0};
  EXPECT_EQ(attribute(w, k_equal, d), "kpeaks[1]");  // FilterNet asserts kpeaks[0] < kpeaks[1]
  EXPECT_EQ(attribute(w_neg, k, d), "weights[0]");   // ... weights[0] > 0
  EXPECT_EQ(attribute(w_zero, k, d), "weights[0]");
  EXPECT_EQ(attribute(w, k, d_order), "delays[1]");  // ... delays[0] <= delays[1]
  const double d_neg[2] = {-1.5, 10.0}, d_nan[2] = {0.0, NAN}, k_zero[2] = {0.0, 50.0}, k_far[2] = {20.0, 5000.0};
  EXPECT_EQ(attribute(w, k, d_neg), "delays[0]");
  EXPECT_EQ(attribute(w, k, d_nan), "delays[1]");
  EXPECT_EQ(attribute(w, k_zero, d), "kpeaks[0]");  // a bump with no weight on the 600 lags
  EXPECT_EQ(attribute(w, k_far, d), "kpeaks[1]");
  const double d_apart[2] = {0.0, 650.0};  // the second bump moved past the kernel's end
  EXPECT_EQ(attribute(w, k, d_apart), "delays[1]");
  const double d_small_neg[2] = {-0.5, 10.0};  // truncates to 0, as in FilterNet
  EXPECT_EQ(attribute(w, k, d_small_neg), "");
}

// createOneUnitOfTwoSubunitFilter's latency (spec section 2.5: t_cross 54, 70, 19 and the sums S before it).
TEST(LgnFilters, ZeroCrossingOfTheNominalKernels) {
  struct Row {
    const char* name;
    int t_cross;
    double sum;  // FilterNet: filt.get_kernel(threshold=-1.0).kernel[:tcross_ind].sum()
  };
  for (const Row& r : {Row{"sOFF_TF4", 54, 18.37816783945453}, Row{"sON_TF4", 70, 22.685143309084573},
                       Row{"tOFF_TF8", 19, 12.638561643556011}}) {
    const std::vector<double> h = template_kernel(r.name);
    const int t = cosine_bump_t_cross(h);
    EXPECT_EQ(t, r.t_cross) << r.name;
    EXPECT_NEAR(std::accumulate(h.begin(), h.begin() + t, 0.0), r.sum, 1e-12) << r.name;
  }
  // no negative lobe: no crossing (FilterNet fails with an IndexError)
  const auto& t = lgn_template("sON_TF1");
  const double positive[2] = {1.0, 0.5};
  EXPECT_THROW(cosine_bump_t_cross(cosine_bump_kernel(positive, t.k, t.d)), std::invalid_argument);
}

// FilterNet's cellmetrics: get_data_metrics_for_each_subclass(type)[tf]['spont_exp'][0], the mean Spont of the
// cells of lgnmodel/cell_metrics/{sON,sOFF,tOFF,tON}_cell_data.csv grouped by the TF of their largest F0.
TEST(LgnFilters, SpontaneousRatesFromFilterNetsCellMetrics) {
  const std::pair<const char*, double> rates[] = {{"sON_TF1", 5.2},
                                                  {"sON_TF15", 10.879999999999995},
                                                  {"sON_TF2", 3.533333333333333},
                                                  {"sON_TF4", 8.25},
                                                  {"sON_TF8", 1.7666666666666666},
                                                  {"sOFF_TF1", 3.95},
                                                  {"sOFF_TF15", 5.075},
                                                  {"sOFF_TF2", 4.5317777777777755},
                                                  {"sOFF_TF4", 3.679074074074074},
                                                  {"sOFF_TF8", 3.62},
                                                  {"tOFF_TF1", 5.5},
                                                  {"tOFF_TF15", 1.050666666666664},
                                                  {"tOFF_TF2", 3.4095238095238303},
                                                  {"tOFF_TF4", 3.9445502645502764},
                                                  {"tOFF_TF8", 2.4377777777777867},
                                                  {"tON_TF8", 2.6}};
  for (const auto& [name, hz] : rates) EXPECT_DOUBLE_EQ(lgn_spontaneous_rate(name), hz) << name;
  // the spec's table (section 2.5, 6 decimals)
  EXPECT_NEAR(lgn_spontaneous_rate("sOFF_TF2"), 4.531778, 5e-7);
  EXPECT_NEAR(lgn_spontaneous_rate("tOFF_TF15"), 1.050667, 5e-7);
  // a single token is TF8; a third token is ignored (model_name.split('_')[0:2])
  EXPECT_DOUBLE_EQ(lgn_spontaneous_rate("sON"), 1.7666666666666666);
  EXPECT_DOUBLE_EQ(lgn_spontaneous_rate("tOFF_TF4_extra"), 3.9445502645502764);
  EXPECT_THROW(lgn_spontaneous_rate("tON_TF4"), std::invalid_argument);
  EXPECT_THROW(lgn_spontaneous_rate("sON_TF3"), std::invalid_argument);
  EXPECT_THROW(lgn_spontaneous_rate("sus_sus"), std::invalid_argument);
}

}  // namespace
}  // namespace dpointnet
