// The key tables of config sections (src/util/json_fields.hpp): a table reads every key it lists with its type,
// default and check, rejects the keys it does not list, and reports errors in the documented form
// "FILE: WHERE: field 'KEY': WHAT". The tables here describe documented sections (train.optimizer and
// train.surrogate of docs/training.md, run.distribution of docs/simulation.md) on structs of their own; the
// expected defaults are the documented ones, the messages written from the documented form.
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dpointnet/util/error.hpp"
#include "dpointnet/util/json_fields.hpp"
#include "dpointnet/util/json_reader.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using dpointnet::test::input_error;
using nlohmann::json;
using Range = JsonReader::Range;

namespace {

enum class Kind { Triangle, Gauss };

struct Optimizer {
  double lr = -1, beta1 = -1, beta2 = -1, epsilon = -1, clip = -1;
};

// docs/training.md: optimizer.type "adam" (the only one), lr > 0 (0.001), beta1 and beta2 in [0, 1) (0.9, 0.999),
// epsilon > 0 (1e-11), clip_global_norm >= 0 (0).
fields::Table<Optimizer> optimizer_table() {
  using O = Optimizer;
  return {fields::one_of<O>("type", "adam", {"adam"}),
          fields::number("lr", &O::lr, 1e-3, Range::Positive),
          fields::number("beta1", &O::beta1, 0.9, Range::NonNegative),
          fields::number("beta2", &O::beta2, 0.999, Range::NonNegative),
          fields::number("epsilon", &O::epsilon, 1e-11, Range::Positive),
          fields::number("clip_global_norm", &O::clip, 0.0, Range::NonNegative),
          fields::check<O>([](const JsonReader& r, const json&, O& o) {
            if (o.beta1 >= 1) r.fail("beta1", "must be < 1");
          })};
}

struct Surrogate {
  Kind kind = Kind::Gauss;
  double dampening = -1;
  bool carry = true;
  int blocks = -1;
  std::int64_t steps = -1;
  std::string name = "unset";
};

// docs/training.md: surrogate.type "triangle" (default) or "gauss", dampening_factor >= 0 (0.1); with keys of the
// other row types (carry_state false, checkpoint_interval >= 1 (25), accumulate 1..2^20 (1), a string).
fields::Table<Surrogate> surrogate_table() {
  using S = Surrogate;
  return {fields::choice<S, Kind>("type", &S::kind, "triangle", {{"triangle", Kind::Triangle}, {"gauss", Kind::Gauss}}),
          fields::number("dampening_factor", &S::dampening, 0.1, Range::NonNegative),
          fields::boolean("carry_state", &S::carry, false),
          fields::integer("checkpoint_interval", &S::blocks, 25, 1),
          fields::integer("accumulate", &S::steps, 1, 1, 1 << 20, "must be <= 2^20"),
          fields::string("name", &S::name, "")};
}

struct Distribution {
  std::string mode;
  int replicas = -1;
  double timeout_s = -1;
};

// docs/simulation.md: run.distribution mode (required), replicas >= 1, timeout_s > 0 (1800); unknown keys are
// refused listing the known ones.
fields::Table<Distribution> distribution_table() {
  using D = Distribution;
  return {
      fields::required_string("mode", &D::mode),
      fields::integer_in("replicas", &D::replicas, 0, 1, 2147483647, "must be an integer >= 1 (at most 2147483647)"),
      fields::number("timeout_s", &D::timeout_s, 1800, Range::Positive)};
}

template <class T>
T read(const fields::Table<T>& table, const json& o, const std::string& section,
       fields::Unknown unknown = fields::Unknown::Reject) {
  T t;
  fields::read(JsonReader("c.json", section), o, table, t, unknown);
  return t;
}

}  // namespace

