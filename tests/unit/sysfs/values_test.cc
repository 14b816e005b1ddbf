#include "rail/sysfs/values.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace rail::sysfs {
namespace {

TEST(TrimValue, RemovesTrailingNewlineAndBlanks) {
  EXPECT_EQ(TrimValue("4: ACTIVE\n"), "4: ACTIVE");
  EXPECT_EQ(TrimValue("4: ACTIVE"), "4: ACTIVE");
  EXPECT_EQ(TrimValue("  up \r\n"), "up");
  EXPECT_EQ(TrimValue("\n"), "");
  EXPECT_EQ(TrimValue(""), "");
}

TEST(ParseUnsigned, DecimalWithAndWithoutNewline) {
  EXPECT_EQ(ParseUnsigned("1234\n"), 1234u);
  EXPECT_EQ(ParseUnsigned("1234"), 1234u);
  EXPECT_EQ(ParseUnsigned("298324568603\n"), 298324568603u);
  EXPECT_EQ(ParseUnsigned("18446744073709551615"), std::numeric_limits<std::uint64_t>::max());
}

TEST(ParseUnsigned, HexadecimalLids) {
  EXPECT_EQ(ParseUnsigned("0x0\n"), 0u);
  EXPECT_EQ(ParseUnsigned("0x12"), 18u);
  EXPECT_EQ(ParseUnsigned("0X1f"), 31u);
  EXPECT_EQ(ParseUnsigned("0xffff\n"), 65535u);
}

TEST(ParseUnsigned, RejectsMalformedText) {
  EXPECT_FALSE(ParseUnsigned(""));
  EXPECT_FALSE(ParseUnsigned("\n"));
  EXPECT_FALSE(ParseUnsigned("12abc"));
  EXPECT_FALSE(ParseUnsigned("-1"));
  EXPECT_FALSE(ParseUnsigned("0x"));
  EXPECT_FALSE(ParseUnsigned("0xzz"));
  EXPECT_FALSE(ParseUnsigned("N/A (no PMA)"));
  EXPECT_FALSE(ParseUnsigned("18446744073709551616"));  // one above 2^64-1
}

TEST(ParseSigned, NegativeSpeedOfADownLink) {
  EXPECT_EQ(ParseSigned("-1\n"), -1);
  EXPECT_EQ(ParseSigned("100000"), 100000);
  EXPECT_FALSE(ParseSigned("fast"));
  EXPECT_FALSE(ParseSigned(""));
  EXPECT_FALSE(ParseSigned("10 Mb"));
}

TEST(ParseNumberedState, StateAndPhysState) {
  struct Case {
    const char* text;
    std::uint32_t id;
    const char* name;
  };
  for (const Case& c : {Case{"4: ACTIVE\n", 4, "ACTIVE"}, Case{"5: LinkUp", 5, "LinkUp"},
                        Case{"3: Disabled\n", 3, "Disabled"}, Case{"1: DOWN", 1, "DOWN"},
                        Case{"5:LinkUp\n", 5, "LinkUp"}, Case{"2: INIT", 2, "INIT"}}) {
    auto state = ParseNumberedState(c.text);
    ASSERT_TRUE(state) << c.text;
    EXPECT_EQ(state->id, c.id) << c.text;
    EXPECT_EQ(state->name, c.name) << c.text;
  }
}

TEST(ParseNumberedState, RejectsTextWithoutNumber) {
  EXPECT_FALSE(ParseNumberedState("ACTIVE"));
  EXPECT_FALSE(ParseNumberedState("x: ACTIVE"));
  EXPECT_FALSE(ParseNumberedState(": ACTIVE"));
  EXPECT_FALSE(ParseNumberedState(""));
}

TEST(ParsePortRate, KernelSpellings) {
  struct Case {
    const char* text;
    double gigabits;
    const char* width;
    double bytes_per_second;
  };
  for (const Case& c : {
           Case{"100 Gb/sec (2X HDR)\n", 100, "2X HDR", 12.5e9},
           Case{"2.5 Gb/sec (1X SDR)", 2.5, "1X SDR", 312500000},
           Case{"400 Gb/sec (4X NDR)\n", 400, "4X NDR", 50e9}, Case{"10 Gb/sec", 10, "", 1.25e9},
           Case{"10 Gb/sec\n", 10, "", 1.25e9}, Case{"56 Gb/sec (4X FDR)", 56, "4X FDR", 7e9},
           Case{"40 Gb/sec (4X QDR)\n", 40, "4X QDR", 5e9},
           Case{"0 GB/sec", 0, "", 0},  // procfs' own test case
       }) {
    auto rate = ParsePortRate(c.text);
    ASSERT_TRUE(rate) << c.text;
    EXPECT_DOUBLE_EQ(rate->gigabits_per_second, c.gigabits) << c.text;
    EXPECT_EQ(rate->width_and_speed, c.width) << c.text;
    // The lanes and the rate class apart: rail_port_info's width and speed labels.
    const std::string width_and_speed = c.width;
    const std::size_t gap = width_and_speed.find(' ');
    EXPECT_EQ(rate->width, width_and_speed.substr(0, gap)) << c.text;
    EXPECT_EQ(rate->speed, gap == std::string::npos ? "" : width_and_speed.substr(gap + 1))
        << c.text;
    EXPECT_DOUBLE_EQ(rate->BytesPerSecond(), c.bytes_per_second) << c.text;
  }
}

TEST(ParsePortRate, MatchesNodeExporterPerGigabit) {
  // node_exporter exports 125000000 bytes/s per Gb/s of rate.
  auto rate = ParsePortRate("1 Gb/sec (1X SDR)");
  ASSERT_TRUE(rate);
  EXPECT_DOUBLE_EQ(rate->BytesPerSecond(), 125000000.0);
}

TEST(ParsePortRate, RejectsMalformedText) {
  EXPECT_FALSE(ParsePortRate("fast"));
  EXPECT_FALSE(ParsePortRate("100"));
  EXPECT_FALSE(ParsePortRate("100 Mb/sec"));
  EXPECT_FALSE(ParsePortRate("100 Gb/sec (2X HDR"));
  EXPECT_FALSE(ParsePortRate("100 Gb/sec junk"));
  EXPECT_FALSE(ParsePortRate("-1 Gb/sec"));
  EXPECT_FALSE(ParsePortRate("inf Gb/sec"));
  EXPECT_FALSE(ParsePortRate(""));
}

TEST(ParseCounterText, NoPmaIsNotAvailableNotAnError) {
  for (const char* text : {"N/A (no PMA)\n", "N/A (no PMA)"}) {
    auto counter = ParseCounterText(text);
    ASSERT_TRUE(counter) << text;
    EXPECT_TRUE(counter->not_available) << text;
    EXPECT_FALSE(counter->value) << text;
  }
}

TEST(ParseCounterText, NumbersAndGarbage) {
  auto counter = ParseCounterText("4294967295\n");
  ASSERT_TRUE(counter);
  EXPECT_FALSE(counter->not_available);
  EXPECT_EQ(counter->value, 4294967295u);
  EXPECT_EQ(ParseCounterText("42")->value, 42u);
  EXPECT_FALSE(ParseCounterText("garbage"));
  EXPECT_FALSE(ParseCounterText(""));
}

TEST(IsSaturated, PegsAtMaximumOfEachWidth) {
  EXPECT_TRUE(IsSaturated(15, 4));
  EXPECT_FALSE(IsSaturated(14, 4));
  EXPECT_TRUE(IsSaturated(255, 8));
  EXPECT_FALSE(IsSaturated(254, 8));
  EXPECT_TRUE(IsSaturated(65535, 16));
  EXPECT_FALSE(IsSaturated(65534, 16));
  EXPECT_TRUE(IsSaturated(4294967295u, 32));
  EXPECT_FALSE(IsSaturated(4294967294u, 32));
  EXPECT_FALSE(IsSaturated(4294967295u, 64));
  EXPECT_TRUE(IsSaturated(std::numeric_limits<std::uint64_t>::max(), 64));
  // Above the maximum the counter is evidently wider than assumed, not pegged.
  EXPECT_FALSE(IsSaturated(16, 4));
  EXPECT_FALSE(IsSaturated(0, 0));
}

TEST(ParseGid, LinkLocalGid) {
  auto gid = ParseGid("fe80:0000:0000:0000:32c5:99ff:fe3e:6a13\n");
  ASSERT_TRUE(gid);
  EXPECT_EQ(gid->bytes[0], 0xfe);
  EXPECT_EQ(gid->bytes[1], 0x80);
  EXPECT_EQ(gid->bytes[15], 0x13);
  EXPECT_FALSE(gid->IsEmpty());
  EXPECT_FALSE(gid->Ipv4());
  EXPECT_EQ(gid->ToString(), "fe80:0000:0000:0000:32c5:99ff:fe3e:6a13");
}

TEST(ParseGid, Ipv4MappedGidDecodesAddress) {
  auto gid = ParseGid("0000:0000:0000:0000:0000:ffff:c0a8:640b");
  ASSERT_TRUE(gid);
  EXPECT_EQ(gid->Ipv4(), "192.168.100.11");
  EXPECT_FALSE(gid->IsEmpty());
  EXPECT_TRUE(gid->IsIpv4Mapped());
  EXPECT_EQ(ParseGid("0000:0000:0000:0000:0000:ffff:0a0a:000b")->Ipv4(), "10.10.0.11");
  EXPECT_EQ(ParseGid("0000:0000:0000:0000:0000:ffff:ffff:ff00")->Ipv4(), "255.255.255.0");
  EXPECT_EQ(ParseGid("0000:0000:0000:0000:0000:ffff:0000:0000")->Ipv4(), "0.0.0.0");
  EXPECT_FALSE(ParseGid("0000:0000:0000:0000:0000:fffe:c0a8:640b")->IsIpv4Mapped());
  // Not mapped: fffe instead of ffff, or a non-zero byte before it.
  EXPECT_FALSE(ParseGid("0000:0000:0000:0000:0000:fffe:c0a8:640b")->Ipv4());
  EXPECT_FALSE(ParseGid("0000:0000:0000:0000:0001:ffff:c0a8:640b")->Ipv4());
}

TEST(ParseGid, AllZeroIsAnEmptySlot) {
  auto gid = ParseGid("0000:0000:0000:0000:0000:0000:0000:0000\n");
  ASSERT_TRUE(gid);
  EXPECT_TRUE(gid->IsEmpty());
  EXPECT_FALSE(gid->Ipv4());
}

TEST(ParseGid, UpperCaseIsPrintedLowerCase) {
  auto gid = ParseGid("FE80:0000:0000:0000:32C5:99FF:FE3E:6A13");
  ASSERT_TRUE(gid);
  EXPECT_EQ(gid->ToString(), "fe80:0000:0000:0000:32c5:99ff:fe3e:6a13");
}

TEST(ParseGid, RejectsMalformedText) {
  EXPECT_FALSE(ParseGid("fe80:0000:0000:0000:32c5:99ff:fe3e"));            // seven groups
  EXPECT_FALSE(ParseGid("fe80:0000:0000:0000:32c5:99ff:fe3e:6a13:0000"));  // nine groups
  EXPECT_FALSE(ParseGid("fe80::32c5:99ff:fe3e:6a13"));                     // compressed
  EXPECT_FALSE(ParseGid("fe80:000:0000:0000:32c5:99ff:fe3e:6a13"));        // short group
  EXPECT_FALSE(ParseGid("zz80:0000:0000:0000:32c5:99ff:fe3e:6a13"));
  EXPECT_FALSE(ParseGid("+e80:0000:0000:0000:32c5:99ff:fe3e:6a13"));
  EXPECT_FALSE(ParseGid(""));
}

TEST(ParseGidType, KernelStrings) {
  EXPECT_EQ(ParseGidType("IB/RoCE v1\n"), GidType::kIbRoceV1);
  EXPECT_EQ(ParseGidType("RoCE v2"), GidType::kRoceV2);
  EXPECT_EQ(ParseGidType("RoCE v3\n"), GidType::kUnknown);
  EXPECT_EQ(ParseGidType(""), GidType::kUnknown);
  EXPECT_STREQ(GidTypeLabel(GidType::kIbRoceV1), "IB/RoCE v1");
  EXPECT_STREQ(GidTypeLabel(GidType::kRoceV2), "RoCE v2");
  EXPECT_STREQ(GidTypeLabel(GidType::kUnknown), "unknown");
}

}  // namespace
}  // namespace rail::sysfs
