// Placeholder until the OpenMP adapter lands.
#include "adapters/adapter.hpp"
