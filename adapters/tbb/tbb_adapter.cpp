// Placeholder until the oneTBB adapter lands.
#include "adapters/adapter.hpp"