TEST(JsonFields, AbsentKeysTakeTheDocumentedDefaults) {
  const Optimizer o = read(optimizer_table(), json::object(), "train.optimizer");
  EXPECT_EQ(o.lr, 1e-3);
  EXPECT_EQ(o.beta1, 0.9);
  EXPECT_EQ(o.beta2, 0.999);
  EXPECT_EQ(o.epsilon, 1e-11);
  EXPECT_EQ(o.clip, 0.0);
  const Surrogate s = read(surrogate_table(), json::object(), "train.surrogate");
  EXPECT_EQ(s.kind, Kind::Triangle);
  EXPECT_EQ(s.dampening, 0.1);
  EXPECT_FALSE(s.carry);
  EXPECT_EQ(s.blocks, 25);
  EXPECT_EQ(s.steps, 1);
  EXPECT_EQ(s.name, "");
  const Distribution d = read(distribution_table(), json{{"mode", "mpi"}}, "run.distribution");
  EXPECT_EQ(d.replicas, 0);
  EXPECT_EQ(d.timeout_s, 1800);
}

TEST(JsonFields, GivenKeysAreReadIntoTheirMembers) {
  const Optimizer o = read(optimizer_table(), json::parse(R"({"type": "adam", "beta1": 0, "beta2": 0.5,
      "epsilon": 2, "clip_global_norm": 3, "lr": null})"),
                           "train.optimizer");
  EXPECT_EQ(o.lr, 1e-3);  // null takes the default
  EXPECT_EQ(o.beta1, 0.0);
  EXPECT_EQ(o.beta2, 0.5);
  EXPECT_EQ(o.epsilon, 2.0);
  EXPECT_EQ(o.clip, 3.0);
  const Surrogate s = read(surrogate_table(), json::parse(R"({"type": "gauss", "dampening_factor": 0.3,
      "carry_state": true, "checkpoint_interval": 7, "accumulate": 1048576, "name": "x"})"),
                           "train.surrogate");
  EXPECT_EQ(s.kind, Kind::Gauss);
  EXPECT_EQ(s.dampening, 0.3);
  EXPECT_TRUE(s.carry);
  EXPECT_EQ(s.blocks, 7);
  EXPECT_EQ(s.steps, 1 << 20);
  EXPECT_EQ(s.name, "x");
  const Distribution d =
      read(distribution_table(), json{{"mode", "mirrored"}, {"replicas", 2}, {"timeout_s", 5.5}}, "run.distribution");
  EXPECT_EQ(d.mode, "mirrored");
  EXPECT_EQ(d.replicas, 2);
  EXPECT_EQ(d.timeout_s, 5.5);
}

TEST(JsonFields, BadValuesAreRefusedInTheDocumentedForm) {
  auto opt = [](const char* text) {
    return input_error([&] { read(optimizer_table(), json::parse(text), "train.optimizer"); });
  };
  EXPECT_EQ(opt(R"({"lr": 0})"), "c.json: train.optimizer: field 'lr': must be > 0, got 0");
  EXPECT_EQ(opt(R"({"beta2": -1})"), "c.json: train.optimizer: field 'beta2': must be >= 0, got -1");
  EXPECT_EQ(opt(R"({"epsilon": "x"})"), "c.json: train.optimizer: field 'epsilon': must be a finite number, got \"x\"");
  EXPECT_EQ(opt(R"({"type": "sgd"})"), "c.json: train.optimizer: field 'type': \"sgd\" is not supported (adam)");
  EXPECT_EQ(opt(R"({"type": 3})"), "c.json: train.optimizer: field 'type': must be a string, got 3");
  EXPECT_EQ(opt(R"({"beta1": 1})"), "c.json: train.optimizer: field 'beta1': must be < 1");
  auto sur = [](const char* text) {
    return input_error([&] { read(surrogate_table(), json::parse(text), "train.surrogate"); });
  };
  EXPECT_EQ(sur(R"({"type": "box"})"),
            "c.json: train.surrogate: field 'type': \"box\" is not supported (triangle or gauss)");
  EXPECT_EQ(sur(R"({"carry_state": 1})"), "c.json: train.surrogate: field 'carry_state': must be true or false, got 1");
  EXPECT_EQ(sur(R"({"checkpoint_interval": 2.0})"),
            "c.json: train.surrogate: field 'checkpoint_interval': must be an integer >= 1, got 2.0");
  EXPECT_EQ(sur(R"({"accumulate": 1048577})"), "c.json: train.surrogate: field 'accumulate': must be <= 2^20");
  auto dist = [](const json& o) {
    return input_error([&] { read(distribution_table(), o, "run.distribution", fields::Unknown::RejectListingKeys); });
  };
  EXPECT_EQ(dist(json::object()), "c.json: run.distribution: field 'mode': is required");
  EXPECT_EQ(dist(json{{"mode", "mpi"}, {"replicas", 0}}),
            "c.json: run.distribution: field 'replicas': must be an integer >= 1 (at most 2147483647)");
  EXPECT_EQ(dist(json{{"mode", "mpi"}, {"replicas", 2147483648LL}}),
            "c.json: run.distribution: field 'replicas': must be an integer >= 1 (at most 2147483647)");
}

