//===- FormatsTest.cpp - output file names and the shard checksum ---------===//

#include "io/formats.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace parc::rt;

namespace {

TEST(Formats, Crc32cMatchesTheStandardCheckValue) {
  // The CRC-32C check value of "123456789" (RFC 3720, appendix B.4).
  EXPECT_EQ(crc32c(0, "123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c(0, "", 0), 0u);
  EXPECT_EQ(crcHex(0xE3069283u), "e3069283");
}

TEST(Formats, Crc32cStreams) {
  std::string s(1000, '\0');
  for (size_t i = 0; i < s.size(); ++i)
    s[i] = char(i * 7 + 3);
  const uint32_t whole = crc32c(0, s.data(), s.size());
  EXPECT_EQ(crc32c(crc32c(0, s.data(), 333), s.data() + 333, 667), whole);
  s[500] ^= 1;
  EXPECT_NE(crc32c(0, s.data(), s.size()), whole);
}

TEST(Formats, OutputFileNamesAreInjectiveAndConfined) {
  EXPECT_EQ(outputFileName("logits"), "logits.npy");
  EXPECT_EQ(outputFileName("out/0:x"), "out%2F0%3Ax.npy");
  EXPECT_EQ(outputFileName("out_0_x"), "out_0_x.npy");
  EXPECT_EQ(outputFileName("../evil"), "%2E.%2Fevil.npy");
  EXPECT_EQ(outputFileName("a%2Fb"), "a%252Fb.npy");
  EXPECT_EQ(outputFileName("."), "%2E.npy");
  EXPECT_EQ(outputFileName(""), "%.npy");
  std::set<std::string> files;
  for (const char *n : {"out/0:x", "out_0_x", "out%2F0%3Ax", "../evil", ".",
                        "..", "", "%", "x.y", "\n", "\xff"}) {
    const std::string f = outputFileName(n);
    EXPECT_TRUE(isPlainFileName(f)) << f;
    EXPECT_NE(f[0], '.') << f;
    EXPECT_TRUE(files.insert(f).second) << n << " -> " << f;
  }
  EXPECT_FALSE(isPlainFileName("../x.npy"));
  EXPECT_FALSE(isPlainFileName(".."));
  EXPECT_FALSE(isPlainFileName(""));
}

} // namespace
