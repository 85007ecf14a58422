// LGN cells from node attributes (build_lgn_cell) against BMTK FilterNet's default_cell_loader
// (tests/lgn_reference.hpp, tests/lgn_filternet_reference.py) and shared/spec/V1-PAPER.md section 2.5.
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
using test::kLgnNodeKernels;
using test::lgn_template;

LgnNodeAttributes composite(const std::string& model, const std::string& dom, const std::string& non_dom) {
  LgnNodeAttributes a;
  a.model = model;
  a.x = 60;
  a.y = 40;
  a.spatial_size = 6;
  a.tuning_angle = 30;
  a.sf_sep = 6;
  const auto& d = lgn_template(dom);
  const auto& n = lgn_template(non_dom);
  for (int i = 0; i < 2; ++i) {
    a.weight_dom[i] = d.w[i];
    a.kpeaks_dom[i] = d.k[i];
    a.delay_dom[i] = d.d[i];
    a.weight_non_dom[i] = n.w[i];
    a.kpeaks_non_dom[i] = n.k[i];
    a.delay_non_dom[i] = n.d[i];
  }
  return a;
}

std::string bad_attribute(const LgnNodeAttributes& a) {
  try {
    build_lgn_cell(a);
  } catch (const LgnAttributeError& e) {
    return e.attribute();
  }
  return "";
}

// Spec section 2.5: sONsOFF t_cross 54 / 70, offsets 61 / 51, A_d = -2.202354; sONtOFF t_cross 19, offset 45.8
// (truncated to 45), non-dominant offset 23.5 (-> 23), A_d = -2.074965. FilterNet (createOneUnitOfTwoSubunitFilter
// and the amplitude formula): -2.20235440235677 and -2.074964616305271; new kernel lengths 661, 651, 645, 623.
TEST(LgnBuild, CompositeClassesAtNominalParameters) {
  const LgnCell on_off = build_lgn_cell(composite("sONsOFF_001", "sOFF_TF4", "sON_TF4"));
  ASSERT_EQ(on_off.subunits.size(), 2u);
  const LgnSubunit &d = on_off.subunits[0], &n = on_off.subunits[1];
  EXPECT_NEAR(d.amplitude, -2.20235440235677, 1e-12);
  EXPECT_NEAR(d.amplitude, -2.202354, 5e-7);
  EXPECT_EQ(n.amplitude, 1.0);
  EXPECT_EQ(d.kernel.size(), 600u + 61u);
  EXPECT_EQ(n.kernel.size(), 600u + 51u);
  EXPECT_NEAR(std::accumulate(d.kernel.begin(), d.kernel.end(), 0.0), 4.1559556854763855, 1e-12);
  EXPECT_NEAR(std::accumulate(n.kernel.begin(), n.kernel.end(), 0.0), 8.97994697811633, 1e-12);
  EXPECT_EQ(cosine_bump_t_cross(d.kernel), 115);  // aligned to ttp_exp
  EXPECT_EQ(cosine_bump_t_cross(n.kernel), 121);
  EXPECT_EQ(d.spont, 2.0);
  EXPECT_EQ(n.spont, 2.0);
  EXPECT_EQ(d.sigma, 2.0);
  EXPECT_EQ(n.sigma, 2.0);
  EXPECT_EQ(d.x, 60.0);
  EXPECT_EQ(d.y, 40.0);
  EXPECT_NEAR(n.x, 60 + 6 * std::sqrt(3.0) / 2, 1e-12);  // tuning angle 30 deg, sf_sep 6
  EXPECT_NEAR(n.y, 40 + 3.0, 1e-12);

  const LgnCell on_t_off = build_lgn_cell(composite("sONtOFF_001", "tOFF_TF8", "sON_TF4"));
  ASSERT_EQ(on_t_off.subunits.size(), 2u);
  EXPECT_NEAR(on_t_off.subunits[0].amplitude, -2.074964616305271, 1e-12);
  EXPECT_NEAR(on_t_off.subunits[0].amplitude, -2.074965, 5e-7);
  EXPECT_EQ(on_t_off.subunits[0].kernel.size(), 600u + 45u);
  EXPECT_EQ(on_t_off.subunits[1].kernel.size(), 600u + 23u);
  EXPECT_EQ(on_t_off.subunits[0].spont, 2.75);
  EXPECT_EQ(on_t_off.subunits[1].spont, 2.75);
  EXPECT_EQ(on_t_off.subunits[1].amplitude, 1.0);
  // FilterNet's other spellings of the composite classes
  EXPECT_EQ(build_lgn_cell(composite("sONsOFF", "sOFF_TF4", "sON_TF4")).subunits[0].amplitude, d.amplitude);
  EXPECT_EQ(build_lgn_cell(composite("sONtOFF", "tOFF_TF8", "sON_TF4")).subunits[0].amplitude,
            on_t_off.subunits[0].amplitude);
}

