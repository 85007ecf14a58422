// The JSON reader: files parsed with errors naming the file, typed keys with errors naming the file, the section
// and the key, in the documented form "FILE: WHERE: field 'KEY': WHAT" (docs/simulation.md, exit codes; the
// same for train). Expected messages are written from that form, the values by hand.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dpointnet/util/error.hpp"
#include "dpointnet/util/json_reader.hpp"
#include "test_support.hpp"

using namespace dpointnet;
using dpointnet::test::input_error;
using dpointnet::test::TempDir;
using nlohmann::json;

namespace {

bool has(const std::string& m, const std::string& part) { return m.find(part) != std::string::npos; }

}  // namespace

TEST(JsonReader, ParsesAFileWithComments) {
  TempDir d;
  d.write("c.json", "{\n  // a comment\n  \"run\": {\"dt\": 0.25, /* another */ \"name\": \"x\"}\n}\n");
  const json j = parse_json_file(d.file("c.json"));
  EXPECT_DOUBLE_EQ(j["run"]["dt"].get<double>(), 0.25);
  EXPECT_EQ(j["run"]["name"], "x");
}

TEST(JsonReader, MissingOrInvalidFileNamesTheFile) {
  TempDir d;
  const std::string missing = d.file("absent.json");
  std::string m = input_error([&] { parse_json_file(missing); });
  EXPECT_EQ(m.rfind(missing + ": ", 0), 0u) << m;
  EXPECT_TRUE(has(m, "does not exist")) << m;

  d.write("bad.json", "{\"run\": {\"dt\": 0.25,}}");
  m = input_error([&] { parse_json_file(d.file("bad.json")); });
  EXPECT_EQ(m.rfind(d.file("bad.json") + ": ", 0), 0u) << m;
  EXPECT_TRUE(has(m, "invalid JSON")) << m;
}

TEST(JsonReader, ReferredFileErrorsNameTheReferrerAndItsField) {
  TempDir d;
  // a missing referred file: the error is the referrer's, at its label and field, and names the missing path
  const std::string target = d.file("types.json");
  std::string m = input_error([&] { read_json_file(target, "config.json", "components", "dynamics_params"); });
  EXPECT_EQ(m.rfind("config.json: components: field 'dynamics_params': ", 0), 0u) << m;
  EXPECT_TRUE(has(m, target)) << m;
  // a directory instead of a file
  m = input_error([&] { read_json_file(d.str(), "config.json", "components", "dynamics_params"); });
  EXPECT_EQ(m.rfind("config.json: components: field 'dynamics_params': ", 0), 0u) << m;
  EXPECT_TRUE(has(m, "directory")) << m;
}

TEST(JsonReader, NumberBeyondDoubleRangeNamesItsKey) {
  TempDir d;
  d.write("p.json", "{\"C_m\": 60.7, \"tau_syn\": 1e999}");
  const std::string m = input_error([&] { read_json_file(d.file("p.json"), "ref.json", "cell 3", "params"); });
  // the parse error names the parsed file (not the referrer), the label and the key holding 1e999
  EXPECT_EQ(m.rfind(d.file("p.json") + ": cell 3: field 'tau_syn': ", 0), 0u) << m;
  EXPECT_TRUE(has(m, "1e999")) << m;
  EXPECT_TRUE(has(m, "not a finite number")) << m;

  d.write("q.json", "{\"C_m\": 60.7, \"g\": 3.1}");
  const json j = read_json_file(d.file("q.json"), "ref.json", "cell 3", "params");
  EXPECT_DOUBLE_EQ(j["g"].get<double>(), 3.1);
}

TEST(JsonReader, OptionalKeysTakeTheirDefaultsWhenAbsent) {
  const JsonReader r("sim.json", "train");
  const json o = json::parse(R"({"lr": 0.5, "nothing": null, "steps": 7, "name": "n", "on": true})");
  EXPECT_DOUBLE_EQ(r.number(o, "lr", 1.0), 0.5);
  EXPECT_DOUBLE_EQ(r.number(o, "absent", 1.25), 1.25);
  EXPECT_DOUBLE_EQ(r.number(o, "nothing", 2.5), 2.5) << "null takes the default";
  EXPECT_EQ(r.integer(o, "steps", 1, 1), 7);
  EXPECT_EQ(r.integer(o, "absent", 3, 1), 3);
  EXPECT_EQ(r.string(o, "name", "d"), "n");
  EXPECT_EQ(r.string(o, "absent", "d"), "d");
  EXPECT_TRUE(r.boolean(o, "on", false));
  EXPECT_FALSE(r.boolean(o, "absent", false));
  EXPECT_DOUBLE_EQ(r.required_number(o, "lr"), 0.5);
  EXPECT_EQ(r.required_string(o, "name"), "n");
}

