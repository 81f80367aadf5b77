// The main() of every tvm_cc_test: googletest's own main, and the test filter
// in effect recorded in the XML report (an attribute of <testsuites>,
// googletest's place for a property recorded outside any test). A run narrowed
// by GTEST_FILTER, --gtest_filter or Bazel's
// --test_filter then shows it, and tools/verdict labels the run partial.
#include <gtest/gtest.h>

#include <string>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  testing::Test::RecordProperty("gtest_filter",
                                std::string(GTEST_FLAG_GET(filter)));
  return RUN_ALL_TESTS();
}