TEST(LgnBuild, CompositeOffsetIsAddedBeforeTheDelaysAreTruncated) {
  LgnNodeAttributes a = composite("sONtOFF_001", "tOFF_TF8", "sON_TF4");
  a.delay_dom[1] = 14.3;  // + 40.8 = 55.1 -> 55 in FilterNet (14 + 40 would give 54)
  test::expect_kernel(build_lgn_cell(a).subunits[0].kernel, kLgnDelayedKernels[1]);
}

// default_cell_loader on nodes of the vendored tools/example_nodes.csv (jittered V1-model attributes).
TEST(LgnBuild, ExampleNodesMatchFilterNet) {
  LgnNodeAttributes s;
  s.model = "sON_TF1";
  s.x = 57.976549427962546;
  s.y = 7.4241088454892825;
  s.spatial_size = 5.184736301530137;
  const double k496[2] = {55.40483168168431, 134.49877791191807}, w496[2] = {1.0009541157920274, -0.44549420763922487},
               d496[2] = {0, 14.867648948779896};
  std::copy(k496, k496 + 2, s.kpeaks_dom);
  std::copy(w496, w496 + 2, s.weight_dom);
  std::copy(d496, d496 + 2, s.delay_dom);
  const LgnCell c = build_lgn_cell(s);
  ASSERT_EQ(c.subunits.size(), 1u);
  EXPECT_EQ(c.subunits[0].amplitude, 1.0);
  EXPECT_EQ(c.subunits[0].spont, 5.2);  // transfer function Heaviside(s+5.2)*(s+5.2)
  EXPECT_EQ(c.subunits[0].sigma, 5.184736301530137 / 3.0);
  test::expect_kernel(c.subunits[0].kernel, kLgnNodeKernels[0]);

  struct Node {
    const char* model;
    double x, y, size, kd[2], wd[2], dd[2], kn[2], wn[2], dn[2], angle, sep;
    double amp_dom, x_nd, y_nd, spont;
  };
  const Node nodes[] = {{"sONsOFF_001",
                         7.230526772985226,
                         30.871746653070126,
                         6.0,
                         {22.25121195307872, 55.39399908338737},
                         {3.1822557417186004, -1.632482734971737},
                         {0, 15.20119489804419},
                         {30.833082152762593, 59.50929748156345},
                         {3.6402200786519603, -1.8559059787644414},
                         {0.0, 24.633200214930287},
                         215.80006425451538,
                         6.037390534008838,
                         -2.262427256250421,
                         2.3338217102880874,
                         27.340123231880412,
                         2.0},
                        {"sONtOFF_001",
                         17.44595683296433,
                         33.85862198120309,
                         9.0,
                         {8.637199983145486, 23.307526208763488},
                         {4.1946899020979425, -2.4207580220244695},
                         {0, 0.0},
                         {31.31593995408812, 57.211640501046794},
                         {3.601681038783033, -1.7905443815208775},
                         {0.0, 25.37657213267842},
                         272.19344397513015,
                         3.9225201177073217,
                         -2.085928886202322,
                         17.596085284922054,
                         29.938975884712818,
                         2.75}};
  for (int i = 0; i < 2; ++i) {
    const Node& n = nodes[i];
    LgnNodeAttributes a;
    a.model = n.model;
    a.x = n.x;
    a.y = n.y;
    a.spatial_size = n.size;
    a.tuning_angle = n.angle;
    a.sf_sep = n.sep;
    a.spont_fr = 100;  // ignored by composite classes
    for (int k = 0; k < 2; ++k) {
      a.kpeaks_dom[k] = n.kd[k];
      a.weight_dom[k] = n.wd[k];
      a.delay_dom[k] = n.dd[k];
      a.kpeaks_non_dom[k] = n.kn[k];
      a.weight_non_dom[k] = n.wn[k];
      a.delay_non_dom[k] = n.dn[k];
    }
    const LgnCell cell = build_lgn_cell(a);
    ASSERT_EQ(cell.subunits.size(), 2u);
    EXPECT_NEAR(cell.subunits[0].amplitude, n.amp_dom, 1e-12);
    EXPECT_EQ(cell.subunits[0].x, n.x);
    EXPECT_EQ(cell.subunits[0].y, n.y);
    EXPECT_NEAR(cell.subunits[1].x, n.x_nd, 1e-12);
    EXPECT_NEAR(cell.subunits[1].y, n.y_nd, 1e-12);
    EXPECT_EQ(cell.subunits[1].amplitude, 1.0);
    for (const LgnSubunit& u : cell.subunits) {
      EXPECT_EQ(u.sigma, n.size / 3.0);
      EXPECT_EQ(u.spont, n.spont);
    }
    test::expect_kernel(cell.subunits[0].kernel, kLgnNodeKernels[1 + 2 * i]);
    test::expect_kernel(cell.subunits[1].kernel, kLgnNodeKernels[2 + 2 * i]);
  }
}

