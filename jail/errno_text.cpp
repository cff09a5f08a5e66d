#include "jail/layers.h"

#include <cstring>

namespace cmcp::jail {

std::string errnoText(const std::string &what, int err)
{
    return what + ": " + std::strerror(err);
}

} // namespace cmcp::jail
