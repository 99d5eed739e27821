//===- JsonStringTest.cpp - every JSON string the runtime writes ----------===//
//
// Expected bytes follow RFC 8259 (what must be escaped) and RFC 3629 (which
// byte sequences are UTF-8); each byte outside a valid sequence becomes
// U+FFFD (EF BF BD).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "io/json_string.h"
#include "moe_report.h"

#include <fstream>
#include <sstream>

using namespace parc::rt;

namespace {

std::string quoted(const std::string &s) {
  std::string out;
  appendJsonString(out, s);
  return out;
}

const std::string kFffd = "\xEF\xBF\xBD";

TEST(JsonString, EscapesQuotesBackslashesAndControlBytes) {
  EXPECT_EQ(quoted("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(quoted("\r\n\t"), "\"\\u000d\\u000a\\u0009\"");
  EXPECT_EQ(quoted(std::string("\x00\x01\x1f", 3)),
            "\"\\u0000\\u0001\\u001f\"");
  EXPECT_EQ(quoted("\x7f /"), "\"\x7f /\""); // DEL and '/' need no escape
}

TEST(JsonString, KeepsValidUtf8) {
  // é, €, U+10FFFF and U+1D11E: the largest and a 4-byte code point.
  const std::string valid =
      "\xC3\xA9\xE2\x82\xAC\xF4\x8F\xBF\xBF\xF0\x9D\x84\x9E";
  EXPECT_TRUE(isValidUtf8(valid));
  EXPECT_EQ(quoted(valid), "\"" + valid + "\"");
}

TEST(JsonString, ReplacesEachByteThatIsNotUtf8) {
  const struct {
    std::string bytes;
    int replaced;
  } cases[] = {
      {"\xFF", 1},             // never in UTF-8
      {"\x80", 1},             // a continuation without a lead
      {"\xC0\xAF", 2},         // overlong '/'
      {"\xE0\x80\xAF", 3},     // overlong '/' in three bytes
      {"\xED\xA0\x80", 3},     // the surrogate U+D800
      {"\xF4\x90\x80\x80", 4}, // U+110000, past the last code point
      {"\xF5\x80\x80\x80", 4}, // a lead byte past F4
      {"\xE2\x82", 2},         // a cut-off euro sign
  };
  for (const auto &c : cases) {
    std::string want = "\"x";
    for (int i = 0; i < c.replaced; ++i)
      want += kFffd;
    EXPECT_EQ(quoted("x" + c.bytes + "y"), want + "y\"");
    EXPECT_FALSE(isValidUtf8(c.bytes));
  }
  // A cut sequence does not swallow the ASCII byte after it.
  EXPECT_EQ(quoted("\xE2\x82\""), "\"" + kFffd + kFffd + "\\\"\"");
}

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(JsonString, TheMoeReportQuotesLayerNames) {
  recordMoeStats("moe \"1\"\n\xFF", MoeLayerStats{{1, 2}, {3}, 0, 4, 5});
  const std::string path = ::testing::TempDir() + "moe_report.json";
  ASSERT_RT_OK(parc_rt_moe_report_write(path.c_str()));
  EXPECT_NE(slurp(path).find("{\"layer\": \"moe \\\"1\\\"\\u000a" + kFffd +
                             "\", \"tokens_per_expert\": [1, 2]"),
            std::string::npos)
      << slurp(path);
}

TEST(JsonString, SafetensorsRefusesANameThatIsNotUtf8) {
  const char *name = "w\xFF";
  const float v = 1;
  const int64_t rank = 0;
  const parc_rt_dtype_t f32 = PARC_RT_F32;
  const int64_t *dims[] = {nullptr};
  const void *data[] = {&v};
  const std::string path = ::testing::TempDir() + "bad.safetensors";
  EXPECT_RT_ERROR(
      parc_rt_safetensors_write(path.c_str(), 1, &name, &f32, &rank, dims,
                                data),
      PARC_RT_INVALID_ARGUMENT,
      "safetensors_write: tensor name 'w\xFF' is not valid UTF-8, which a "
      "safetensors header (JSON) cannot carry");
}

} // namespace
