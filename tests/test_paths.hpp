// Where the source tree is, as configured. Only tests/test_paths.cpp is compiled with the paths, so that the
// objects of the other test files do not depend on the clone's folder (a compiler cache serves clones anywhere).
#pragma once

namespace dpointnet::test {

const char* configured_test_data_dir();  // <source>/tests/data
const char* configured_source_dir();     // the repository root

}  // namespace dpointnet::test