TEST(LgnBuild, SingleSubunitClasses) {
  auto single = [](const std::string& model, const std::string& tmpl) {
    LgnNodeAttributes a;
    a.model = model;
    a.x = 10;
    a.y = 20;
    a.spatial_size = 4.5;
    const auto& t = lgn_template(tmpl);
    std::copy(t.w, t.w + 2, a.weight_dom);
    std::copy(t.k, t.k + 2, a.kpeaks_dom);
    std::copy(t.d, t.d + 2, a.delay_dom);
    return a;
  };
  // cell_loaders.py: amplitude +1 if the type (the text before '_') contains ON, else -1 if it contains OFF
  const std::pair<const char*, double> classes[] = {
      {"sON_TF8", 1.0}, {"sOFF_TF8", -1.0}, {"tOFF_TF8", -1.0}, {"tON_TF8", 1.0}, {"sON", 1.0}};
  for (const auto& [model, amplitude] : classes) {
    const LgnCell c = build_lgn_cell(single(model, "sON_TF8"));
    ASSERT_EQ(c.subunits.size(), 1u);
    EXPECT_EQ(c.model, model);
    EXPECT_EQ(c.subunits[0].amplitude, amplitude) << model;
    EXPECT_EQ(c.subunits[0].spont, lgn_spontaneous_rate(model)) << model;
    EXPECT_EQ(c.subunits[0].sigma, 1.5);
    test::expect_kernel(c.subunits[0].kernel, test::kLgnNominalKernels[8]);  // sON_TF8
  }
  LgnNodeAttributes a = single("sOFF_TF4", "sOFF_TF4");
  a.spont_fr = 7.25;  // overrides the cell metrics
  EXPECT_EQ(build_lgn_cell(a).subunits[0].spont, 7.25);
  a.model = "xOFF_TF3";  // no cell metrics, but spont_fr given: FilterNet builds it
  EXPECT_EQ(build_lgn_cell(a).subunits[0].amplitude, -1.0);
  a.spont_fr = NAN;
  EXPECT_EQ(bad_attribute(a), "pop_name");
  a.model = "sus_sus";
  a.spont_fr = 1;
  EXPECT_EQ(bad_attribute(a), "pop_name");  // neither ON nor OFF
  a.model = "LGNOnOFFCell";
  EXPECT_EQ(bad_attribute(a), "pop_name");
  a.model = "";
  EXPECT_EQ(bad_attribute(a), "pop_name");
}

TEST(LgnBuild, BuildRefusesBadAttributes) {
  const LgnNodeAttributes good = composite("sONsOFF_001", "sOFF_TF4", "sON_TF4");
  EXPECT_EQ(bad_attribute(good), "");
  auto with = [&](auto change) {
    LgnNodeAttributes a = good;
    change(a);
    return bad_attribute(a);
  };
  EXPECT_EQ(with([](auto& a) { a.tuning_angle = NAN; }), "tuning_angle");  // FilterNet would draw it
  EXPECT_EQ(with([](auto& a) { a.sf_sep = NAN; }), "sf_sep");
  EXPECT_EQ(with([](auto& a) { a.spatial_size = 0; }), "spatial_size");
  EXPECT_EQ(with([](auto& a) { a.x = INFINITY; }), "x");
  EXPECT_EQ(with([](auto& a) { a.kpeaks_dom[1] = 10; }), "kpeaks_dom_1");
  EXPECT_EQ(with([](auto& a) { a.weight_dom[0] = 0; }), "weight_dom_0");
  EXPECT_EQ(with([](auto& a) { a.delay_non_dom[0] = 30; }), "delay_non_dom_1");
  EXPECT_EQ(with([](auto& a) { a.weight_non_dom[1] = NAN; }), "weight_non_dom_1");
  EXPECT_EQ(with([](auto& a) { a.weight_dom[1] = 0.5; }), "weight_dom_1");  // no zero crossing
  // sON_TF1 crosses zero at lag 137, after sONsOFF's dominant latency 115: FilterNet raises 'del_offset < 0'
  EXPECT_EQ(with([](auto& a) {
              const auto& t = lgn_template("sON_TF1");
              std::copy(t.w, t.w + 2, a.weight_dom);
              std::copy(t.k, t.k + 2, a.kpeaks_dom);
            }),
            "delay_dom_0");
}

}  // namespace
}  // namespace dpointnet
