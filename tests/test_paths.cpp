#include "test_paths.hpp"

namespace dpointnet::test {

const char* configured_test_data_dir() { return DPOINTNET_TEST_DATA_DIR; }
const char* configured_source_dir() { return DPOINTNET_SOURCE_DIR; }

}  // namespace dpointnet::test
