#include "generator/network_generator.hpp"

#include "util/error.hpp"

namespace dpointnet {
void generate_network(const GeneratorOptions&) { throw InputError("generate: not implemented yet"); }
}  // namespace dpointnet
