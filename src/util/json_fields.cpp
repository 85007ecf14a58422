#include "dpointnet/util/json_fields.hpp"

namespace dpointnet::fields {

std::string join(const std::vector<std::string>& names, const std::string& sep, const std::string& last) {
  std::string s;
  for (std::size_t k = 0; k < names.size(); ++k) s += (k == 0 ? "" : k + 1 == names.size() ? last : sep) + names[k];
  return s;
}

std::string unsupported(const std::string& value, const std::vector<std::string>& names) {
  return "\"" + value + "\" is not supported (" + join(names, ", ", " or ") + ")";
}

}  // namespace dpointnet::fields