TEST(JsonFields, UnknownKeysComeFromTheTable) {
  EXPECT_EQ(fields::keys(optimizer_table()),
            (std::vector<std::string>{"type", "lr", "beta1", "beta2", "epsilon", "clip_global_norm"}));
  EXPECT_EQ(input_error([&] {
              read(optimizer_table(), json{{"momentum", 0.9}}, "train.optimizer");
            }),
            "c.json: train.optimizer: field 'momentum': is not a known key");
  EXPECT_EQ(input_error([&] {
              read(distribution_table(), json{{"mode", "mpi"}, {"nodes", 2}}, "run.distribution",
                   fields::Unknown::RejectListingKeys);
            }),
            "c.json: run.distribution: field 'nodes': is not a known key (mode, replicas, timeout_s)");
  // unknown keys are refused before any value is read; Unknown::Accept ignores them
  EXPECT_EQ(input_error([&] {
              read(optimizer_table(), json{{"lr", -1}, {"x", 1}}, "train.optimizer");
            }),
            "c.json: train.optimizer: field 'x': is not a known key");
  EXPECT_EQ(read(optimizer_table(), json{{"lr", 2}, {"x", 1}}, "train.optimizer", fields::Unknown::Accept).lr, 2.0);
}

TEST(JsonFields, RowsRunInTableOrderAndObjectsNameTheirSection) {
  struct Top {
    std::vector<std::string> order;
    double lr = 0;
  };
  auto note = [](const char* what) {
    return [what](const JsonReader&, const json&, Top& t) { t.order.push_back(what); };
  };
  const fields::Table<Top> table = {
      fields::custom<Top>({"a"}, note("a")),
      fields::check<Top>(note("check")),
      fields::object<Top>("optimizer", "train.optimizer", {fields::number("lr", &Top::lr, 1e-3, Range::Positive)}),
      fields::custom<Top>({"b", "c"}, note("bc")),
  };
  EXPECT_EQ(fields::keys(table), (std::vector<std::string>{"a", "optimizer", "b", "c"}));
  const Top t = read(table, json::object(), "train");  // custom rows and checks run whether keys are given or not
  EXPECT_EQ(t.order, (std::vector<std::string>{"a", "check", "bc"}));
  EXPECT_EQ(t.lr, 0.0);  // an absent object leaves its members alone
  EXPECT_EQ(read(table, json{{"optimizer", json::object()}}, "train").lr, 1e-3);
  EXPECT_EQ(input_error([&] {
              read(table, json{{"optimizer", {{"lr", 0}}}}, "train");
            }),
            "c.json: train.optimizer: field 'lr': must be > 0, got 0");
}

TEST(JsonFields, KindTablesListTheirNames) {
  struct Kind_ {
    std::string name;
    int value;
  };
  const std::vector<Kind_> kinds = {{"spikes", 0}, {"rates", 1}, {"poisson", 2}, {"current_clamp", 3}};
  ASSERT_NE(fields::find_kind(kinds, "poisson"), nullptr);
  EXPECT_EQ(fields::find_kind(kinds, "poisson")->value, 2);
  EXPECT_EQ(fields::find_kind(kinds, "noise"), nullptr);
  EXPECT_EQ(fields::unsupported("noise", fields::kind_names(kinds)),
            "\"noise\" is not supported (spikes, rates, poisson or current_clamp)");
  EXPECT_EQ(fields::join({"a"}, ", ", " or "), "a");
  EXPECT_EQ(fields::join({}, ", ", " or "), "");
}