TEST(JsonReader, BadValuesAreRefusedNamingFileSectionKeyAndValue) {
  const JsonReader r("sim.json", "train");
  const json o = json::parse(
      R"({"zero": 0, "neg": -1.5, "text": "abc", "frac": 2.5, "small": 0, "yes": "yes", "num": 3, "list": [1]})");
  struct Case {
    std::string key, value_text, what;
    std::function<void()> call;
  };
  const std::vector<Case> cases = {
      {"zero", "0", "> 0", [&] { r.number(o, "zero", 1, JsonReader::Range::Positive); }},
      {"neg", "-1.5", ">= 0", [&] { r.number(o, "neg", 1, JsonReader::Range::NonNegative); }},
      {"text", "\"abc\"", "finite number", [&] { r.number(o, "text", 1); }},
      {"frac", "2.5", "integer >= 1", [&] { r.integer(o, "frac", 1, 1); }},
      {"small", "0", "integer >= 1", [&] { r.integer(o, "small", 1, 1); }},
      {"num", "3", "string", [&] { r.string(o, "num", ""); }},
      {"yes", "\"yes\"", "true or false", [&] { r.boolean(o, "yes", false); }},
      {"list", "[1]", "number", [&] { r.required_number(o, "list"); }},
      {"num", "3", "string", [&] { r.required_string(o, "num"); }},
  };
  for (const auto& c : cases) {
    const std::string m = input_error(c.call);
    EXPECT_EQ(m.rfind("sim.json: train: field '" + c.key + "': ", 0), 0u) << m;
    EXPECT_TRUE(has(m, c.what)) << m;
    EXPECT_TRUE(has(m, c.value_text)) << m;
  }
}

TEST(JsonReader, NonNegativeAcceptsZeroAndAnyAcceptsNegatives) {
  const JsonReader r("sim.json", "train");
  const json o = json::parse(R"({"zero": 0, "neg": -1.5})");
  EXPECT_DOUBLE_EQ(r.number(o, "zero", 1, JsonReader::Range::NonNegative), 0.0);
  EXPECT_DOUBLE_EQ(r.number(o, "neg", 1, JsonReader::Range::Any), -1.5);
  EXPECT_EQ(r.integer(o, "zero", 5, 0), 0);
}

TEST(JsonReader, RequiredKeysAreRequired) {
  const JsonReader r("sim.json", "run.distribution");
  const json o = json::object();
  std::string m = input_error([&] { r.required_number(o, "timeout_s"); });
  EXPECT_EQ(m, "sim.json: run.distribution: field 'timeout_s': is required");
  m = input_error([&] { r.required_string(o, "mode"); });
  EXPECT_EQ(m, "sim.json: run.distribution: field 'mode': is required");
}

TEST(JsonReader, UnknownKeysAreRefusedWithTheHint) {
  const JsonReader r("sim.json", "run.distribution");
  const json o = json::parse(R"({"mode": "mpi", "replica": 2})");
  const std::string m = input_error([&] { r.reject_unknown(o, {"mode", "devices", "replicas"}, "(mode, devices)"); });
  EXPECT_EQ(m.rfind("sim.json: run.distribution: field 'replica': ", 0), 0u) << m;
  EXPECT_TRUE(has(m, "not a known key")) << m;
  EXPECT_TRUE(has(m, "(mode, devices)")) << m;
  EXPECT_NO_THROW(r.reject_unknown(json::parse(R"({"mode": "mpi"})"), {"mode", "devices"}));
}

TEST(JsonReader, AtKeepsTheFileAndNamesTheNewSection) {
  const JsonReader r("sim.json", "train");
  const JsonReader l = r.at("train.losses[1]");
  EXPECT_EQ(l.file(), "sim.json");
  EXPECT_EQ(l.section(), "train.losses[1]");
  const std::string m = input_error([&] { l.fail("cost", "must be >= 0"); });
  EXPECT_EQ(m, "sim.json: train.losses[1]: field 'cost': must be >= 0");
}
