#include "dtperf/cluster.hpp"

namespace dtperf {

}  // namespace dtperf
